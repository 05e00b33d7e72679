// kafkajs producer for test_consumer.py: send the given records to one
// partition per codec of an existing topic, one send() per codec (one
// batch).  Prints {"codecs": {usable, unusable}, "sent": {codec: n}}.
// spec on stdin (one JSON line): {broker, topic, codecs: [..],
//   records: [{key, value (base64 or null), headers: [[k, base64|null]]}]}
// The partition of codec i is i.
'use strict';
const kafkajs = require('kafkajs');
const { Kafka, logLevel, CompressionTypes, CompressionCodecs } = kafkajs;
require('./kafkajs_codecs').register(CompressionTypes, CompressionCodecs);

const CODEC_TYPES = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

function usable(name) {
  try {
    CompressionCodecs[CODEC_TYPES[name]]();
    return null;
  } catch (e) {
    return String(e.message || e);
  }
}

function unb64(s) {
  return s === null || s === undefined ? null : Buffer.from(s, 'base64');
}

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const spec = JSON.parse(input.split('\n')[0]);
  const kafka = new Kafka({ clientId: 'samsa-it-consumer', brokers: [spec.broker],
                            logLevel: logLevel.ERROR,
                            retry: { retries: 5, initialRetryTime: 100 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const out = { codecs: { usable: [], unusable: {} }, sent: {} };
  for (let i = 0; i < spec.codecs.length; i++) {
    const name = spec.codecs[i];
    if (name !== 'none') {
      const why = usable(name);
      if (why !== null) {
        out.codecs.unusable[name] = why;
        continue;
      }
    }
    out.codecs.usable.push(name);
    const messages = spec.records.map((r) => {
      const m = { key: unb64(r.key), value: unb64(r.value), partition: i };
      if (r.headers.length) {
        m.headers = {};
        for (const [k, v] of r.headers) m.headers[Buffer.from(k, 'base64').toString()] = unb64(v);
      }
      return m;
    });
    await producer.send({ topic: spec.topic, compression: CODEC_TYPES[name], messages });
    out.sent[name] = messages.length;
  }
  await producer.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { process.stderr.write(String(e.stack || e) + '\n'); process.exit(1); });
