// kafkajs idempotent producer for test_idempotence_clients.py: sends
// records "0".."n-1" to one topic in sends of `per` messages with
// { idempotent: true } (kafkajs then asks InitProducerId and numbers its
// batches) and prints one JSON line {"sent", "offsets": [[partition,
// baseOffset], ...]}.
//
// usage: node idempotent_produce.js BROKER TOPIC N PER TIMEOUT_MS
'use strict';
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [broker, topic, nStr, perStr, timeoutStr] = process.argv.slice(2);
  const n = Number(nStr), per = Number(perStr), timeoutMs = Number(timeoutStr);
  const kafka = new Kafka({ clientId: 'idem-js', brokers: [broker], logLevel: logLevel.NOTHING,
                            requestTimeout: timeoutMs, retry: { retries: 5 } });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const offsets = [];
  let sent = 0;
  while (sent < n) {
    const messages = [];
    for (let i = 0; i < per && sent + i < n; i++) {
      messages.push({ value: String(sent + i) });
    }
    const r = await producer.send({ topic, messages, acks: -1 });
    for (const m of r) {
      offsets.push([m.partition, Number(m.baseOffset)]);
    }
    sent += messages.length;
  }
  await producer.disconnect();
  process.stdout.write(JSON.stringify({ sent, offsets }) + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
