// kafkajs group consumer for test_groups.py.  Subscribes to one topic in a
// consumer group and prints one JSON line per event on stdout:
//   {"assigned": [partitions]}           after each join (GROUP_JOIN)
//   {"p": partition, "o": offset, "v": value}   per record
//   {"closed": true}                    after disconnect
// Offsets are committed after every record (autoCommitThreshold 1) and on
// disconnect.  A line "stop" on stdin disconnects and exits.
//
// usage: node group_consumer.js <broker> <group> <topic> [sessionTimeoutMs]
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [broker, groupId, topic, session] = process.argv.slice(2);
const kafka = new Kafka({
  clientId: 'samsa-kafkajs-group',
  brokers: [broker],
  logLevel: logLevel.NOTHING,
  retry: { retries: 10, initialRetryTime: 100 },
});
const consumer = kafka.consumer({
  groupId,
  sessionTimeout: Number(session || 10000),
  heartbeatInterval: 500,
  rebalanceTimeout: 10000,
  maxWaitTimeInMs: 200,
});

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function main() {
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    const parts = (e.payload.memberAssignment[topic] || []).slice().sort();
    out({ assigned: parts });
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    autoCommitThreshold: 1,
    eachMessage: async ({ partition, message }) => {
      out({ p: partition, o: Number(message.offset),
            v: message.value === null ? null : message.value.toString() });
    },
  });
  let buf = '';
  process.stdin.on('data', async (d) => {
    buf += d.toString();
    if (buf.includes('stop')) {
      buf = '';
      await consumer.disconnect();
      out({ closed: true });
      process.exit(0);
    }
  });
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
