package io.strata.jvm.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.jvm.Strata;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Start-up time and memory of the test broker, strata (the {@link Strata} extension: {@code strata --ephemeral})
 * beside spring-kafka-test's EmbeddedKafka (a KRaft broker; here alone in a JVM of its own so its RSS can be read),
 * in the same run: time from spawning the process to its broker answering, and VmRSS after start-up and after the
 * same small workload (a topic, 2,000 records produced and read back). Also a bare JVM on the same classpath, the
 * share of EmbeddedKafka's figure that a test JVM pays anyway. Figures go to stdout and
 * {@code target/footprint.txt}; the test checks each broker served the workload exactly.
 */
class FootprintTest {
  static final int RECORDS = 2000;

  record Figure(String what, long startMs, long rssReadyKb, long rssAfterKb) {
    String line() {
      if (rssReadyKb == 0) return String.format("%-50s start %5d ms", what, startMs);
      return String.format("%-50s start %5d ms   RSS ready %6.1f MiB   after workload %6.1f MiB", what, startMs,
          rssReadyKb / 1024.0, rssAfterKb / 1024.0);
    }
  }

  @Test
  void strataBesideEmbeddedKafka() throws Exception {
    List<Figure> figures = new ArrayList<>();

    Strata strata = new Strata();
    long t0 = System.nanoTime();
    strata.start();
    try {
      long start = (System.nanoTime() - t0) / 1_000_000;
      long ready = rssKb(strata.pid());
      workload(strata.bootstrap());
      figures.add(new Figure("strata --ephemeral (debug build)", start, ready, rssKb(strata.pid())));
    } finally {
      strata.stop();
    }

    String[] embedded = run("embedded", figures, "EmbeddedKafka (KRaft, own JVM): spawn to ready");
    figures.add(new Figure("  of which EmbeddedKafkaKraftBroker start", Long.parseLong(embedded[2]), 0, 0));
    run("idle", figures, "bare JVM, same classpath (baseline)");

    StringBuilder out = new StringBuilder("footprint (issue 32): ").append(Runtime.getRuntime().availableProcessors())
        .append(" cores\n");
    for (Figure f : figures) out.append(f.line()).append('\n');
    System.out.print(out);
    Files.writeString(Path.of("target", "footprint.txt"), out.toString());
    for (Figure f : figures) assertTrue(f.startMs() >= 0, f.line());
    assertTrue(figures.get(0).rssReadyKb() > 0 && figures.get(1).rssReadyKb() > 0, out.toString());
  }

  /** Starts EmbeddedKafkaMain (or the bare JVM), measures it, runs the workload on a broker; returns its READY line. */
  String[] run(String mode, List<Figure> figures, String what) throws Exception {
    String cp = Files.readString(Path.of(System.getProperty("test.classpath", "target/test.classpath"))).trim()
        + java.io.File.pathSeparator + System.getProperty("java.class.path");
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", cp,
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dlogging.level.root=WARN",
        EmbeddedKafkaMain.class.getName(), mode);
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
        try {
          String l;
          while ((l = r.readLine()) != null) if (l.startsWith("READY ")) return l;
          return null;
        } catch (java.io.IOException e) {
          return null;
        }
      });
      String ready = line.get(120, TimeUnit.SECONDS);
      assertTrue(ready != null, mode + ": no READY line");
      long start = (System.nanoTime() - t0) / 1_000_000;
      String[] parts = ready.split(" ");
      long rssReady = rssKb(p.pid());
      if (!parts[1].equals("-")) workload(parts[1]);
      figures.add(new Figure(what, start, rssReady, rssKb(p.pid())));
      return parts;
    } finally {
      p.getOutputStream().close();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** A topic, {@value #RECORDS} records produced (acks=all) and read back, checked. */
  static void workload(String bootstrap) throws Exception {
    String topic = "footprint";
    Properties base = new Properties();
    base.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(base)) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    Properties pp = new Properties();
    pp.putAll(base);
    pp.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> p = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < RECORDS; i++) p.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
      p.flush();
    }
    Properties cp = new Properties();
    cp.putAll(base);
    cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp, new StringDeserializer(),
        new StringDeserializer())) {
      c.assign(List.of(new TopicPartition(topic, 0)));
      c.seekToBeginning(List.of(new TopicPartition(topic, 0)));
      List<String> got = new ArrayList<>();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (got.size() < RECORDS && System.nanoTime() < end) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) got.add(r.value());
      }
      assertEquals(RECORDS, got.size(), "records read back from " + bootstrap);
      assertEquals("v0", got.get(0));
      assertEquals("v" + (RECORDS - 1), got.get(RECORDS - 1));
    }
  }

  /** VmRSS of a process, in KiB, from /proc. */
  static long rssKb(long pid) throws Exception {
    for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
    }
    throw new AssertionError("no VmRSS for " + pid);
  }

}
