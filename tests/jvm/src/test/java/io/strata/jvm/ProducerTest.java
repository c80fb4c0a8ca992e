package io.strata.jvm;

import static io.strata.jvm.Clients.consumer;
import static io.strata.jvm.Clients.createTopic;
import static io.strata.jvm.Clients.pollN;
import static io.strata.jvm.Clients.producer;
import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The idempotent producer (acks=all) with every codec and headers, read back exactly. */
class ProducerTest {
  @RegisterExtension static Strata strata = new Strata();

  @ParameterizedTest(name = "compression.type={0}")
  @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
  void idempotentAcksAllEveryCodecWithHeaders(String codec) throws Exception {
    String topic = unique("produce-" + codec);
    createTopic(strata, topic, 3, Map.of());
    int n = 600;
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    cfg.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
    cfg.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    List<Future<RecordMetadata>> acks = new ArrayList<>();
    try (KafkaProducer<String, String> p = producer(strata, cfg)) {
      for (int i = 0; i < n; i++) {
        RecordHeaders h = new RecordHeaders();
        h.add("i", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
        h.add("codec", codec.getBytes(StandardCharsets.UTF_8));
        if (i % 2 == 0) h.add("null-header", null);
        acks.add(p.send(new ProducerRecord<>(topic, null, "k" + (i % 17), "value-" + i + "-" + "x".repeat(i % 50), h)));
      }
      p.flush();
    }
    Map<TopicPartition, Long> next = new HashMap<>();
    for (Future<RecordMetadata> f : acks) {
      RecordMetadata md = f.get(30, TimeUnit.SECONDS);
      TopicPartition tp = new TopicPartition(md.topic(), md.partition());
      long want = next.getOrDefault(tp, 0L);
      assertEquals(want, md.offset(), "offsets in a partition are dense and in send order");
      next.put(tp, want + 1);
    }

    try (KafkaConsumer<String, String> c = consumer(strata, Map.of())) {
      List<TopicPartition> tps = List.of(0, 1, 2).stream().map(p -> new TopicPartition(topic, p)).toList();
      c.assign(tps);
      List<ConsumerRecord<String, String>> got = pollN(c, n);
      assertEquals(n, got.size(), "every record read back, none twice");
      Map<Integer, Integer> lastIndexPerPartition = new HashMap<>();
      boolean[] seen = new boolean[n];
      for (ConsumerRecord<String, String> r : got) {
        Header ih = r.headers().lastHeader("i");
        assertNotNull(ih, "header i present");
        int i = Integer.parseInt(new String(ih.value(), StandardCharsets.UTF_8));
        assertEquals("k" + (i % 17), r.key());
        assertEquals("value-" + i + "-" + "x".repeat(i % 50), r.value());
        assertArrayEquals(codec.getBytes(StandardCharsets.UTF_8), r.headers().lastHeader("codec").value());
        Header nh = r.headers().lastHeader("null-header");
        if (i % 2 == 0) {
          assertNotNull(nh, "null-valued header kept");
          assertEquals(null, nh.value());
        } else {
          assertEquals(null, nh);
        }
        assertEquals(false, seen[i], "record " + i + " read twice");
        seen[i] = true;
        Integer last = lastIndexPerPartition.put(r.partition(), i);
        if (last != null) assertEquals(true, last < i, "partition order kept");
      }
      // Nothing more after the n records.
      assertEquals(0, c.poll(Duration.ofMillis(300)).count());
    }
  }
}
