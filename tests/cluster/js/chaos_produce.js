// kafkajs producer for tests/cluster/chaos.py: idempotent, acks=all, one
// record per send, partitions in turn; each value is "js-<n>", never
// reused. Prints one JSON line per acknowledged record
// {"v": value, "p": partition, "o": offset} and one per failed send
// {"err": message}. Stops when stdin closes, then prints {"done": n}.
//
// usage: node chaos_produce.js BROKERS(comma list) TOPIC PARTITIONS TIMEOUT_MS
'use strict';
const path = require('path');
const { Kafka, logLevel } = require(path.join(__dirname, '..', '..', 'integration', 'js',
                                              'node_modules', 'kafkajs'));

async function main() {
  const [brokers, topic, partsStr, timeoutStr] = process.argv.slice(2);
  const parts = Number(partsStr), timeoutMs = Number(timeoutStr);
  const kafka = new Kafka({ clientId: 'chaos-js', brokers: brokers.split(','),
                            logLevel: logLevel.NOTHING, requestTimeout: timeoutMs,
                            retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 } });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let stop = false;
  process.stdin.on('end', () => { stop = true; });
  process.stdin.on('close', () => { stop = true; });
  process.stdin.resume();
  await producer.connect();
  let n = 0;
  while (!stop) {
    const v = 'js-' + n;
    const p = n % parts;
    n++;
    try {
      const r = await producer.send({ topic, acks: -1, timeout: timeoutMs,
                                      messages: [{ value: v, partition: p }] });
      process.stdout.write(JSON.stringify({ v, p: r[0].partition,
                                            o: Number(r[0].baseOffset) }) + '\n');
    } catch (e) {
      process.stdout.write(JSON.stringify({ err: String((e && e.message) || e) }) + '\n');
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  try { await producer.disconnect(); } catch (e) { /* the cluster may be gone */ }
  process.stdout.write(JSON.stringify({ done: n }) + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
