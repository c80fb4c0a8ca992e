// Interop check for kafkajs against a running strata broker: admin create/list/describe, produce N keyed
// messages, consume them in a consumer group, commit, read the committed offsets back.
// usage: NODE_PATH=<dir>/node_modules node kafkajs-check.js BOOTSTRAP
const { Kafka, logLevel, ConfigResourceTypes } = require('kafkajs');

const N = 200;
const PARTITIONS = 3;
const bootstrap = process.argv[2];

function fail(msg) {
  console.error(`kafkajs: ${msg}`);
  process.exit(1);
}

async function main() {
  const kafka = new Kafka({ clientId: 'strata-interop', brokers: [bootstrap], logLevel: logLevel.WARN });
  const topic = `kjs-${Math.random().toString(16).slice(2, 10)}`;
  const group = `${topic}-group`;
  const admin = kafka.admin();
  await admin.connect();
  const created = await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }] });
  if (!created) fail('createTopics returned false');
  const topics = await admin.listTopics();
  if (!topics.includes(topic)) fail(`listTopics lacks ${topic}`);
  const configs = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  if (!configs.resources[0].configEntries.some((e) => e.configName === 'retention.ms')) fail('no retention.ms');

  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < N; i++) messages.push({ key: `key-${i}`, value: `value-${i}` });
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = new Map();
  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });
  await consumer.run({
    autoCommit: true,
    autoCommitThreshold: 1,
    eachMessage: async ({ message }) => {
      got.set(message.key.toString(), message.value.toString());
      if (got.size >= N) resolveDone();
    },
  });
  const timer = setTimeout(() => fail(`timed out with ${got.size} of ${N} messages`), 60000);
  await done;
  clearTimeout(timer);
  for (let i = 0; i < N; i++) {
    if (got.get(`key-${i}`) !== `value-${i}`) fail(`message ${i} differs: ${got.get(`key-${i}`)}`);
  }
  // Wait until the auto-commit of the last offsets is visible.
  const deadline = Date.now() + 20000;
  let committed = 0;
  while (Date.now() < deadline) {
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    committed = offsets[0].partitions.reduce((s, p) => s + Math.max(0, Number(p.offset)), 0);
    if (committed === N) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await consumer.disconnect();
  if (committed !== N) fail(`committed offsets add up to ${committed}, expected ${N}`);
  const groups = await admin.listGroups();
  if (!groups.groups.some((g) => g.groupId === group)) fail(`listGroups lacks ${group}`);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  console.log('kafkajs: ok');
}

main().catch((e) => fail(e.stack || String(e)));
