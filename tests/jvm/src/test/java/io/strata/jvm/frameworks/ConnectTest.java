package io.strata.jvm.frameworks;

import static io.strata.jvm.Clients.consumer;
import static io.strata.jvm.Clients.createTopic;
import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.jvm.JvmProcess;
import io.strata.jvm.Strata;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Connect 4.4 against strata (issue 32), each worker a {@code java -cp} process with the file connectors
 * (connect-file) on its classpath: a standalone worker moves a file through a topic into another file exactly;
 * a distributed worker ({@code exactly.once.source.support=enabled}) keeps its connectors in compacted
 * config/offset/status topics; after a clean restart they run again from there and carry on where they stopped
 * (the output file exact, nothing twice), and after a SIGKILL mid-stream the topic still holds each line once. Two
 * distributed workers in one group share the connectors' tasks; the one running the source is SIGKILLed and the
 * other takes its tasks over.
 */
class ConnectTest {
  @RegisterExtension static Strata strata = new Strata();

  static final long WAIT_MS = 90_000;
  static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @TempDir Path tmp;

  @Test
  void standaloneWorkerCopiesAFileThroughATopicExactly() throws Exception {
    String topic = unique("connect-standalone");
    createTopic(strata, topic, 1, Map.of());
    Path in = tmp.resolve("in.txt");
    Path out = tmp.resolve("out.txt");
    List<String> lines = lines("first", 0, 500);
    Files.write(in, lines);
    Path worker = write("worker.properties", common() + "offset.storage.file.filename=" + tmp.resolve("offsets")
        + "\nlisteners=http://127.0.0.1:" + freePort() + "\n");
    Path source = write("source.properties", "name=file-source\nconnector.class=FileStreamSource\ntasks.max=1\n"
        + "file=" + in + "\ntopic=" + topic + "\n");
    Path sink = write("sink.properties", "name=file-sink\nconnector.class=FileStreamSink\ntasks.max=1\n"
        + "file=" + out + "\ntopics=" + topic + "\n");
    try (JvmProcess w = JvmProcess.start("connect-standalone", List.of(),
        "org.apache.kafka.connect.cli.ConnectStandalone", worker.toString(), source.toString(), sink.toString())) {
      awaitFile(out, lines, w);
      List<String> more = lines("second", 500, 300);
      Files.write(in, more, StandardOpenOption.APPEND);
      List<String> all = new ArrayList<>(lines);
      all.addAll(more);
      awaitFile(out, all, w);
    }
  }

