// kafkajs round trip for test_storage_clients.py: create a topic (admin),
// produce the given records with each compression to its own partition,
// read them back with kafkajs's own Fetch and record decoding, list offsets
// (earliest, latest, by time) and delete the topic. Prints one JSON line.
//
// usage: node storage_roundtrip.js            (spec: one JSON line on stdin)
//        node storage_roundtrip.js --codecs   (prints the usable codecs)
// After reading back it prints the result line and, when the spec says
// "waitBeforeDelete", waits for one more stdin line before deleting the
// topic (so that the caller can inspect what is stored), then prints
// {"deleted": true}.
// spec: {broker, topic, codecs: ["none", "gzip", ...], timeoutMs,
//        topicConfigs: {name: value}, queryTimestamp,
//        records: [{key, value (base64 or null), headers: {k: base64},
//                   timestamp: ms}]}
//
// kafkajs has no consumer without a consumer group (which samsa-server does
// not serve yet), so records are read with the broker-level fetch of the
// cluster that kafkajs builds for its own consumer: the same request,
// response and record decoding code.
'use strict';
const kafkajs = require('kafkajs');
const { Kafka, logLevel, CompressionTypes, CompressionCodecs } = kafkajs;

const CODEC_TYPES = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};
// kafkajs ships only gzip; the packages.json's codec packages add the rest
// (kafkajs_codecs.js).  A codec that still does not work is reported as
// unusable, and test_storage_clients fails on it.
function usableCodecs() {
  const out = { usable: ['none'], unusable: {} };
  let registerError = null;
  try {
    require('./kafkajs_codecs').register(CompressionTypes, CompressionCodecs);
  } catch (e) {
    registerError = String(e.message || e);
  }
  for (const name of ['gzip', 'snappy', 'lz4', 'zstd']) {
    try {
      CompressionCodecs[CODEC_TYPES[name]]();
      out.usable.push(name);
    } catch (e) {
      out.unusable[name] = String(e.message || e) +
        (registerError ? ' (codec packages: ' + registerError + ')' : '');
    }
  }
  return out;
}

function b64(buf) {
  return buf === null || buf === undefined ? null : Buffer.from(buf).toString('base64');
}

function unb64(s) {
  return s === null || s === undefined ? null : Buffer.from(s, 'base64');
}

const readline = require('readline');
const stdinLines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function nextLine() {
  const r = await stdinLines.next();
  if (r.done) throw new Error('stdin closed');
  return r.value;
}

async function fetchAll(cluster, topic, partition, end, timeoutMs) {
  await cluster.refreshMetadata();
  const leaders = cluster.findLeaderForPartitions(topic, [partition]);
  const nodeId = Object.keys(leaders)[0];
  const broker = await cluster.findBroker({ nodeId });
  const out = [];
  let offset = 0;
  const deadline = Date.now() + timeoutMs;
  while (offset < end) {
    if (Date.now() > deadline) throw new Error(`fetch of partition ${partition} stuck at ${offset}`);
    const resp = await broker.fetch({
      maxWaitTime: 100,
      minBytes: 1,
      maxBytes: 8 << 20,
      topics: [{ topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes: 4 << 20 }] }],
    });
    const p = resp.responses[0].partitions[0];
    if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode} on partition ${partition}`);
    for (const m of p.messages) {
      if (Number(m.offset) < offset) continue;
      const headers = [];
      for (const [k, v] of Object.entries(m.headers || {})) {
        for (const one of Array.isArray(v) ? v : [v]) headers.push([k, b64(one)]);
      }
      out.push({ offset: Number(m.offset), key: b64(m.key), value: b64(m.value), headers,
                 timestamp: Number(m.timestamp), attributes: m.attributes });
      offset = Number(m.offset) + 1;
    }
    if (p.messages.length === 0) break;
  }
  return out;
}

async function main() {
  if (process.argv[2] === '--codecs') {
    process.stdout.write(JSON.stringify(usableCodecs()) + '\n');
    return;
  }
  const spec = JSON.parse(await nextLine());
  const codecs = usableCodecs();
  const timeoutMs = spec.timeoutMs || 20000;
  const kafka = new Kafka({
    clientId: 'samsa-it-storage',
    brokers: [spec.broker],
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.ERROR,
  });
  const result = { codecs, produced: [], records: {}, offsets: null, offsetsByTime: null };
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ allowAutoTopicCreation: false,
                                    createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
  let cluster = null;
  try {
    const configEntries = Object.entries(spec.topicConfigs || {}).map(([name, value]) => ({ name, value }));
    result.created = await admin.createTopics({
      topics: [{ topic: spec.topic, numPartitions: spec.codecs.length, replicationFactor: 1, configEntries }],
      waitForLeaders: true,
      timeout: timeoutMs,
    });
    await producer.connect();
    const messages = spec.records.map((r) => {
      const m = { key: unb64(r.key), value: unb64(r.value), timestamp: String(r.timestamp) };
      if (r.headers && Object.keys(r.headers).length) {
        m.headers = {};
        for (const [k, v] of Object.entries(r.headers)) m.headers[k] = unb64(v);
      }
      return m;
    });
    for (let i = 0; i < spec.codecs.length; i++) {
      const name = spec.codecs[i];
      const res = await producer.send({
        topic: spec.topic,
        acks: -1,
        timeout: timeoutMs,
        compression: CODEC_TYPES[name],
        messages: messages.map((m) => ({ ...m, partition: i })),
      });
      result.produced.push({ codec: name, partition: i, result: res });
    }
    const sym = Object.getOwnPropertySymbols(kafka).find((s) => String(s).includes('createCluster'));
    cluster = kafka[sym]({ allowAutoTopicCreation: false });
    await cluster.connect();
    await cluster.addTargetTopic(spec.topic);
    for (let i = 0; i < spec.codecs.length; i++) {
      result.records[i] = await fetchAll(cluster, spec.topic, i, spec.records.length, timeoutMs);
    }
    result.offsets = await admin.fetchTopicOffsets(spec.topic);
    result.offsetsByTime = await admin.fetchTopicOffsetsByTimestamp(spec.topic, spec.queryTimestamp);
    result.offsetsAfterAll = await admin.fetchTopicOffsetsByTimestamp(spec.topic, spec.lateTimestamp);
    process.stdout.write(JSON.stringify(result) + '\n');
    if (spec.waitBeforeDelete) await nextLine();
    await admin.deleteTopics({ topics: [spec.topic], timeout: timeoutMs });
    process.stdout.write(JSON.stringify({ deleted: true }) + '\n');
  } finally {
    if (cluster) await cluster.disconnect();
    await producer.disconnect();
    await admin.disconnect();
  }
}

const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(3);
}, parseInt(process.env.KAFKAJS_SCRIPT_TIMEOUT_MS || '60000', 10));

main().then(() => {
  clearTimeout(timer);
  process.exit(0);
}).catch((e) => {
  console.error('kafkajs error: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
