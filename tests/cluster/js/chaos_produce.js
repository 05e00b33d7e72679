// kafkajs producer for tests/cluster/chaos.py: idempotent, acks=all, one
// record per send, partitions in turn; each value is "js-<n>", never
// reused. Prints one JSON line per acknowledged record
// {"v": value, "p": partition, "o": offset, "seq": [...], "producer": k}
// and one per failed send {"err": message, "v": value, "p": partition,
// "seq": [...], "producer": k}; seq lists the first sequence number of each
// produce request kafkajs made for the send (its retries included), as
// kafkajs's own sendMessages set it (recorded by a wrapper around that
// module, below); k counts the producers: a failed send replaces the
// producer (see main). Stops when stdin closes, then prints
// {"done": n, "producers": k + 1}.
//
// usage: node chaos_produce.js BROKERS(comma list) TOPIC PARTITIONS TIMEOUT_MS
'use strict';
const path = require('path');
const KAFKAJS = path.join(__dirname, '..', '..', 'integration', 'js', 'node_modules', 'kafkajs');

// The sequence numbers of the current send's produce requests: kafkajs's
// src/producer/sendMessages.js is wrapped (through the module cache, before
// kafkajs loads it) so that each request's firstSequence is recorded.
let seqs = [];
{
  const file = require.resolve(path.join(KAFKAJS, 'src', 'producer', 'sendMessages.js'));
  const real = require(file);
  require.cache[file].exports = (opts) => {
    const eos = opts.eosManager;
    const wrapped = Object.create(eos);
    wrapped.getSequence = (topic, partition) => {
      const s = eos.getSequence(topic, partition);
      seqs.push(s);
      return s;
    };
    return real(Object.assign({}, opts, { eosManager: wrapped }));
  };
}
const { Kafka, logLevel } = require(KAFKAJS);

// A new idempotent producer (a new producer id) and its connection; retried
// until it connects or stop() says to give up (null then).
async function newProducer(kafka, stop) {
  while (!stop()) {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    try {
      await producer.connect();
      return producer;
    } catch (e) {
      try { await producer.disconnect(); } catch (e2) { /* never connected */ }
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  return null;
}

async function main() {
  const [brokers, topic, partsStr, timeoutStr] = process.argv.slice(2);
  const parts = Number(partsStr), timeoutMs = Number(timeoutStr);
  const kafka = new Kafka({ clientId: 'chaos-js', brokers: brokers.split(','),
                            logLevel: logLevel.NOTHING, requestTimeout: timeoutMs,
                            retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 } });
  let stop = false;
  process.stdin.on('end', () => { stop = true; });
  process.stdin.on('close', () => { stop = true; });
  process.stdin.resume();
  let producer = await newProducer(kafka, () => stop);
  let instance = 0;
  let n = 0;
  while (producer !== null && !stop) {
    const v = 'js-' + n;
    const p = n % parts;
    n++;
    seqs = [];
    try {
      const r = await producer.send({ topic, acks: -1, timeout: timeoutMs,
                                      messages: [{ value: v, partition: p }] });
      process.stdout.write(JSON.stringify({ v, p: r[0].partition, o: Number(r[0].baseOffset),
                                            seq: seqs, producer: instance }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ err: String((e && e.message) || e), v, p,
                                            seq: seqs, producer: instance }) + '\n');
      // kafkajs rolls the partition's sequence back when a send fails
      // (src/producer/sendMessages.js), though the broker may have written
      // the batch: its next send would reuse that sequence for other records
      // and be answered as a duplicate, with the failed batch's offset
      // (docs/REPLICATION.md, bug 5). The Java producer bumps its epoch
      // instead; here the producer is replaced by one with a new producer id.
      try { await producer.disconnect(); } catch (e2) { /* the cluster may be gone */ }
      await new Promise((res) => setTimeout(res, 200));
      producer = await newProducer(kafka, () => stop);
      instance++;
    }
  }
  if (producer !== null) {
    try { await producer.disconnect(); } catch (e) { /* the cluster may be gone */ }
  }
  process.stdout.write(JSON.stringify({ done: n, producers: instance + 1 }) + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
