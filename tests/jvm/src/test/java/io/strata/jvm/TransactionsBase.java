package io.strata.jvm;

import static io.strata.jvm.Clients.consumer;
import static io.strata.jvm.Clients.createTopic;
import static io.strata.jvm.Clients.pollFor;
import static io.strata.jvm.Clients.pollN;
import static io.strata.jvm.Clients.producer;
import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;

/**
 * The transactional producer: commit, abort, read_committed readers, fencing, offsets in a transaction; run by
 * {@link TransactionsTest} with transaction version 2 (what strata finalizes, as Kafka 4.x does) and by
 * {@link TransactionsTv1Test} with the broker downgraded to transaction version 1 (`kafka-features downgrade`).
 */
abstract class TransactionsBase {
  /** The broker of the concrete class. */
  abstract Strata strata();

  /** The transaction version the broker finalizes, so the client uses. */
  abstract short transactionVersion();

  KafkaProducer<String, String> txProducer(String txId) {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txId);
    cfg.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30000);
    return producer(strata(), cfg);
  }

  KafkaConsumer<String, String> reader(String isolation) {
    return consumer(strata(), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation));
  }

  /**
   * The client really uses the finalized transaction version: under version 2 (KIP-890 part 2) every commit or
   * abort bumps the producer epoch (DescribeTransactions and the partition's producer state show it), under
   * version 1 the epoch stays where InitProducerId put it.
   */
  @Test
  void epochFollowsTheTransactionVersion() throws Exception {
    String topic = unique("tx-tv");
    createTopic(strata(), topic, 1, Map.of());
    String txId = unique("txid");
    TopicPartition tp = new TopicPartition(topic, 0);
    try (Admin admin = Clients.admin(strata());
        KafkaProducer<String, String> p = txProducer(txId)) {
      FeatureMetadata features = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
      assertEquals(transactionVersion(),
          features.finalizedFeatures().get("transaction.version").maxVersionLevel());
      p.initTransactions();
      int initial = admin.describeTransactions(List.of(txId)).description(txId).get(30, TimeUnit.SECONDS)
          .producerEpoch();
      for (int i = 0; i < 3; i++) {
        p.beginTransaction();
        p.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
        if (i == 1) {
          p.abortTransaction();
        } else {
          p.commitTransaction();
        }
      }
      TransactionDescription d = admin.describeTransactions(List.of(txId)).description(txId)
          .get(30, TimeUnit.SECONDS);
      int bumps = transactionVersion() >= 2 ? 3 : 0;
      assertEquals(initial + bumps, d.producerEpoch(), "epoch after two commits and an abort: " + d);
      List<ProducerState> producers = admin.describeProducers(List.of(tp)).partitionResult(tp)
          .get(30, TimeUnit.SECONDS).activeProducers();
      assertEquals(1, producers.size(), producers.toString());
      assertEquals(initial + bumps, producers.get(0).producerEpoch(),
          "the last marker carries the epoch: " + producers);
    }
    try (KafkaConsumer<String, String> rc = reader("read_committed")) {
      rc.assign(List.of(tp));
      List<String> got = values(pollN(rc, 2));
      got.addAll(values(pollFor(rc, Duration.ofMillis(500))));
      assertEquals(List.of("v0", "v2"), got);
    }
  }

  static List<String> values(List<ConsumerRecord<String, String>> rs) {
    return rs.stream().map(ConsumerRecord::value).collect(Collectors.toList());
  }

  @Test
  void commitAndAbortSeenByReadCommittedAndReadUncommitted() throws Exception {
    String topic = unique("tx");
    createTopic(strata(), topic, 2, Map.of());
    try (KafkaProducer<String, String> p = txProducer(unique("txid"))) {
      p.initTransactions();
      p.beginTransaction();
      for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, i % 2, "k", "committed-" + i));
      p.commitTransaction();
      p.beginTransaction();
      for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, i % 2, "k", "aborted-" + i));
      p.flush();
      p.abortTransaction();
      p.beginTransaction();
      for (int i = 0; i < 4; i++) p.send(new ProducerRecord<>(topic, i % 2, "k", "second-" + i));
      p.commitTransaction();
    }
    List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
    try (KafkaConsumer<String, String> rc = reader("read_committed");
        KafkaConsumer<String, String> ru = reader("read_uncommitted")) {
      rc.assign(tps);
      ru.assign(tps);
      List<String> committed = values(pollN(rc, 14));
      committed.addAll(values(pollFor(rc, Duration.ofMillis(500))));
      assertEquals(14, committed.size(), "read_committed sees the two committed transactions only: " + committed);
      assertTrue(committed.stream().noneMatch(v -> v.startsWith("aborted")), committed.toString());
      List<String> all = values(pollN(ru, 24));
      all.addAll(values(pollFor(ru, Duration.ofMillis(500))));
      assertEquals(24, all.size(), "read_uncommitted sees aborted records too: " + all);
      assertEquals(10, all.stream().filter(v -> v.startsWith("aborted")).count());
      // Both end at the same offsets (control records are skipped but counted).
      Map<TopicPartition, Long> end = rc.endOffsets(tps);
      for (TopicPartition tp : tps) {
        assertEquals(end.get(tp), rc.position(tp), "read_committed position at the LSO = end " + tp);
        // 5 + 5 + 2 data records and 3 markers per partition.
        assertEquals(15L, end.get(tp), "end offset of " + tp);
      }
    }
  }

  @Test
  void openTransactionHoldsReadCommittedAtTheLastStableOffset() throws Exception {
    String topic = unique("tx-lso");
    createTopic(strata(), topic, 1, Map.of());
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaProducer<String, String> p = txProducer(unique("txid"));
        KafkaConsumer<String, String> rc = reader("read_committed")) {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(topic, 0, "k", "open")).get(30, TimeUnit.SECONDS);
      rc.assign(List.of(tp));
      assertEquals(0, pollFor(rc, Duration.ofMillis(800)).size(), "nothing past an open transaction");
      assertEquals(0L, rc.endOffsets(List.of(tp)).get(tp), "read_committed end offset is the LSO");
      p.commitTransaction();
      List<ConsumerRecord<String, String>> got = pollN(rc, 1);
      assertEquals(List.of("open"), values(got));
      assertEquals(2L, rc.endOffsets(List.of(tp)).get(tp));
    }
  }

  @Test
  void secondProducerWithTheSameTransactionalIdFencesTheFirst() throws Exception {
    String topic = unique("tx-fence");
    createTopic(strata(), topic, 1, Map.of());
    String txId = unique("txid");
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaProducer<String, String> first = txProducer(txId)) {
      first.initTransactions();
      first.beginTransaction();
      first.send(new ProducerRecord<>(topic, 0, "k", "from-first")).get(30, TimeUnit.SECONDS);
      try (KafkaProducer<String, String> second = txProducer(txId)) {
        // Fences the first and aborts its open transaction.
        second.initTransactions();
        // As on Kafka (since 2.7): a send with the old epoch fails with INVALID_PRODUCER_EPOCH (abortable), and
        // the coordinator answers the fenced producer's EndTxn with PRODUCER_FENCED.
        java.util.concurrent.ExecutionException send = assertThrows(java.util.concurrent.ExecutionException.class,
            () -> first.send(new ProducerRecord<>(topic, 0, "k", "after-fence")).get(30, TimeUnit.SECONDS));
        assertTrue(send.getCause() instanceof InvalidProducerEpochException, "send after the fence: " + send);
        KafkaException commit = assertThrows(KafkaException.class, first::commitTransaction);
        assertTrue(isFenced(commit) || commit instanceof InvalidProducerEpochException,
            "commit after the fence fails with the abortable error: " + commit);
        KafkaException abort = assertThrows(KafkaException.class, first::abortTransaction);
        assertTrue(isFenced(abort), "the first producer is fenced: " + abort);
        second.beginTransaction();
        second.send(new ProducerRecord<>(topic, 0, "k", "from-second"));
        second.commitTransaction();
      }
    }
    try (KafkaConsumer<String, String> rc = reader("read_committed")) {
      rc.assign(List.of(tp));
      List<String> got = values(pollN(rc, 1));
      got.addAll(values(pollFor(rc, Duration.ofMillis(500))));
      assertEquals(List.of("from-second"), got, "the fenced transaction was aborted");
    }
  }

  @Test
  void fencedProducersCommitIsRefusedWithProducerFenced() throws Exception {
    String topic = unique("tx-fence-commit");
    createTopic(strata(), topic, 1, Map.of());
    String txId = unique("txid");
    try (KafkaProducer<String, String> first = txProducer(txId);
        KafkaProducer<String, String> second = txProducer(txId)) {
      first.initTransactions();
      first.beginTransaction();
      first.send(new ProducerRecord<>(topic, 0, "k", "from-first")).get(30, TimeUnit.SECONDS);
      second.initTransactions();
      assertThrows(ProducerFencedException.class, first::commitTransaction);
    }
    try (KafkaConsumer<String, String> rc = reader("read_committed")) {
      rc.assign(List.of(new TopicPartition(topic, 0)));
      assertEquals(0, pollFor(rc, Duration.ofMillis(800)).size(), "the fenced transaction was aborted");
    }
  }

  static boolean isFenced(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ProducerFencedException) return true;
    }
    return false;
  }

  @Test
  void sendOffsetsToTransactionCommitsOffsetsOnlyWithTheTransaction() throws Exception {
    String in = unique("tx-in");
    String out = unique("tx-out");
    createTopic(strata(), in, 1, Map.of());
    createTopic(strata(), out, 1, Map.of());
    String group = unique("tx-group");
    TopicPartition inTp = new TopicPartition(in, 0);
    try (KafkaProducer<String, String> p = producer(strata(), Map.of())) {
      for (int i = 0; i < 6; i++) p.send(new ProducerRecord<>(in, 0, "k", "in-" + i));
    }
    try (KafkaProducer<String, String> p = txProducer(unique("txid"));
        KafkaConsumer<String, String> c = consumer(strata(), Map.of(
            ConsumerConfig.GROUP_ID_CONFIG, group,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        Admin admin = Clients.admin(strata())) {
      p.initTransactions();
      c.subscribe(List.of(in));
      List<ConsumerRecord<String, String>> batch = pollN(c, 6);
      assertEquals(6, batch.size());
      // First attempt aborted: neither the output nor the offsets stay.
      p.beginTransaction();
      for (ConsumerRecord<String, String> r : batch) p.send(new ProducerRecord<>(out, 0, r.key(), "out-" + r.value()));
      p.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(3)), c.groupMetadata());
      p.abortTransaction();
      assertNull(committed(admin, group, inTp), "aborted offsets are not committed");
      // Second attempt committed.
      p.beginTransaction();
      for (ConsumerRecord<String, String> r : batch) p.send(new ProducerRecord<>(out, 0, r.key(), "out-" + r.value()));
      p.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(6, "meta")), c.groupMetadata());
      p.commitTransaction();
      OffsetAndMetadata om = committed(admin, group, inTp);
      assertEquals(6L, om.offset());
      assertEquals("meta", om.metadata());
      assertEquals(6L, c.committed(java.util.Set.of(inTp)).get(inTp).offset());
    }
    try (KafkaConsumer<String, String> rc = reader("read_committed")) {
      rc.assign(List.of(new TopicPartition(out, 0)));
      List<String> got = values(pollN(rc, 6));
      got.addAll(values(pollFor(rc, Duration.ofMillis(500))));
      assertEquals(List.of("out-in-0", "out-in-1", "out-in-2", "out-in-3", "out-in-4", "out-in-5"), got);
    }
  }

  static OffsetAndMetadata committed(Admin admin, String group, TopicPartition tp) throws Exception {
    return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(tp);
  }
}
