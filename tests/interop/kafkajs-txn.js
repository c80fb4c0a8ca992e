// Transactional interop check for kafkajs against a running strata broker: a transactional producer commits
// COMMITTED messages over two partitions and aborts ABORTED more, then sends a consumer group's offset to a third
// transaction (consume-transform-produce) and commits it. A read_committed consumer (kafkajs' default) must see
// exactly the committed messages, and the group's committed offset must be the one sent to the transaction.
// usage: NODE_PATH=<dir>/node_modules node kafkajs-txn.js BOOTSTRAP
const { Kafka, logLevel } = require('kafkajs');

const COMMITTED = 20;
const ABORTED = 7;
const PARTITIONS = 2;
const bootstrap = process.argv[2];

function fail(msg) {
  console.error(`kafkajs-txn: ${msg}`);
  process.exit(1);
}

async function main() {
  const kafka = new Kafka({ clientId: 'strata-interop-txn', brokers: [bootstrap], logLevel: logLevel.WARN });
  const suffix = Math.random().toString(16).slice(2, 10);
  const topic = `kjst-${suffix}`;
  const out = `kjst-out-${suffix}`;
  const group = `kjst-group-${suffix}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [topic, out].map((t) => ({ topic: t, numPartitions: PARTITIONS })) });

  const producer = kafka.producer({ transactionalId: `kjs-${suffix}`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const msgs = (prefix, n) => Array.from({ length: n }, (_, i) => ({ value: `${prefix}-${i}`, partition: i % PARTITIONS }));
  let txn = await producer.transaction();
  await txn.send({ topic, messages: msgs('committed', COMMITTED) });
  await txn.commit();
  txn = await producer.transaction();
  await txn.send({ topic, messages: msgs('aborted', ABORTED) });
  await txn.abort();
  txn = await producer.transaction();
  await txn.send({ topic: out, messages: [0, 1, 2].map((i) => ({ value: `ctp-${i}`, partition: 0 })) });
  await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 0, offset: '3' }] }] });
  await txn.commit();
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `kjst-reader-${suffix}`, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await consumer.run({ eachMessage: async ({ message }) => { got.push(message.value.toString()); } });
  const deadline = Date.now() + 30000;
  while (got.length < COMMITTED && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1000)); // anything aborted would arrive now
  await consumer.disconnect();
  got.sort();
  const want = msgs('committed', COMMITTED).map((m) => m.value).sort();
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(`read_committed saw ${got.length}: ${got.slice(0, 5)}...`);

  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const p0 = offsets[0].partitions.find((p) => p.partition === 0);
  if (!p0 || p0.offset !== '3') fail(`committed offset ${p0 && p0.offset}, expected 3`);
  await admin.deleteTopics({ topics: [topic, out] });
  await admin.disconnect();
  console.log('kafkajs-txn: ok');
}

main().catch((e) => fail(e.stack || String(e)));
