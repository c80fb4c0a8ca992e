// Interop check for @platformatic/kafka, a pure-JavaScript client that implements only Kafka 3.5+'s newest API
// versions (Produce v9-11, Fetch v15-17 by topic id, ListOffsets v8-9, OffsetCommit/OffsetFetch v8-9, Metadata
// v12, CreateTopics v7, DeleteTopics v6, DescribeConfigs v4): create a topic, produce keyed messages, consume
// them in a consumer group, commit, read the committed offsets and the partition offsets back, describe the
// topic's configs, delete the topic.
// usage: NODE_PATH=<dir>/node_modules node platformatic-check.js BOOTSTRAP
const {
  Admin, Producer, Consumer, Connection, ProduceAcks, stringSerializers, stringDeserializers, describeConfigsV4,
} = require('@platformatic/kafka');

const N = 200;
const PARTITIONS = 3;
const bootstrap = process.argv[2];
const [host, port] = [bootstrap.slice(0, bootstrap.lastIndexOf(':')), Number(bootstrap.slice(bootstrap.lastIndexOf(':') + 1))];

// Every (API key, version) this client sends, printed at the end: the versions it speaks.
const sent = new Map();
const send = Connection.prototype.send;
Connection.prototype.send = function (apiKey, apiVersion, ...rest) {
  sent.set(`${apiKey}v${apiVersion}`, (sent.get(`${apiKey}v${apiVersion}`) || 0) + 1);
  return send.call(this, apiKey, apiVersion, ...rest);
};

function fail(msg) {
  console.error(`platformatic: ${msg}`);
  process.exit(1);
}

async function describeTopicConfigs(topic) {
  const conn = new Connection('strata-interop-platformatic');
  await conn.connect(host, port);
  try {
    // ConfigResource type 2 = TOPIC. Without synonyms: 1.20.0's v4 parser does not skip the synonyms' tagged
    // fields (its readArray(..., true, false)), so it misreads any response that has synonyms, Kafka's too.
    const res = await describeConfigsV4.api.async(
      conn, [{ resourceType: 2, resourceName: topic, configurationKeys: null }], false, true,
    );
    return res.results[0];
  } finally {
    await conn.close();
  }
}

async function main() {
  const watchdog = setTimeout(() => fail('timed out after 150 s'), 150000);
  const common = { clientId: 'strata-interop-platformatic', bootstrapBrokers: [bootstrap] };
  const topic = `plt-${Math.random().toString(16).slice(2, 10)}`;
  const group = `${topic}-group`;
  const admin = new Admin(common);
  const created = await admin.createTopics({ topics: [topic], partitions: PARTITIONS, replicas: 1 });
  if (created.length !== 1 || created[0].name !== topic) fail(`createTopics returned ${JSON.stringify(created)}`);
  if (!(await admin.listTopics()).includes(topic)) fail(`listTopics lacks ${topic}`);

  const described = await describeTopicConfigs(topic);
  if (described.errorCode !== 0) fail(`describeConfigs error ${described.errorCode}: ${described.errorMessage}`);
  const retention = described.configs.find((c) => c.name === 'retention.ms');
  if (!retention || retention.value !== '604800000') fail(`retention.ms is ${JSON.stringify(retention)}`);

  const producer = new Producer({ ...common, serializers: stringSerializers, acks: ProduceAcks.ALL });
  const messages = [];
  for (let i = 0; i < N; i++) messages.push({ topic, key: `key-${i}`, value: `value-${i}`, partition: i % PARTITIONS });
  await producer.send({ messages });
  await producer.close();

  const consumer = new Consumer({
    ...common, groupId: group, deserializers: stringDeserializers, maxWaitTime: 500,
  });
  const offsets = await consumer.listOffsets({ topics: [topic] });
  const ends = offsets.get(topic);
  if (!ends || ends.reduce((a, b) => a + Number(b), 0) !== N) fail(`listOffsets: ${ends}`);

  const stream = await consumer.consume({
    topics: [topic], mode: 'earliest', autocommit: false, sessionTimeout: 10000, heartbeatInterval: 500,
  });
  const got = new Map();
  for await (const message of stream) {
    got.set(message.key, message.value);
    await message.commit();
    if (got.size >= N) break;
  }
  for (let i = 0; i < N; i++) {
    if (got.get(`key-${i}`) !== `value-${i}`) fail(`message ${i} differs: ${got.get(`key-${i}`)}`);
  }
  // This client commits the offset of the last message consumed (not the next one, as the Java client does) and
  // resumes after it: each partition's commit is its last offset.
  const committed = (await consumer.listCommittedOffsets({ topics: [{ topic, partitions: [0, 1, 2] }] })).get(topic);
  for (let p = 0; p < PARTITIONS; p++) {
    if (Number(committed[p]) !== Number(ends[p]) - 1) fail(`partition ${p} committed ${committed[p]}, end ${ends[p]}`);
  }
  await stream.close();
  await consumer.close(true);

  const groups = await admin.listGroups();
  if (!groups.has(group)) fail(`listGroups lacks ${group}: ${[...groups.keys()]}`);
  await admin.deleteTopics({ topics: [topic] });
  const deadline = Date.now() + 20000;
  while ((await admin.listTopics()).includes(topic)) {
    if (Date.now() > deadline) fail(`${topic} still listed after deleteTopics`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await admin.close();
  clearTimeout(watchdog);
  console.log(`platformatic: sent (api key v version: requests) ${[...sent].map(([k, n]) => `${k}:${n}`).join(' ')}`);
  console.log('platformatic: ok');
}

main().catch((e) => fail(e.stack || String(e)));
