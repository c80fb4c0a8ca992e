// kafkajs over a secured listener: create the topic, produce 10 messages, read them back in a consumer group.
// usage: NODE_PATH=<dir>/node_modules node secured.js LISTENERS DIR SETUP  (as secured.py: LISTENERS is strata's
// ready-line value, DIR holds ca.pem/client.pem/client-key.pem, SETUP one of ssl-client-cert, sasl_ssl-plain,
// sasl_ssl-scram-sha-256, sasl_ssl-scram-sha-512, sasl_plaintext-plain)
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

const [listeners, dir, setup] = process.argv.slice(2);
const addr = Object.fromEntries(listeners.split(',').map((l) => l.split('://')));
const users = {
  plain: ['alice', 'alice-secret'],
  'scram-sha-256': ['sam', 'sam-secret'],
  'scram-sha-512': ['sue', 'sue-secret'],
};
const N = 10;

function fail(msg) {
  console.error(`kafkajs ${setup}: ${msg}`);
  process.exit(1);
}

function config() {
  const ca = [fs.readFileSync(`${dir}/ca.pem`, 'utf8')];
  if (setup === 'ssl-client-cert') {
    return {
      brokers: [addr.MTLS],
      ssl: { ca, cert: fs.readFileSync(`${dir}/client.pem`, 'utf8'), key: fs.readFileSync(`${dir}/client-key.pem`, 'utf8') },
    };
  }
  const [protocol, mechanism] = [setup.slice(0, setup.indexOf('-')), setup.slice(setup.indexOf('-') + 1)];
  const [username, password] = users[mechanism];
  const c = {
    brokers: [protocol === 'sasl_ssl' ? addr.SASLSSL : addr.SASLPLAIN],
    sasl: { mechanism, username, password },
  };
  if (protocol === 'sasl_ssl') c.ssl = { ca };
  return c;
}

async function main() {
  const kafka = new Kafka({ clientId: 'strata-secured', logLevel: logLevel.WARN, ...config() });
  const topic = `sec-kjs-${setup}-${Math.random().toString(16).slice(2, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
  await admin.disconnect();
  const want = Array.from({ length: N }, (_, i) => `kafkajs-${setup}-${i}`);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: want.map((value) => ({ value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${got.length} of ${N}`)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message.value.toString());
        if (got.length === N) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(`read ${JSON.stringify(got)}`);
  console.log(`kafkajs ${setup}: ${N} messages produced and read back`);
}

main().catch((e) => fail(e.stack || e));
