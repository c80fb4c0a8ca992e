package io.strata.jvm.spring;

import java.io.IOException;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * spring-kafka-test's EmbeddedKafka (one KRaft broker) alone in a JVM, for {@link FootprintTest}: prints
 * {@code READY <bootstrap> <ms to start the broker>} and runs until its stdin closes. With {@code idle} it starts no
 * broker (the bare JVM with the same classpath, for the JVM's own share of the figures).
 */
public final class EmbeddedKafkaMain {
  private EmbeddedKafkaMain() {}

  public static void main(String[] args) throws IOException {
    if (args.length > 0 && args[0].equals("idle")) {
      System.out.println("READY - 0");
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the test closes stdin
      }
      return;
    }
    long t0 = System.nanoTime();
    EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
    broker.afterPropertiesSet();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println("READY " + broker.getBrokersAsString() + " " + ms);
    System.out.flush();
    while (System.in.read() >= 0) {
      // until the test closes stdin
    }
    broker.destroy();
  }
}
