package io.strata.jvm.frameworks;

import static io.strata.jvm.Clients.createTopic;
import static io.strata.jvm.Clients.producer;
import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.strata.jvm.JvmProcess;
import io.strata.jvm.Strata;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Streams 4.4 against strata (issue 32): {@link StreamsApp}'s topology (a repartition, a RocksDB KTable with
 * its changelog, a windowed count; exactly_once_v2) as separate JVM processes. Two instances share the work; one is
 * killed (SIGKILL, its transaction left open) mid-stream and a new one joins; later the other original is killed
 * too, so the new one restores every store from the changelogs. Every output count is exact: each input counted
 * once, nothing lost, no aborted or duplicated update visible to a read_committed reader.
 */
class StreamsTest {
  @RegisterExtension static Strata strata = new Strata();

  static final int WORDS = 20;
  static final int PHASE = 1000;
  static final long WINDOW_MS = 10_000;
  static final long WAIT_MS = 150_000;

  @TempDir Path tmp;

  final Map<String, Long> expectCounts = new TreeMap<>();
  final Map<String, Long> expectWindows = new TreeMap<>();
  final Map<String, Long> seenCounts = new TreeMap<>();
  final Map<String, Long> seenWindows = new TreeMap<>();
  final Map<String, Long> maxSeen = new HashMap<>();
  final long base = System.currentTimeMillis() / WINDOW_MS * WINDOW_MS - 3_600_000;

  @Test
  void exactlyOnceCountsSurviveKilledInstancesAndRestoreFromChangelog() throws Exception {
    String app = unique("wordcount");
    String input = app + "-in";
    String counts = app + "-counts";
    String windows = app + "-windows";
    createTopic(strata, input, 3, Map.of());
    createTopic(strata, counts, 3, Map.of());
    createTopic(strata, windows, 3, Map.of());

    List<JvmProcess> all = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer(strata, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            true, ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5));
        KafkaConsumer<String, byte[]> reader = outputReader()) {
      reader.assign(partitions(counts, windows));
      JvmProcess a = instance("a", app, input, counts, windows, all);
      JvmProcess b = instance("b", app, input, counts, windows, all);
      awaitRunning(a);
      awaitRunning(b);

      int next = produce(producer, input, 0, 2 * PHASE);
      awaitExact(reader, counts, windows, all, "2 instances");

      next = produce(producer, input, next, PHASE);
      a.kill(); // mid-stream: its tasks had a thousand records to work through, its transaction is left open
      JvmProcess c = instance("c", app, input, counts, windows, all);
      next = produce(producer, input, next, PHASE);
      awaitExact(reader, counts, windows, all, "after a was killed and c joined");

      next = produce(producer, input, next, PHASE);
      b.kill();
      next = produce(producer, input, next, PHASE);
      awaitExact(reader, counts, windows, all, "after b was killed (c alone)");
      assertEquals(6 * PHASE, next);

      long restored = c.lines().stream().filter(l -> l.startsWith("RESTORED word-counts "))
          .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum();
      assertTrue(restored > 0, "c restored word-counts from its changelog: " + c.lines());
      for (Map.Entry<String, Long> e : maxSeen.entrySet()) {
        long want = expectCounts.containsKey(e.getKey()) ? expectCounts.get(e.getKey())
            : expectWindows.getOrDefault(e.getKey(), 0L);
        assertTrue(e.getValue() <= want, "a count above the inputs was visible: " + e);
      }
      checkInternalTopics(app);
      for (JvmProcess p : all) System.out.println(p.describe());
    } finally {
      for (JvmProcess p : all) p.close();
    }
  }

  JvmProcess instance(String name, String app, String input, String counts, String windows, List<JvmProcess> all)
      throws Exception {
    Path state = Files.createDirectories(tmp.resolve("state-" + name));
    JvmProcess p = JvmProcess.start("streams-" + name, List.of(), StreamsApp.class.getName(), strata.bootstrap(),
        app, state.toString(), input, counts, windows);
    all.add(p);
    return p;
  }

  static void awaitRunning(JvmProcess p) {
    p.awaitLine("STATE RUNNING", "STATE RUNNING"::equals, 90_000);
  }

  /** Produces inputs {@code from..from+n} (user key, a word, a timestamp 50 ms apart) and notes what they add. */
  int produce(KafkaProducer<String, String> producer, String input, int from, int n) throws Exception {
    for (int i = from; i < from + n; i++) {
      String word = "w" + ((i * 7) % WORDS);
      long ts = base + i * 50L;
      producer.send(new ProducerRecord<>(input, null, ts, "user" + (i % 13), word));
      expectCounts.merge(word, 1L, Long::sum);
      expectWindows.merge(word + "@" + (ts / WINDOW_MS * WINDOW_MS), 1L, Long::sum);
    }
    producer.flush();
    return from + n;
  }

  KafkaConsumer<String, byte[]> outputReader() {
    java.util.Properties p = strata.props();
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
  }

  static List<TopicPartition> partitions(String... topics) {
    List<TopicPartition> tps = new ArrayList<>();
    for (String t : topics) for (int i = 0; i < 3; i++) tps.add(new TopicPartition(t, i));
    return tps;
  }

  /** Reads the outputs (read_committed) until the latest count of every key is what the inputs so far make. */
  void awaitExact(KafkaConsumer<String, byte[]> reader, String counts, String windows, List<JvmProcess> all,
      String when) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
    while (!(seenCounts.equals(expectCounts) && seenWindows.equals(expectWindows))) {
      if (System.nanoTime() > end) {
        StringBuilder why = new StringBuilder("outputs not exact " + when + " within " + WAIT_MS + " ms\nwant counts "
            + expectCounts + "\nsaw  counts " + seenCounts + "\nwindows want " + expectWindows.size() + " saw "
            + seenWindows.size() + "\n");
        for (JvmProcess p : all) why.append(p.describe()).append('\n');
        why.append("--- strata\n").append(strata.logTail(40));
        fail(why.toString());
      }
      for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200))) {
        long n = ByteBuffer.wrap(r.value()).getLong();
        (r.topic().equals(counts) ? seenCounts : seenWindows).put(r.key(), n);
        maxSeen.merge(r.key(), n, Math::max);
      }
    }
  }

  void checkInternalTopics(String app) throws Exception {
    try (Admin admin = Admin.create(strata.props())) {
      var names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      String changelog = app + "-word-counts-changelog";
      String windowChangelog = app + "-word-window-counts-changelog";
      String repartition = app + "-by-word-repartition";
      for (String t : List.of(changelog, windowChangelog, repartition)) {
        assertTrue(names.contains(t), t + " created by Streams: " + names);
      }
      Map<ConfigResource, Config> cfg = admin.describeConfigs(List.of(
          new ConfigResource(ConfigResource.Type.TOPIC, changelog),
          new ConfigResource(ConfigResource.Type.TOPIC, windowChangelog))).all().get(30, TimeUnit.SECONDS);
      assertEquals("compact",
          cfg.get(new ConfigResource(ConfigResource.Type.TOPIC, changelog)).get("cleanup.policy").value());
      assertEquals("compact,delete",
          cfg.get(new ConfigResource(ConfigResource.Type.TOPIC, windowChangelog)).get("cleanup.policy").value());
    }
  }
}
