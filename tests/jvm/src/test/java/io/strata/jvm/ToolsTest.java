package io.strata.jvm;

import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Kafka 4.4's command-line tools (their main classes, run with {@code java -cp}) against strata. */
class ToolsTest {
  @RegisterExtension static Strata strata = new Strata();
  static Admin admin;
  @TempDir static Path tmp;

  @BeforeAll
  static void open() {
    admin = Admin.create(strata.props());
  }

  @AfterAll
  static void close() {
    if (admin != null) admin.close();
  }

  static Tool.Result ok(String main, String... args) throws Exception {
    return okIn(main, null, args);
  }

  static Tool.Result okIn(String main, String stdin, String... args) throws Exception {
    Tool.Result r = Tool.run(main, stdin, args);
    assertEquals(0, r.exit(), main + " " + String.join(" ", args) + "\n" + r);
    return r;
  }

  static String bs() {
    return strata.bootstrap();
  }

  static void produce(String topic, int partition, int n) {
    try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of())) {
      for (int i = 0; i < n; i++) p.send(new ProducerRecord<>(topic, partition, "k" + i, "v" + i));
      p.flush();
    }
  }

  static long committed(String group, TopicPartition tp) throws Exception {
    OffsetAndMetadata om = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
        .get(30, TimeUnit.SECONDS).get(tp);
    return om == null ? -1 : om.offset();
  }

  static final String TOPICS = "org.apache.kafka.tools.TopicCommand";
  static final String CONFIGS = "org.apache.kafka.tools.ConfigCommand";
  static final String GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";

  @Test
  void kafkaTopics() throws Exception {
    String t = unique("tool-topic");
    ok(TOPICS, "--bootstrap-server", bs(), "--create", "--topic", t, "--partitions", "2", "--replication-factor",
        "1", "--config", "retention.ms=3600000");
    assertTrue(ok(TOPICS, "--bootstrap-server", bs(), "--list").out().lines().anyMatch(t::equals));
    String d = ok(TOPICS, "--bootstrap-server", bs(), "--describe", "--topic", t).out();
    assertTrue(d.contains("PartitionCount: 2") && d.contains("retention.ms=3600000"), d);
    assertTrue(d.contains("Leader: 1") && d.contains("Replicas: 1") && d.contains("Isr: 1"), d);
    // From DescribeTopicPartitions (KIP-966): the ELR lists are empty, as Kafka prints them, not N/A (Metadata).
    assertTrue(d.contains("Elr: \tLastKnownElr: ") && !d.contains("N/A"), d);
    ok(TOPICS, "--bootstrap-server", bs(), "--alter", "--topic", t, "--partitions", "3");
    assertTrue(ok(TOPICS, "--bootstrap-server", bs(), "--describe", "--topic", t).out().contains("PartitionCount: 3"));
    // Partitions cannot shrink: the tool reports Kafka's error and exits 1.
    Tool.Result shrink = Tool.run(TOPICS, null, "--bootstrap-server", bs(), "--alter", "--topic", t, "--partitions",
        "1");
    assertNotEquals(0, shrink.exit(), shrink.toString());
    ok(TOPICS, "--bootstrap-server", bs(), "--delete", "--topic", t);
    Clients.await("topic deleted", null, () -> {
      try {
        return !admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(t);
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
  }

  @Test
  void kafkaConfigsTopicsBrokersUsers() throws Exception {
    String t = unique("tool-configs");
    Clients.createTopic(strata, t, 1, Map.of());
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "topics", "--entity-name", t, "--alter",
        "--add-config", "retention.ms=5000,cleanup.policy=compact");
    String d = ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "topics", "--entity-name", t,
        "--describe").out();
    assertTrue(d.contains("retention.ms=5000") && d.contains("cleanup.policy=compact"), d);
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "topics", "--entity-name", t, "--alter",
        "--delete-config", "retention.ms");
    assertFalse(ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "topics", "--entity-name", t,
        "--describe").out().contains("retention.ms=5000"));
    // Dynamic broker config, per broker and cluster-wide default.
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-name", "1", "--alter",
        "--add-config", "log.retention.ms=7200000");
    String b = ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-name", "1",
        "--describe").out();
    assertTrue(b.contains("log.retention.ms=7200000"), b);
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-default", "--alter",
        "--add-config", "log.segment.bytes=2097152");
    String all = ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-default",
        "--describe").out();
    assertTrue(all.contains("log.segment.bytes=2097152"), all);
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-name", "1", "--alter",
        "--delete-config", "log.retention.ms");
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "brokers", "--entity-default", "--alter",
        "--delete-config", "log.segment.bytes");
    // SCRAM users.
    String user = unique("tool-user");
    // Two mechanisms of one user in one request: DUPLICATE_RESOURCE, as KRaft Kafka's ScramControlManager.
    Tool.Result twice = Tool.run(CONFIGS, null, "--bootstrap-server", bs(), "--entity-type", "users",
        "--entity-name", user, "--alter", "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=x]");
    assertTrue(twice.exit() != 0 && twice.err().contains("DuplicateResourceException"), twice.toString());
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "users", "--entity-name", user, "--alter",
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]");
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "users", "--entity-name", user, "--alter",
        "--add-config", "SCRAM-SHA-512=[password=x]");
    String u = ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "users", "--entity-name", user,
        "--describe").out();
    assertTrue(u.contains("SCRAM-SHA-256=iterations=8192") && u.contains("SCRAM-SHA-512=iterations=4096"), u);
    ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "users", "--entity-name", user, "--alter",
        "--delete-config", "SCRAM-SHA-512");
    u = ok(CONFIGS, "--bootstrap-server", bs(), "--entity-type", "users", "--entity-name", user, "--describe")
        .out();
    assertFalse(u.contains("SCRAM-SHA-512"), u);
  }

  @Test
  void kafkaConsumerGroupsListDescribeResetDelete() throws Exception {
    String t = unique("tool-groups");
    Clients.createTopic(strata, t, 1, Map.of());
    TopicPartition tp = new TopicPartition(t, 0);
    long before = System.currentTimeMillis();
    produce(t, 0, 10);
    String g = unique("tool-group");
    try (KafkaConsumer<String, String> c = Clients.consumer(strata, Map.of(ConsumerConfig.GROUP_ID_CONFIG, g))) {
      c.subscribe(List.of(t));
      assertEquals(10, Clients.pollN(c, 10).size());
      c.commitSync();
      String live = ok(GROUPS, "--bootstrap-server", bs(), "--describe", "--group", g, "--members").out();
      assertTrue(live.contains(g) && live.contains("consumer-" + g), live);
    }
    assertTrue(ok(GROUPS, "--bootstrap-server", bs(), "--list").out().lines().anyMatch(g::equals));
    String d = ok(GROUPS, "--bootstrap-server", bs(), "--describe", "--group", g).out();
    Matcher m = Pattern.compile(Pattern.quote(g) + "\\s+" + Pattern.quote(t) + "\\s+0\\s+10\\s+10\\s+0").matcher(d);
    assertTrue(m.find(), "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG:\n" + d);
    String[] base = {"--bootstrap-server", bs(), "--group", g, "--topic", t, "--reset-offsets", "--execute"};
    record Mode(List<String> args, long want) {}
    List<Mode> modes = List.of(
        new Mode(List.of("--to-earliest"), 0),
        new Mode(List.of("--to-latest"), 10),
        new Mode(List.of("--to-offset", "4"), 4),
        new Mode(List.of("--shift-by", "3"), 7),
        new Mode(List.of("--shift-by", "-5"), 2),
        new Mode(List.of("--to-current"), 2),
        new Mode(List.of("--to-datetime", java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
            .format(java.time.LocalDateTime.ofInstant(java.time.Instant.ofEpochMilli(before - 60_000),
                java.time.ZoneId.systemDefault()))), 0),
        new Mode(List.of("--by-duration", "PT0.001S"), 10));
    for (Mode mode : modes) {
      List<String> args = new java.util.ArrayList<>(List.of(base));
      args.addAll(mode.args());
      ok(GROUPS, args.toArray(String[]::new));
      assertEquals(mode.want(), committed(g, tp), "reset " + mode.args());
    }
    // --from-file (CSV topic,partition,offset) and a dry run that changes nothing.
    Path csv = tmp.resolve("reset.csv");
    Files.writeString(csv, t + ",0,6\n");
    ok(GROUPS, "--bootstrap-server", bs(), "--group", g, "--reset-offsets", "--from-file", csv.toString(),
        "--execute");
    assertEquals(6L, committed(g, tp));
    String dry = ok(GROUPS, "--bootstrap-server", bs(), "--group", g, "--topic", t, "--reset-offsets",
        "--to-earliest", "--dry-run").out();
    assertTrue(dry.contains("NEW-OFFSET"), dry);
    assertEquals(6L, committed(g, tp));
    // --delete-offsets, then --delete.
    ok(GROUPS, "--bootstrap-server", bs(), "--delete-offsets", "--group", g, "--topic", t);
    assertEquals(-1L, committed(g, tp));
    ok(GROUPS, "--bootstrap-server", bs(), "--delete", "--group", g);
    assertFalse(ok(GROUPS, "--bootstrap-server", bs(), "--list").out().lines().anyMatch(g::equals));
  }

  @Test
  void kafkaGetOffsetsAndDeleteRecords() throws Exception {
    String t = unique("tool-offsets");
    Clients.createTopic(strata, t, 2, Map.of());
    produce(t, 0, 7);
    produce(t, 1, 3);
    String out = ok("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bs(), "--topic", t).out();
    assertEquals(List.of(t + ":0:7", t + ":1:3"), out.lines().sorted().toList());
    out = ok("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bs(), "--topic", t, "--time",
        "earliest").out();
    assertEquals(List.of(t + ":0:0", t + ":1:0"), out.lines().sorted().toList());
    Path json = tmp.resolve("delete.json");
    Files.writeString(json, "{\"partitions\":[{\"topic\":\"" + t + "\",\"partition\":0,\"offset\":5}],\"version\":1}");
    String del = ok("org.apache.kafka.tools.DeleteRecordsCommand", "--bootstrap-server", bs(),
        "--offset-json-file", json.toString()).out();
    assertTrue(del.contains("low_watermark: 5"), del);
    out = ok("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bs(), "--topic", t, "--partitions",
        "0", "--time", "-2").out();
    assertEquals(t + ":0:5", out.trim());
  }

  @Test
  void kafkaLogDirs() throws Exception {
    String t = unique("tool-logdirs");
    Clients.createTopic(strata, t, 1, Map.of());
    produce(t, 0, 5);
    String out = ok("org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bs(), "--describe",
        "--topic-list", t).out();
    assertTrue(out.contains("\"partition\":\"" + t + "-0\"") && out.contains("\"broker\":1"), out);
  }

  @Test
  void kafkaTransactions() throws Exception {
    String t = unique("tool-tx");
    Clients.createTopic(strata, t, 1, Map.of());
    String txId = unique("tool-txid");
    final String tx = "org.apache.kafka.tools.TransactionsCommand";
    try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
        txId))) {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(t, 0, "k", "v")).get(30, TimeUnit.SECONDS);
      String list = ok(tx, "--bootstrap-server", bs(), "list").out();
      assertTrue(list.contains(txId) && list.contains("Ongoing"), list);
      String d = ok(tx, "--bootstrap-server", bs(), "describe", "--transactional-id", txId).out();
      assertTrue(d.contains(txId) && d.contains("Ongoing") && d.contains(t + "-0"), d);
      String prods = ok(tx, "--bootstrap-server", bs(), "describe-producers", "--topic", t, "--partition", "0")
          .out();
      assertTrue(prods.contains("ProducerId"), prods);
      String hanging = ok(tx, "--bootstrap-server", bs(), "find-hanging", "--broker-id", "1").out();
      assertFalse(hanging.contains(t), "an open transaction the coordinator knows is not hanging: " + hanging);
      p.commitTransaction();
    }
    // abort: a transaction left open (its producer gone) is closed with WriteTxnMarkers by the tool.
    KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
        unique("tool-hanging")));
    try {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(t, 0, "k", "left-open")).get(30, TimeUnit.SECONDS);
      TopicPartition tp = new TopicPartition(t, 0);
      // Data + COMMIT marker of the first transaction, then the open one's record at offset 2.
      ok(tx, "--bootstrap-server", bs(), "abort", "--topic", t, "--partition", "0", "--start-offset", "2");
      try (KafkaConsumer<String, String> rc = Clients.consumer(strata, Map.of(
          ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
        assertEquals(4L, rc.endOffsets(List.of(tp)).get(tp), "the LSO passed the aborted transaction");
      }
    } finally {
      p.close(java.time.Duration.ZERO);
    }
  }

  @Test
  void consoleProducerAndConsumer() throws Exception {
    String t = unique("tool-console");
    Clients.createTopic(strata, t, 1, Map.of());
    okIn("org.apache.kafka.tools.ConsoleProducer", "a:1\nb:2\nc:3\n", "--bootstrap-server", bs(), "--topic", t,
        "--reader-property", "parse.key=true", "--reader-property", "key.separator=:");
    String out = ok("org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bs(), "--topic", t,
        "--from-beginning", "--max-messages", "3", "--formatter-property", "print.key=true",
        "--formatter-property", "key.separator==").out();
    assertEquals(List.of("a=1", "b=2", "c=3"), out.lines().toList());
  }

  @Test
  void verifiableProducerAndConsumer() throws Exception {
    String t = unique("tool-verifiable");
    Clients.createTopic(strata, t, 2, Map.of());
    String out = ok("org.apache.kafka.tools.VerifiableProducer", "--bootstrap-server", bs(), "--topic", t,
        "--max-messages", "200", "--acks", "-1").out();
    long acked = out.lines().filter(l -> l.contains("\"name\":\"producer_send_success\"")).count();
    assertEquals(200, acked, out);
    assertTrue(out.contains("\"acked\":200") && out.contains("\"sent\":200"), out);
    out = ok("org.apache.kafka.tools.VerifiableConsumer", "--bootstrap-server", bs(), "--topic", t, "--group-id",
        unique("verifiable"), "--max-messages", "200").out();
    long consumed = 0;
    Matcher m = Pattern.compile("\"name\":\"records_consumed\",\"count\":(\\d+)").matcher(out);
    while (m.find()) consumed += Long.parseLong(m.group(1));
    assertEquals(200, consumed, out);
    assertTrue(out.contains("\"name\":\"offsets_committed\"") && out.contains("\"success\":true"), out);
  }

  @Test
  void producerAndConsumerPerfTest() throws Exception {
    String t = unique("tool-perf");
    Clients.createTopic(strata, t, 1, Map.of());
    String out = ok("org.apache.kafka.tools.ProducerPerformance", "--topic", t, "--num-records", "20000",
        "--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bs(), "acks=all")
        .out();
    assertTrue(out.contains("20000 records sent"), out);
    out = ok("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bs(), "--topic", t,
        "--messages", "20000", "--hide-header").out();
    // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, ...
    String[] cols = out.trim().lines().reduce((a, b) -> b).orElse("").split(",\\s*");
    assertEquals("20000", cols[4], out);
    assertEquals(20000L, admin.listOffsets(Map.of(new TopicPartition(t, 0), OffsetSpec.latest())).all()
        .get(30, TimeUnit.SECONDS).get(new TopicPartition(t, 0)).offset());
  }

  @Test
  void kafkaReassignPartitions() throws Exception {
    String t = unique("tool-reassign");
    Clients.createTopic(strata, t, 1, Map.of());
    Path plan = tmp.resolve("reassign.json");
    Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"" + t
        + "\",\"partition\":0,\"replicas\":[1],\"log_dirs\":[\"any\"]}]}");
    final String tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
    String out = ok(tool, "--bootstrap-server", bs(), "--reassignment-json-file", plan.toString(), "--execute").out();
    assertTrue(out.contains("Successfully started partition reassignment"), out);
    out = ok(tool, "--bootstrap-server", bs(), "--reassignment-json-file", plan.toString(), "--verify").out();
    assertTrue(out.contains("Reassignment of partition " + t + "-0 is completed"), out);
  }

  @Test
  void kafkaFeaturesDescribe() throws Exception {
    Tool.Result r = Tool.run("org.apache.kafka.tools.FeatureCommand", null, "--bootstrap-server", bs(),
        "describe");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().matches("(?s).*Feature: transaction\\.version\\s+SupportedMinVersion: 0\\s+"
        + "SupportedMaxVersion: 2\\s+FinalizedVersionLevel: 2\\s.*"), r.toString());
    assertTrue(r.out().contains("Feature: group.version"), r.toString());
    assertFalse(r.out().contains("metadata.version"), r.toString());
  }

  @Test
  void kafkaMetadataQuorumDescribe() throws Exception {
    // No KRaft quorum: DescribeQuorum is not served; the tool reports it and exits 1.
    Tool.Result r = Tool.run("org.apache.kafka.tools.MetadataQuorumCommand", null, "--bootstrap-server", bs(),
        "describe", "--status");
    assertEquals(1, r.exit(), r.toString());
    assertTrue(r.err().contains("UnsupportedVersionException") || r.err().contains("DESCRIBE_QUORUM"), r.toString());
  }

  @Test
  void kafkaLeaderElection() throws Exception {
    String t = unique("tool-elect");
    Clients.createTopic(strata, t, 2, Map.of());
    Tool.Result r = Tool.run("org.apache.kafka.tools.LeaderElectionCommand", null, "--bootstrap-server", bs(),
        "--election-type", "preferred", "--topic", t, "--partition", "0");
    assertEquals(0, r.exit(), r.toString());
    assertTrue(r.out().contains("Valid replica already elected for partitions " + t + "-0"), r.toString());
    r = Tool.run("org.apache.kafka.tools.LeaderElectionCommand", null, "--bootstrap-server", bs(),
        "--election-type", "unclean", "--all-topic-partitions");
    assertEquals(0, r.exit(), r.toString());
  }
}
