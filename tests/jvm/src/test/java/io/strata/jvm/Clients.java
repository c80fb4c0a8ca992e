package io.strata.jvm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Client builders and bounded waits shared by the tests. */
public final class Clients {
  public static final Duration DEADLINE = Duration.ofSeconds(30);

  private Clients() {}

  public static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  public static Admin admin(Strata s) {
    return Admin.create(s.props());
  }

  public static void createTopic(Strata s, String topic, int partitions, Map<String, String> configs)
      throws Exception {
    try (Admin admin = admin(s)) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
          .all().get(30, TimeUnit.SECONDS);
    }
  }

  public static KafkaProducer<String, String> producer(Strata s, Map<String, Object> extra) {
    Properties p = s.props();
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20000);
    p.putAll(extra);
    return new KafkaProducer<>(p);
  }

  public static KafkaConsumer<String, String> consumer(Strata s, Map<String, Object> extra) {
    Properties p = s.props();
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.putAll(extra);
    return new KafkaConsumer<>(p);
  }

  /** Polls until {@code n} records came (or the deadline passed) and returns what came, at least until then. */
  public static List<ConsumerRecord<String, String>> pollN(KafkaConsumer<String, String> c, int n) {
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    long end = System.nanoTime() + DEADLINE.toNanos();
    while (out.size() < n && System.nanoTime() < end) {
      c.poll(Duration.ofMillis(200)).forEach(out::add);
    }
    return out;
  }

  /** Polls for {@code d} and returns everything that came (to check that nothing more comes). */
  public static List<ConsumerRecord<String, String>> pollFor(KafkaConsumer<String, String> c, Duration d) {
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    long end = System.nanoTime() + d.toNanos();
    while (System.nanoTime() < end) {
      c.poll(Duration.ofMillis(100)).forEach(out::add);
    }
    return out;
  }

  /** Waits (bounded) for a condition, polling the consumer meanwhile when one is given. */
  public static void await(String what, KafkaConsumer<?, ?> poll, BooleanSupplier cond) {
    long end = System.nanoTime() + DEADLINE.toNanos();
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < end, "timed out waiting for " + what);
      if (poll != null) {
        poll.poll(Duration.ofMillis(100));
      } else {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
    }
  }
}
