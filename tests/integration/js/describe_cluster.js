// Prints kafkajs admin.describeCluster() as one JSON line.
// usage: node describe_cluster.js <host:port> [timeoutMs]
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const broker = process.argv[2];
const timeoutMs = parseInt(process.argv[3] || '10000', 10);
if (!broker) {
  console.error('usage: node describe_cluster.js <host:port> [timeoutMs]');
  process.exit(2);
}

const timer = setTimeout(() => {
  console.error('timed out after ' + timeoutMs + ' ms');
  process.exit(3);
}, timeoutMs);

async function main() {
  const kafka = new Kafka({
    clientId: 'samsa-it-kafkajs',
    brokers: [broker],
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 2, initialRetryTime: 100 },
    logLevel: logLevel.ERROR,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    process.stdout.write(JSON.stringify(cluster) + '\n');
  } finally {
    await admin.disconnect();
  }
}

main().then(() => {
  clearTimeout(timer);
  process.exit(0);
}).catch((e) => {
  console.error('kafkajs error: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