  @Test
  void distributedWorkerConnectorsSurviveARestart() throws Exception {
    String group = unique("connect-cluster");
    String topic = group + "-data";
    createTopic(strata, topic, 2, Map.of());
    Path in = tmp.resolve("in.txt");
    Path out = tmp.resolve("out.txt");
    List<String> lines = lines("before", 0, 400);
    Files.write(in, lines);
    int port = freePort();
    Path worker = distributedConfig("distributed.properties", group, port);
    String base = "http://127.0.0.1:" + port;
    List<String> all = new ArrayList<>(lines);
    try (JvmProcess w = distributed("connect-distributed-1", worker)) {
      awaitRest(base, w);
      put(base + "/connectors/file-source/config", "{\"connector.class\":\"FileStreamSource\",\"tasks.max\":\"1\","
          + "\"file\":\"" + in + "\",\"topic\":\"" + topic + "\"}");
      put(base + "/connectors/file-sink/config", "{\"connector.class\":\"FileStreamSink\",\"tasks.max\":\"1\","
          + "\"file\":\"" + out + "\",\"topics\":\"" + topic + "\"}");
      awaitRunning(base, "file-source", w);
      awaitRunning(base, "file-sink", w);
      awaitFileSorted(out, all, w);
    }
    // The worker stopped (SIGTERM: offsets flushed); lines written meanwhile are picked up after the restart.
    List<String> more = lines("during", 400, 200);
    Files.write(in, more, StandardOpenOption.APPEND);
    all.addAll(more);
    try (JvmProcess w = distributed("connect-distributed-2", worker)) {
      awaitRest(base, w);
      // Nothing is submitted again: the connectors come back from the config topic.
      awaitRunning(base, "file-source", w);
      awaitRunning(base, "file-sink", w);
      List<String> after = lines("after", 600, 200);
      Files.write(in, after, StandardOpenOption.APPEND);
      all.addAll(after);
      awaitFileSorted(out, all, w);
      String connectors = get(base + "/connectors");
      assertTrue(connectors.contains("file-source") && connectors.contains("file-sink"), connectors);
      // Mid-stream crash: SIGKILL while the source task has lines to send.
      List<String> crash = lines("crash", 800, 300);
      Files.write(in, crash, StandardOpenOption.APPEND);
      all.addAll(crash);
      w.kill();
    }
    try (JvmProcess w = distributed("connect-distributed-3", worker)) {
      awaitRest(base, w);
      awaitRunning(base, "file-source", w);
      List<String> last = lines("last", 1100, 100);
      Files.write(in, last, StandardOpenOption.APPEND);
      all.addAll(last);
      // exactly.once.source.support=enabled: the source's records and offsets commit in one transaction, so after
      // the crash the topic (read_committed) holds each line once; the sink is at-least-once, so its file may
      // repeat what it wrote after its last offset commit, but misses nothing.
      awaitTopicExact(topic, all);
      await("every line in " + out, w, () -> read(out).containsAll(all));
    }
    try (Admin admin = Admin.create(strata.props())) {
      var txIds = admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream()
          .map(l -> l.transactionalId()).toList();
      assertTrue(txIds.contains(group + "-file-source-0"), "the source task produced in transactions: " + txIds);
      for (String t : List.of(group + "-configs", group + "-offsets", group + "-status")) {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
        Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r);
        assertEquals("compact", c.get("cleanup.policy").value(), t + " is compacted");
      }
    }
  }

  @Test
  void twoDistributedWorkersShareTasksAndOneTakesOverFromAKilledOne() throws Exception {
    String group = unique("connect-pair");
    String topic = group + "-data";
    createTopic(strata, topic, 2, Map.of());
    Path in = tmp.resolve("in.txt");
    Path out = tmp.resolve("out.txt");
    List<String> all = new ArrayList<>(lines("first", 0, 300));
    Files.write(in, all);
    int p1 = freePort();
    int p2 = freePort();
    Path c1 = distributedConfig("w1.properties", group, p1);
    Path c2 = distributedConfig("w2.properties", group, p2);
    String b1 = "http://127.0.0.1:" + p1;
    String b2 = "http://127.0.0.1:" + p2;
    try (JvmProcess w1 = distributed("connect-pair-1", c1); JvmProcess w2 = distributed("connect-pair-2", c2)) {
      awaitRest(b1, w1);
      awaitRest(b2, w2);
      put(b1 + "/connectors/file-source/config", "{\"connector.class\":\"FileStreamSource\",\"tasks.max\":\"1\","
          + "\"file\":\"" + in + "\",\"topic\":\"" + topic + "\"}");
      put(b1 + "/connectors/file-sink/config", "{\"connector.class\":\"FileStreamSink\",\"tasks.max\":\"2\","
          + "\"file\":\"" + out + "\",\"topics\":\"" + topic + "\"}");
      awaitRunning(b2, "file-source", 1, w2);
      awaitRunning(b2, "file-sink", 2, w2);
      awaitFileSorted(out, all, w1);
      // One group of two workers: the connectors and their three tasks are spread over both.
      String sinkStatus = get(b2 + "/connectors/file-sink/status") + get(b2 + "/connectors/file-source/status");
      assertTrue(sinkStatus.contains("127.0.0.1:" + p1) && sinkStatus.contains("127.0.0.1:" + p2),
          "work on both workers: " + sinkStatus);
      // SIGKILL the worker running the source task; the other takes it over (session timeout, rebalance).
      boolean firstHasIt = taskWorkers(get(b2 + "/connectors/file-source/status")).contains("127.0.0.1:" + p1);
      JvmProcess dead = firstHasIt ? w1 : w2;
      JvmProcess alive = firstHasIt ? w2 : w1;
      String aliveBase = firstHasIt ? b2 : b1;
      int alivePort = firstHasIt ? p2 : p1;
      dead.kill();
      List<String> more = lines("after-kill", 300, 300);
      Files.write(in, more, StandardOpenOption.APPEND);
      all.addAll(more);
      awaitTopicExact(topic, all);
      await("every line in " + out, alive, () -> read(out).containsAll(all));
      String after = get(aliveBase + "/connectors/file-source/status");
      assertEquals("127.0.0.1:" + alivePort, taskWorkers(after), "the surviving worker runs the source: " + after);
    }
  }

  /** The worker ids in the "tasks" part of a connector's status (one task: its worker). */
  static String taskWorkers(String status) {
    String tasks = status.substring(status.indexOf("\"tasks\""));
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"worker_id\"\\s*:\\s*\"([^\"]+)\"").matcher(tasks);
    List<String> ids = new ArrayList<>();
    while (m.find()) ids.add(m.group(1));
    return String.join(",", ids);
  }

  /** A distributed worker of {@code group} (EOS source support, quick failure detection) on REST port {@code port}. */
  Path distributedConfig(String name, String group, int port) throws IOException {
    return write(name, common() + "group.id=" + group
        + "\nconfig.storage.topic=" + group + "-configs\noffset.storage.topic=" + group + "-offsets"
        + "\nstatus.storage.topic=" + group + "-status\nconfig.storage.replication.factor=1"
        + "\noffset.storage.replication.factor=1\nstatus.storage.replication.factor=1"
        + "\noffset.flush.interval.ms=500\nexactly.once.source.support=enabled\nsession.timeout.ms=6000"
        + "\nheartbeat.interval.ms=1000\nscheduled.rebalance.max.delay.ms=0\nconsumer.session.timeout.ms=6000"
        + "\nlisteners=http://127.0.0.1:" + port
        + "\nrest.advertised.host.name=127.0.0.1\nrest.advertised.port=" + port + "\n");
  }

  static String common() {
    return "bootstrap.servers=" + strata.bootstrap()
        + "\nkey.converter=org.apache.kafka.connect.storage.StringConverter"
        + "\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\nplugin.discovery=service_load\n";
  }

  static List<String> lines(String prefix, int from, int n) {
    List<String> l = new ArrayList<>();
    for (int i = from; i < from + n; i++) l.add(prefix + "-" + i + "-" + "x".repeat(i % 40));
    return l;
  }

  Path write(String name, String text) throws IOException {
    return Files.writeString(tmp.resolve(name), text);
  }

  static JvmProcess distributed(String name, Path worker) throws IOException {
    return JvmProcess.start(name, List.of(), "org.apache.kafka.connect.cli.ConnectDistributed", worker.toString());
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static void await(String what, JvmProcess w, BooleanSupplier cond) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
    while (!cond.getAsBoolean()) {
      assertTrue(w.isAlive(), w + " exited while waiting for " + what + "\n" + w.describe());
      assertTrue(System.nanoTime() < end, "timed out waiting for " + what + "\n" + w.describe() + "\n--- strata\n"
          + strata.logTail(30));
      Thread.sleep(100);
    }
  }

  static List<String> read(Path p) {
    try {
      return Files.exists(p) ? Files.readAllLines(p) : List.of();
    } catch (IOException e) {
      return List.of();
    }
  }

  /** The sink's file equals {@code want}, in order (one partition). */
  static void awaitFile(Path out, List<String> want, JvmProcess w) throws InterruptedException {
    await(want.size() + " lines in " + out, w, () -> read(out).size() >= want.size());
    assertEquals(want, read(out), "the sink wrote each line once, in order");
  }

  /** The sink's file holds {@code want} exactly once each (two partitions: order across them is free). */
  static void awaitFileSorted(Path out, List<String> want, JvmProcess w) throws InterruptedException {
    await(want.size() + " lines in " + out, w, () -> read(out).size() >= want.size());
    List<String> got = new ArrayList<>(read(out));
    List<String> exp = new ArrayList<>(want);
    got.sort(null);
    exp.sort(null);
    assertEquals(exp, got, "the sink wrote each line once");
  }

  /** The data topic read with read_committed holds {@code want}, each line once. */
  static void awaitTopicExact(String topic, List<String> want) {
    try (KafkaConsumer<String, String> c = consumer(strata, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        "read_committed"))) {
      c.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
      List<String> got = new ArrayList<>();
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
      while (got.size() < want.size() && System.nanoTime() < end) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) got.add(r.value());
      }
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) got.add(r.value());
      List<String> exp = new ArrayList<>(want);
      got.sort(null);
      exp.sort(null);
      assertEquals(exp, got, "each line once in " + topic + " (read_committed)");
    }
  }

  static void awaitRest(String base, JvmProcess w) throws InterruptedException {
    await("the worker's REST API at " + base, w, () -> {
      try {
        return get(base + "/connectors") != null;
      } catch (Exception e) {
        return false;
      }
    });
  }

  static void awaitRunning(String base, String connector, JvmProcess w) throws InterruptedException {
    awaitRunning(base, connector, 1, w);
  }

  static void awaitRunning(String base, String connector, int tasks, JvmProcess w) throws InterruptedException {
    await(connector + " and its " + tasks + " task(s) RUNNING", w, () -> {
      try {
        String s = get(base + "/connectors/" + connector + "/status");
        return s != null && s.replace(" ", "").split("\"state\":\"RUNNING\"", -1).length == tasks + 2;
      } catch (Exception e) {
        return false;
      }
    });
  }

  static String get(String url) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    return r.statusCode() == 200 ? r.body() : null;
  }

  static void put(String url, String json) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertTrue(r.statusCode() == 200 || r.statusCode() == 201, "PUT " + url + ": " + r.statusCode() + " " + r.body());
  }
}
