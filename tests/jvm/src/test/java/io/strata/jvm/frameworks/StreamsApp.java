package io.strata.jvm.frameworks;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * One Kafka Streams instance of the word-count topology that {@link StreamsTest} runs as separate processes:
 * input (key = user, value = word) is re-keyed by word (a repartition topic), counted into a RocksDB store
 * {@code word-counts} (its changelog a compacted topic) and, in 10 s windows, into {@code word-window-counts};
 * both tables stream to output topics. {@code processing.guarantee=exactly_once_v2}, no standby replicas, so an
 * instance taking over a task of a dead one restores it from the changelog.
 *
 * <p>Args: bootstrap, application.id, state.dir, input, counts output, window counts output. Prints
 * {@code STATE <state>} on each state change and {@code RESTORED <store> <topic-partition> <records>} at the end
 * of each restore, for the test to wait on.
 */
public final class StreamsApp {
  private StreamsApp() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String appId = args[1];
    String stateDir = args[2];
    String input = args[3];
    String counts = args[4];
    String windowCounts = args[5];

    StreamsBuilder b = new StreamsBuilder();
    KGroupedStream<String, String> byWord = b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .selectKey((user, word) -> word)
        .groupByKey(Grouped.with("by-word", Serdes.String(), Serdes.String()));
    byWord.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts"))
        .toStream()
        .to(counts, Produced.with(Serdes.String(), Serdes.Long()));
    byWord.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofHours(1)))
        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("word-window-counts"))
        .toStream()
        .map((w, n) -> KeyValue.pair(w.key() + "@" + w.window().start(), n))
        .to(windowCounts, Produced.with(Serdes.String(), Serdes.Long()));

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 0);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    // A dead instance leaves the group within seconds, not the defaults' 45 s / 5 min.
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG), 20000);

    KafkaStreams streams = new KafkaStreams(b.build(), p);
    streams.setStateListener((now, before) -> say("STATE " + now));
    streams.setGlobalStateRestoreListener(new StateRestoreListener() {
      @Override
      public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}

      @Override
      public void onBatchRestored(TopicPartition tp, String store, long endOffset, long n) {}

      @Override
      public void onRestoreEnd(TopicPartition tp, String store, long total) {
        say("RESTORED " + store + " " + tp + " " + total);
      }
    });
    streams.setUncaughtExceptionHandler(e -> {
      say("ERROR " + e);
      e.printStackTrace();
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
          .REPLACE_THREAD;
    });
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(Duration.ofSeconds(20));
      done.countDown();
    }));
    streams.start();
    done.await();
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
