// The client side of tests/mirror/run.sh, with Kafka's own Java client (run as a single-file program:
// java -cp "$(bench/kafka/kafka.sh classpath)" tests/mirror/MirrorCheck.java COMMAND ARGS...).
//
//   create BS TOPIC PARTITIONS RF [k=v ...]       create a topic with configs
//   produce BS TOPIC N KEYS [FROM]                N records i = FROM.., key k<i % KEYS>, value "<topic>-<i>-<padding>",
//                                                 record i to partition i % partitions; idempotent, acks=all
//   txn BS TOPIC BLOCKS SIZE                      BLOCKS transactions of SIZE records to partition 0; odd ones aborted
//   digest BS TOPIC all|latest ISOLATION          per partition: records and CRC-32 of the key/value sequence ("all"),
//                                                 or of the latest value per key ("latest", for compacted topics);
//                                                 then "total RECORDS CRC"
//   wait-equal SRC DST TOPIC all|latest ISOLATION SECONDS
//                                                 polls both digests until they are equal; prints "caught-up MS"
//   consume-group BS TOPIC GROUP N FILE           a subscribed consumer of GROUP reads N records (N / partitions from
//                                                 each), commits and leaves; the values it read go to FILE
//   positions BS GROUP                            the group's committed offsets, "topic-p=offset" sorted
//   resume BS TOPIC GROUP BEFORE_FILE             a consumer of GROUP on BS resumes from its committed offsets to the
//                                                 end; with what BEFORE_FILE read before the move, checks every record
//                                                 of TOPIC was read (none lost) and counts duplicates
//   configs BS TOPIC KEY...                       "KEY=value" of the topic's configs
//   describe BS TOPIC                             "partitions N"
//   local-start BS TOPIC                          per partition: earliest offset and earliest local offset
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.zip.CRC32;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class MirrorCheck {
  static final Duration DEADLINE = Duration.ofSeconds(120);

  public static void main(String[] a) throws Exception {
    switch (a[0]) {
      case "create" -> create(a[1], a[2], Integer.parseInt(a[3]), Short.parseShort(a[4]), Arrays.copyOfRange(a, 5, a.length));
      case "produce" -> produce(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]),
          a.length > 5 ? Integer.parseInt(a[5]) : 0);
      case "txn" -> txn(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]));
      case "digest" -> System.out.print(render(digest(a[1], a[2], a[3], a[4])));
      case "wait-equal" -> waitEqual(a[1], a[2], a[3], a[4], a[5], Integer.parseInt(a[6]));
      case "consume-group" -> consumeGroup(a[1], a[2], a[3], Integer.parseInt(a[4]), Path.of(a[5]));
      case "positions" -> positions(a[1], a[2]);
      case "resume" -> resume(a[1], a[2], a[3], Path.of(a[4]));
      case "configs" -> configs(a[1], a[2], Arrays.copyOfRange(a, 3, a.length));
      case "describe" -> describe(a[1], a[2]);
      case "local-start" -> localStart(a[1], a[2]);
      default -> throw new IllegalArgumentException("unknown command " + a[0]);
    }
  }

  static Properties props(String bs) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bs);
    return p;
  }

  static Admin admin(String bs) {
    return Admin.create(props(bs));
  }

  static void create(String bs, String topic, int partitions, short rf, String[] kvs) throws Exception {
    Map<String, String> configs = new HashMap<>();
    for (String kv : kvs) {
      String[] p = kv.split("=", 2);
      configs.put(p[0], p[1]);
    }
    try (Admin admin = admin(bs)) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, rf).configs(configs))).all().get(60, TimeUnit.SECONDS);
    }
  }

  static int partitions(Admin admin, String topic) throws Exception {
    return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic).partitions().size();
  }

  static String value(String topic, int i) {
    return topic + "-" + i + "-" + "x".repeat(40 + (i * 7) % 120);
  }

  static KafkaProducer<String, String> producer(String bs, Map<String, Object> extra) {
    Properties p = props(bs);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    p.put("linger.ms", 5);
    p.putAll(extra);
    return new KafkaProducer<>(p);
  }

  static void produce(String bs, String topic, int n, int keys, int from) throws Exception {
    int parts;
    try (Admin admin = admin(bs)) {
      parts = partitions(admin, topic);
    }
    try (KafkaProducer<String, String> p = producer(bs, Map.of("enable.idempotence", true))) {
      List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
      for (int i = from; i < from + n; i++) {
        sent.add(p.send(new ProducerRecord<>(topic, i % parts, "k" + (i % keys), value(topic, i))));
      }
      for (var f : sent) f.get(60, TimeUnit.SECONDS);
    }
    System.out.println("produced " + n + " to " + topic);
  }

  static void txn(String bs, String topic, int blocks, int size) throws Exception {
    int committed = 0;
    try (KafkaProducer<String, String> p = producer(bs, Map.of("transactional.id", topic + "-tx"))) {
      p.initTransactions();
      for (int b = 0; b < blocks; b++) {
        p.beginTransaction();
        for (int j = 0; j < size; j++) {
          int i = b * size + j;
          p.send(new ProducerRecord<>(topic, 0, "k" + i, (b % 2 == 1 ? "aborted-" : "") + value(topic, i)));
        }
        p.flush();
        if (b % 2 == 1) {
          p.abortTransaction();
        } else {
          p.commitTransaction();
          committed += size;
        }
      }
    }
    System.out.println("transactions on " + topic + ": " + committed + " committed, " + (blocks * size - committed)
        + " aborted");
  }

  static KafkaConsumer<String, String> consumer(String bs, String group, String isolation) {
    Properties p = props(bs);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    p.put("isolation.level", isolation);
    if (group != null) p.put("group.id", group);
    return new KafkaConsumer<>(p);
  }

  /** Every record of every partition of `topic`, up to the end offsets at the start, in offset order. */
  static Map<Integer, List<ConsumerRecord<String, String>>> readAll(String bs, String topic, String isolation) {
    try (KafkaConsumer<String, String> c = consumer(bs, null, isolation)) {
      List<TopicPartition> tps = c.partitionsFor(topic, Duration.ofSeconds(60)).stream()
          .map(pi -> new TopicPartition(topic, pi.partition())).toList();
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps);
      Map<Integer, List<ConsumerRecord<String, String>>> out = new TreeMap<>();
      tps.forEach(tp -> out.put(tp.partition(), new ArrayList<>()));
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) throw new AssertionError("reading " + topic + " timed out");
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          if (r.offset() < end.get(new TopicPartition(topic, r.partition()))) out.get(r.partition()).add(r);
        }
      }
      return out;
    }
  }

  record Digest(long records, long crc) {}

  static Map<Integer, Digest> digest(String bs, String topic, String mode, String isolation) {
    Map<Integer, Digest> out = new TreeMap<>();
    for (var e : readAll(bs, topic, isolation).entrySet()) {
      CRC32 crc = new CRC32();
      List<String> items;
      if (mode.equals("latest")) {
        TreeMap<String, String> latest = new TreeMap<>();
        for (var r : e.getValue()) {
          if (r.value() == null) latest.remove(r.key());
          else latest.put(r.key(), r.value());
        }
        items = latest.entrySet().stream().map(x -> x.getKey() + "=" + x.getValue()).toList();
      } else {
        items = e.getValue().stream().map(r -> r.key() + "=" + r.value()).toList();
      }
      for (String s : items) {
        crc.update(s.getBytes(StandardCharsets.UTF_8));
        crc.update('\n');
      }
      out.put(e.getKey(), new Digest(items.size(), crc.getValue()));
    }
    return out;
  }

  static String render(Map<Integer, Digest> d) {
    StringBuilder sb = new StringBuilder();
    CRC32 all = new CRC32();
    long n = 0;
    for (var e : d.entrySet()) {
      sb.append(String.format("partition %d records %d crc %08x%n", e.getKey(), e.getValue().records(),
          e.getValue().crc()));
      all.update((e.getKey() + ":" + e.getValue().crc() + "\n").getBytes(StandardCharsets.UTF_8));
      n += e.getValue().records();
    }
    sb.append(String.format("total %d crc %08x%n", n, all.getValue()));
    return sb.toString();
  }

  static void waitEqual(String src, String dst, String topic, String mode, String isolation, int seconds)
      throws Exception {
    long t0 = System.nanoTime();
    String want = render(digest(src, topic, mode, isolation));
    String got = "";
    while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(seconds)) {
      try {
        got = render(digest(dst, topic, mode, isolation));
        if (got.equals(want)) {
          System.out.println("caught-up " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
          return;
        }
      } catch (Exception e) {
        got = e.toString(); // the topic may not exist on the target yet
      }
      Thread.sleep(1000);
    }
    System.out.println("source:\n" + want + "target:\n" + got);
    System.exit(1);
  }

  static void consumeGroup(String bs, String topic, String group, int n, Path file) throws Exception {
    List<String> seen = new ArrayList<>();
    try (KafkaConsumer<String, String> c = consumer(bs, group, "read_committed")) {
      int quota = n / c.partitionsFor(topic, Duration.ofSeconds(60)).size();
      Map<Integer, Integer> read = new HashMap<>();
      c.subscribe(List.of(topic));
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
      int parts = c.partitionsFor(topic, Duration.ofSeconds(60)).size();
      while (seen.size() < quota * parts) {
        if (System.nanoTime() > deadline) throw new AssertionError("group " + group + " read " + seen.size());
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          if (read.getOrDefault(r.partition(), 0) >= quota) {
            c.pause(List.of(tp)); // its share is read: the rest of this poll is not consumed
            continue;
          }
          read.merge(r.partition(), 1, Integer::sum);
          seen.add(r.partition() + " " + r.value());
          commit.put(tp, new OffsetAndMetadata(r.offset() + 1));
        }
      }
      c.commitSync(commit);
    }
    Files.write(file, seen);
    System.out.println("group " + group + " read " + seen.size() + " of " + topic + " and committed");
  }

  static void positions(String bs, String group) throws Exception {
    try (Admin admin = admin(bs)) {
      Map<TopicPartition, OffsetAndMetadata> o =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
      System.out.println(o.entrySet().stream().sorted(Comparator.comparing(e -> e.getKey().toString()))
          .map(e -> e.getKey() + "=" + e.getValue().offset()).collect(Collectors.joining(" ")));
    }
  }

  static void resume(String bs, String topic, String group, Path before) throws Exception {
    Set<String> all = new HashSet<>();
    readAll(bs, topic, "read_committed").forEach((p, rs) -> rs.forEach(r -> all.add(p + " " + r.value())));
    Set<String> old = new HashSet<>(Files.readAllLines(before));
    List<String> after = new ArrayList<>();
    try (KafkaConsumer<String, String> c = consumer(bs, group, "read_committed")) {
      c.subscribe(List.of(topic));
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      Set<String> covered = new HashSet<>(old);
      while (!covered.containsAll(all)) {
        if (System.nanoTime() > deadline) break;
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          String s = r.partition() + " " + r.value();
          after.add(s);
          covered.add(s);
        }
      }
      c.commitSync();
    }
    Set<String> lost = new HashSet<>(all);
    lost.removeAll(old);
    lost.removeAll(after);
    long dups = after.stream().filter(old::contains).count();
    System.out.println("resumed " + group + " on " + topic + ": before the move " + old.size() + ", after " + after.size()
        + ", duplicates " + dups + ", lost " + lost.size() + " of " + all.size());
    if (!lost.isEmpty()) {
      System.out.println("lost (first 5): " + lost.stream().sorted().limit(5).toList());
      System.exit(1);
    }
  }

  static void configs(String bs, String topic, String[] keys) throws Exception {
    try (Admin admin = admin(bs)) {
      ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      var c = admin.describeConfigs(List.of(r)).all().get(60, TimeUnit.SECONDS).get(r);
      System.out.println(Arrays.stream(keys).map(k -> k + "=" + (c.get(k) == null ? "(none)" : c.get(k).value()))
          .collect(Collectors.joining(" ")));
    }
  }

  static void describe(String bs, String topic) throws Exception {
    try (Admin admin = admin(bs)) {
      System.out.println("partitions " + partitions(admin, topic));
    }
  }

  static void localStart(String bs, String topic) throws Exception {
    try (Admin admin = admin(bs)) {
      int n = partitions(admin, topic);
      StringBuilder sb = new StringBuilder();
      for (int p = 0; p < n; p++) {
        TopicPartition tp = new TopicPartition(topic, p);
        long earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
        long local = admin.listOffsets(Map.of(tp, OffsetSpec.earliestLocal())).all().get().get(tp).offset();
        long latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
        sb.append(String.format("%s-%d earliest %d earliest-local %d latest %d%n", topic, p, earliest, local, latest));
      }
      System.out.print(sb);
    }
  }
}
