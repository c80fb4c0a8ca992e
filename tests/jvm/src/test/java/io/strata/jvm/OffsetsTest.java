package io.strata.jvm;

import static io.strata.jvm.Clients.consumer;
import static io.strata.jvm.Clients.createTopic;
import static io.strata.jvm.Clients.pollN;
import static io.strata.jvm.Clients.producer;
import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** beginningOffsets / endOffsets / offsetsForTimes, on a tiered topic whose early segments are remote only. */
class OffsetsTest {
  @RegisterExtension
  static Strata strata = new Strata()
      .with("log.retention.check.interval.ms", "200")
      .with("remote.log.manager.task.interval.ms", "200");

  static final long T0 = 1_700_000_000_000L;

  @Test
  void offsetsByTimeAndEndsOnATieredTopic() throws Exception {
    String topic = unique("tiered-offsets");
    createTopic(strata, topic, 1, Map.of("remote.storage.enable", "true", "segment.bytes", "4096",
        "local.retention.ms", "100", "retention.ms", "-1"));
    TopicPartition tp = new TopicPartition(topic, 0);
    int n = 300;
    // Record i has timestamp T0 + 10 * i; one batch per record (linger 0, sync sends) so segments roll often.
    try (KafkaProducer<String, String> p = producer(strata, Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
      for (int i = 0; i < n; i++) {
        p.send(new ProducerRecord<>(topic, 0, T0 + 10L * i, "k" + i, "v".repeat(40) + i)).get(30, TimeUnit.SECONDS);
      }
    }
    try (Admin admin = Clients.admin(strata)) {
      // Wait until the first segments are remote only (earliest local offset above 0).
      long[] local = {0};
      Clients.await("local log start above 0", null, () -> {
        try {
          local[0] = listOffset(admin, tp, OffsetSpec.earliestLocal()).offset();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        return local[0] > 0;
      });
      assertEquals(0L, listOffset(admin, tp, OffsetSpec.earliest()).offset());
      assertEquals((long) n, listOffset(admin, tp, OffsetSpec.latest()).offset());
      long tiered = listOffset(admin, tp, OffsetSpec.latestTiered()).offset();
      assertTrue(tiered >= local[0] - 1 && tiered < n, "latest tiered " + tiered + " vs local start " + local[0]);
      ListOffsetsResultInfo max = listOffset(admin, tp, OffsetSpec.maxTimestamp());
      assertEquals(n - 1L, max.offset());
      assertEquals(T0 + 10L * (n - 1), max.timestamp());
    }
    try (KafkaConsumer<String, String> c = consumer(strata, Map.of())) {
      assertEquals(0L, c.beginningOffsets(List.of(tp)).get(tp));
      assertEquals((long) n, c.endOffsets(List.of(tp)).get(tp));
      Map<TopicPartition, Long> q = new HashMap<>();
      // Remote range: the first record at or after T0 + 55 is record 6.
      q.put(tp, T0 + 55);
      OffsetAndTimestamp early = c.offsetsForTimes(q).get(tp);
      assertEquals(6L, early.offset());
      assertEquals(T0 + 60, early.timestamp());
      q.put(tp, T0 + 10L * (n - 2));
      assertEquals(n - 2L, c.offsetsForTimes(q).get(tp).offset());
      q.put(tp, T0 + 10L * n);
      assertNull(c.offsetsForTimes(q).get(tp), "no record at or after a later timestamp");
      // Read everything back from offset 0: the remote tier serves the start.
      c.assign(List.of(tp));
      c.seek(tp, early.offset());
      List<ConsumerRecord<String, String>> got = pollN(c, n - 6);
      assertEquals(n - 6, got.size());
      for (int i = 0; i < got.size(); i++) {
        assertEquals(6L + i, got.get(i).offset());
        assertEquals("k" + (6 + i), got.get(i).key());
        assertEquals(T0 + 10L * (6 + i), got.get(i).timestamp());
      }
      c.seekToBeginning(List.of(tp));
      assertEquals(0L, c.position(tp, Duration.ofSeconds(30)));
      assertEquals("k0", pollN(c, 1).get(0).key());
    }
  }

  static ListOffsetsResultInfo listOffset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
    return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(30, TimeUnit.SECONDS);
  }
}
