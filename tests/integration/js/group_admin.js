// kafkajs admin calls on groups for test_groups.py: prints one JSON line.
// usage: node group_admin.js <broker> list
//        node group_admin.js <broker> describe <group>
//        node group_admin.js <broker> offsets <group> <topic>
//        node group_admin.js <broker> delete <group>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [broker, op, group, topic] = process.argv.slice(2);
const admin = new Kafka({ clientId: 'samsa-kafkajs-admin', brokers: [broker],
                          logLevel: logLevel.NOTHING }).admin();

async function main() {
  await admin.connect();
  let res;
  if (op === 'list') {
    res = await admin.listGroups();
  } else if (op === 'describe') {
    const d = await admin.describeGroups([group]);
    res = { groups: d.groups.map((g) => ({
      groupId: g.groupId, state: g.state, protocol: g.protocol,
      protocolType: g.protocolType,
      members: g.members.map((m) => ({ memberId: m.memberId,
                                       clientId: m.clientId,
                                       clientHost: m.clientHost })) })) };
  } else if (op === 'offsets') {
    res = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  } else if (op === 'delete') {
    try {
      res = await admin.deleteGroups([group]);
    } catch (e) {
      res = { error: e.type || e.name, groups: e.groups || [] };
    }
  }
  process.stdout.write(JSON.stringify(res) + '\n');
  await admin.disconnect();
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
