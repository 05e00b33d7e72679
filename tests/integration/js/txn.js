// kafkajs transactions for test_txn.py: one committed transaction with the
// group's offsets (sendOffsets), one aborted; prints one JSON line.
// usage: node txn.js <broker> <topic> <offsets topic> <group>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [broker, topic, inTopic, group] = process.argv.slice(2);
const kafka = new Kafka({ clientId: 'samsa-kafkajs-txn', brokers: [broker],
                          logLevel: logLevel.NOTHING });

async function main() {
  const producer = kafka.producer({ transactionalId: 'js-txn',
                                    idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const t1 = await producer.transaction();
  await t1.send({ topic, messages: [{ value: 'c0', partition: 0 },
                                    { value: 'c1', partition: 0 }] });
  await t1.sendOffsets({ consumerGroupId: group,
                         topics: [{ topic: inTopic,
                                    partitions: [{ partition: 0,
                                                   offset: '5' }] }] });
  await t1.commit();
  const t2 = await producer.transaction();
  await t2.send({ topic, messages: [{ value: 'a0', partition: 0 }] });
  await t2.abort();
  await producer.disconnect();
  console.log(JSON.stringify({ ok: true }));
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exit(1);
});
