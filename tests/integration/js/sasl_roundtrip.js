// kafkajs over SASL: produce 10 values to a topic and read them back, as
// one JSON line {"got": [...]}.
// usage: node sasl_roundtrip.js <host:port> <mechanism> <user> <password>
//                               <topic> <ca.pem or ""> [timeoutMs]
'use strict';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

const [broker, mechanism, username, password, topic, ca] =
  process.argv.slice(2, 8);
const timeoutMs = parseInt(process.argv[8] || '30000', 10);
const timer = setTimeout(() => {
  console.error('timed out after ' + timeoutMs + ' ms');
  process.exit(3);
}, timeoutMs);

async function main() {
  const kafka = new Kafka({
    clientId: 'samsa-it-kafkajs-sasl',
    brokers: [broker],
    ssl: ca ? { ca: [fs.readFileSync(ca, 'utf-8')],
                rejectUnauthorized: true, servername: 'localhost' } : false,
    sasl: { mechanism: mechanism.toLowerCase(), username, password },
    connectionTimeout: 10000,
    requestTimeout: 10000,
    retry: { retries: 2, initialRetryTime: 100 },
    logLevel: logLevel.ERROR,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const values = [...Array(10).keys()].map((i) => 'v' + i);
  await producer.send({ topic, messages: values.map((value) => ({ value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: topic + '-g' });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message.value.toString());
        if (got.length >= values.length) {
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  process.stdout.write(JSON.stringify({ got }) + '\n');
}

main().then(() => {
  clearTimeout(timer);
  process.exit(0);
}).catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
