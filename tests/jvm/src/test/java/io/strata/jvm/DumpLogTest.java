package io.strata.jvm;

import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's own reader (kafka-dump-log, {@code org.apache.kafka.tools.DumpLogSegments}) over a data dir strata wrote
 * and closed cleanly: segments with deep iteration, offset and time indexes with the sanity check, the
 * transaction index, producer snapshots, and {@code __consumer_offsets} / {@code __transaction_state} through
 * their decoders; {@code __remote_log_metadata} through the remote log metadata decoder, and read live by the
 * console consumer with Kafka's {@code RemoteLogMetadataFormatter} (strata writes Kafka's serialization, issue 34).
 */
class DumpLogTest {
  static final String DUMP = "org.apache.kafka.tools.DumpLogSegments";

  @TempDir Path tmp;

  static List<Path> files(Path dir, String suffix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
    }
  }

  static Tool.Result dump(String... args) throws Exception {
    Tool.Result r = Tool.run(DUMP, null, args);
    assertEquals(0, r.exit(), String.join(" ", args) + "\n" + r);
    for (String bad : List.of("Exception", "Mismatches in", "Found timestamp mismatch", "Found out of order",
        "not found in the log", "invalid bytes", "Corrupt")) {
      assertFalse(r.out().contains(bad) || r.err().contains(bad), bad + " in " + String.join(" ", args) + "\n" + r);
    }
    // The tool starts each file at -1, so "-1 is followed by <base offset>" is reported for every segment but the
    // first (for Kafka's own segments too); any other gap is a real one.
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(
        "Non-consecutive offsets in \\S*?(\\d{20})\\.log\\s+(-?\\d+) is followed by (\\d+)").matcher(r.out() + r.err());
    while (m.find()) {
      assertEquals(-1L, Long.parseLong(m.group(2)), "a gap in " + m.group(1) + ".log\n" + r);
      assertEquals(Long.parseLong(m.group(1)), Long.parseLong(m.group(3)), "first offset of " + m.group(1) + ".log");
    }
    long nonConsecutive = (r.out() + r.err()).lines().filter(l -> l.contains(" is followed by ")).count();
    assertTrue(nonConsecutive <= (r.out() + r.err()).split("Non-consecutive offsets in", -1).length - 1,
        "one pair per file at most:\n" + r);
    return r;
  }

  @Test
  void kafkaDumpLogReadsEveryFileKindStrataWrote() throws Exception {
    Path data = tmp.resolve("data");
    Strata strata = new Strata().logDir(data);
    strata.start();
    String topic = unique("dump");
    String group = unique("dump-group");
    String txId = unique("dump-tx");
    int n = 120;
    try {
      Clients.createTopic(strata, topic, 1, Map.of("segment.bytes", "4096", "index.interval.bytes", "256"));
      try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.LINGER_MS_CONFIG, 0,
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"))) {
        for (int i = 0; i < n; i++) {
          p.send(new ProducerRecord<>(topic, 0, "key-" + i, "value-" + i)).get(30, TimeUnit.SECONDS);
        }
      }
      try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
          txId))) {
        p.initTransactions();
        p.beginTransaction();
        p.send(new ProducerRecord<>(topic, 0, "k", "aborted-1"));
        p.send(new ProducerRecord<>(topic, 0, "k", "aborted-2"));
        p.flush(); // written, then aborted (unflushed batches would be dropped by the client instead)
        p.abortTransaction();
        p.beginTransaction();
        p.send(new ProducerRecord<>(topic, 0, "k", "committed-1"));
        p.commitTransaction();
      }
      try (KafkaConsumer<String, String> c = Clients.consumer(strata, Map.of(ConsumerConfig.GROUP_ID_CONFIG,
          group, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
        c.subscribe(List.of(topic));
        assertEquals(n + 1, Clients.pollN(c, n + 1).size(), "the idempotent records and the committed one");
        c.commitSync();
      }
    } finally {
      assertEquals(0, strata.stop(), "clean stop on SIGTERM:\n" + strata.logTail(30));
    }

    Path dir = data.resolve(topic + "-0");
    List<Path> logs = files(dir, ".log");
    assertTrue(logs.size() >= 3, "segments rolled: " + logs);
    StringBuilder all = new StringBuilder();
    List<String> args = new ArrayList<>(List.of("--deep-iteration", "--print-data-log", "--files"));
    args.add(String.join(",", logs.stream().map(Path::toString).toList()));
    String out = dump(args.toArray(String[]::new)).out();
    all.append(out);
    for (int i = 0; i < n; i++) {
      assertTrue(out.contains("key: key-" + i + " payload: value-" + i), "record " + i + " in\n" + out);
    }
    assertTrue(out.contains("endTxnMarker: ABORT") && out.contains("endTxnMarker: COMMIT"), out);
    assertTrue(out.contains("payload: aborted-1") && out.contains("payload: committed-1"), out);
    assertTrue(out.contains("isTransactional: true") && out.contains("isControl: true"), out);

    // Offset and time indexes: the sanity check, then a full dump verified against the segment.
    List<Path> indexes = new ArrayList<>(files(dir, ".index"));
    indexes.addAll(files(dir, ".timeindex"));
    String joined = String.join(",", indexes.stream().map(Path::toString).toList());
    out = dump("--index-sanity-check", "--files", joined).out();
    assertEquals(indexes.size(), out.lines().filter(l -> l.endsWith("passed sanity check.")).count(), out);
    dump("--verify-index-only", "--files", joined);
    out = dump("--files", joined).out();
    assertTrue(out.contains("offset: ") && out.contains("timestamp: "), out);

    // The transaction index of the segment that holds the aborted transaction.
    List<Path> txn = files(dir, ".txnindex");
    assertFalse(txn.isEmpty(), "a .txnindex for the aborted transaction");
    out = dump("--files", String.join(",", txn.stream().map(Path::toString).toList())).out();
    assertTrue(out.contains("producerId:") && out.contains("firstOffset:") && out.contains("lastStableOffset:"), out);

    // Producer snapshots (written at each roll and at the clean shutdown).
    List<Path> snaps = files(dir, ".snapshot");
    assertFalse(snaps.isEmpty(), "producer snapshots");
    out = dump("--files", String.join(",", snaps.stream().map(Path::toString).toList())).out();
    assertTrue(out.contains("producerId:") && out.contains("producerEpoch:"), out);

    // __consumer_offsets through the offsets decoder: the group's commit.
    List<Path> offsetLogs = new ArrayList<>();
    try (Stream<Path> s = Files.list(data)) {
      for (Path p : s.filter(p -> p.getFileName().toString().startsWith("__consumer_offsets-")).toList()) {
        offsetLogs.addAll(files(p, ".log"));
      }
    }
    out = dump("--offsets-decoder", "--files", String.join(",", offsetLogs.stream().map(Path::toString).toList()))
        .out();
    assertTrue(out.contains("\"group\":\"" + group + "\"") && out.contains("\"topic\":\"" + topic + "\""), out);
    assertTrue(out.contains("\"offset\":" + (n + 5)), "committed offset " + (n + 5) + " in\n" + out);

    // __transaction_state through the transaction log decoder.
    List<Path> txnLogs = new ArrayList<>();
    try (Stream<Path> s = Files.list(data)) {
      for (Path p : s.filter(p -> p.getFileName().toString().startsWith("__transaction_state-")).toList()) {
        txnLogs.addAll(files(p, ".log"));
      }
    }
    out = dump("--transaction-log-decoder", "--files", String.join(",", txnLogs.stream().map(Path::toString).toList()))
        .out();
    assertTrue(out.contains(txId), out);
    assertTrue(out.contains("\"transactionStatus\":\"CompleteCommit\"")
        && out.contains("\"transactionStatus\":\"CompleteAbort\""), out);
    // Transaction version 2: value version 1 with the client's transaction version, the epoch bumped per end.
    assertTrue(out.contains("\"clientTransactionVersion\":2"), out);
    assertTrue(out.contains("\"producerEpoch\":2"), "two ends, two bumps:\n" + out);
  }

  static final String RLMM_FORMATTER =
      "org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde$RemoteLogMetadataFormatter";

  @Test
  void kafkaToolsDecodeStrataRemoteLogMetadata() throws Exception {
    Path data = tmp.resolve("data");
    Strata strata = new Strata().logDir(data)
        .with("rsm.config.storage.filesystem.root", tmp.resolve("remote").toString())
        .with("remote.log.manager.task.interval.ms", "200")
        .with("log.retention.check.interval.ms", "200");
    strata.start();
    String topic = unique("tiered");
    int records;
    String consoleOut;
    try {
      Clients.createTopic(strata, topic, 1, Map.of("remote.storage.enable", "true", "segment.bytes", "4096",
          "local.retention.bytes", "1"));
      try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
        for (int i = 0; i < 200; i++) {
          p.send(new ProducerRecord<>(topic, 0, "key-" + i, "value-" + i + "-" + "x".repeat(100)))
              .get(30, TimeUnit.SECONDS);
        }
      }
      // Wait for at least two copied segments: COPY_SEGMENT_STARTED and _FINISHED records for each.
      java.util.Properties props = strata.props();
      props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
        List<TopicPartition> tps = c.partitionsFor("__remote_log_metadata").stream()
            .map(pi -> new TopicPartition(pi.topic(), pi.partition())).toList();
        c.assign(tps);
        c.seekToBeginning(tps);
        List<byte[]> seen = new ArrayList<>();
        Clients.await("four __remote_log_metadata records", null, () -> {
          c.poll(java.time.Duration.ofMillis(200)).forEach(r -> {
            assertEquals(null, r.key(), "null keys, as Kafka's RLMM writes");
            seen.add(r.value());
          });
          return seen.size() >= 4;
        });
        records = seen.size();
      }
      // The console consumer with Kafka's formatter, live.
      Tool.Result r = Tool.run("org.apache.kafka.tools.consumer.ConsoleConsumer", null, "--bootstrap-server",
          strata.bootstrap(), "--topic", "__remote_log_metadata", "--from-beginning", "--max-messages",
          String.valueOf(records), "--timeout-ms", "20000", "--formatter", RLMM_FORMATTER);
      assertEquals(0, r.exit(), r.toString());
      consoleOut = r.out();
    } finally {
      assertEquals(0, strata.stop(), "clean stop on SIGTERM:\n" + strata.logTail(30));
    }
    assertEquals(records, consoleOut.lines().filter(l -> l.startsWith("partition: ")).count(), consoleOut);
    assertTrue(consoleOut.contains("RemoteLogSegmentMetadata{") && consoleOut.contains("state=COPY_SEGMENT_STARTED")
        && consoleOut.contains(topic), consoleOut);

    List<Path> logs = new ArrayList<>();
    try (Stream<Path> s = Files.list(data)) {
      for (Path p : s.filter(p -> p.getFileName().toString().startsWith("__remote_log_metadata-")).toList()) {
        logs.addAll(files(p, ".log"));
      }
    }
    String out = dump("--remote-log-metadata-decoder", "--files",
        String.join(",", logs.stream().map(Path::toString).toList())).out();
    long decoded = out.lines().filter(l -> l.contains("payload: RemoteLogSegmentMetadata")).count();
    assertTrue(decoded >= records, "every record decoded:\n" + out);
    assertFalse(out.contains("Error at offset"), out);
    assertTrue(out.contains("RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=")
        && out.contains(":" + topic + "-0, id=") && out.contains("state=COPY_SEGMENT_STARTED"), out);
    assertTrue(out.contains("RemoteLogSegmentMetadataUpdate{") && out.contains("state=COPY_SEGMENT_FINISHED"), out);
    System.out.println("kafka-dump-log --remote-log-metadata-decoder over strata's __remote_log_metadata:\n" + out);
  }
}
