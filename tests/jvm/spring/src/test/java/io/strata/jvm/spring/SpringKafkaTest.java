package io.strata.jvm.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.jvm.Strata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Spring for Apache Kafka (Spring Boot 4.0, spring-kafka 4.0) against strata (issue 32), started for the class by
 * the {@link Strata} JUnit 5 extension and handed to Spring with {@code @DynamicPropertySource}. Boot's
 * auto-configured {@code KafkaTemplate} is transactional ({@code transaction-id-prefix}), and so are the
 * {@code @KafkaListener} containers (a {@code KafkaTransactionManager}): a listener turns each order into an
 * invoice inside the container's transaction (its send and its consumer offsets commit together); a second
 * listener reads the invoices read_committed. A transaction that throws is rolled back and never seen.
 */
@SpringBootTest(classes = SpringKafkaTest.App.class)
class SpringKafkaTest {
  @RegisterExtension static Strata strata = new Strata();

  @DynamicPropertySource
  static void kafka(DynamicPropertyRegistry registry) {
    registry.add("spring.kafka.bootstrap-servers", strata::bootstrap);
  }

  /**
   * Stops Spring's Kafka clients before the extension stops the broker (extensions' afterAll run after this; the
   * cached context itself closes when the JVM exits).
   */
  @AfterAll
  static void stopClients(@Autowired KafkaListenerEndpointRegistry registry, @Autowired ProducerFactory<?, ?> pf) {
    registry.stop();
    pf.reset();
  }

  @SpringBootApplication
  static class App {
    @Bean
    NewTopic orders() {
      return TopicBuilder.name("orders").partitions(3).replicas(1).build();
    }

    @Bean
    NewTopic invoices() {
      return TopicBuilder.name("invoices").partitions(3).replicas(1).build();
    }

    @Bean
    Listeners listeners(KafkaTemplate<Object, Object> template) {
      return new Listeners(template);
    }
  }

  @Component
  static class Listeners {
    final KafkaTemplate<Object, Object> template;
    final BlockingQueue<String> invoices = new LinkedBlockingQueue<>();

    Listeners(KafkaTemplate<Object, Object> template) {
      this.template = template;
    }

    /** Runs in the container's Kafka transaction: the invoice and the order's offset commit together. */
    @KafkaListener(id = "billing", topics = "orders")
    void onOrder(String order) {
      template.send("invoices", order, "invoice-for-" + order);
    }

    @KafkaListener(id = "audit", topics = "invoices")
    void onInvoice(String invoice) {
      invoices.add(invoice);
    }
  }

  @Autowired KafkaTemplate<Object, Object> template;
  @Autowired Listeners listeners;

  @Test
  void templateListenerAndTransactionsAgainstStrata() throws Exception {
    assertTrue(template.isTransactional(), "Boot made the template transactional");
    int n = 50;
    template.executeInTransaction(t -> {
      for (int i = 0; i < n; i++) t.send("orders", "order-" + i, "order-" + i);
      return null;
    });
    // Rolled back: the listener never sees these orders, so no invoice comes for them.
    assertThrows(IllegalStateException.class, () -> template.executeInTransaction(t -> {
      for (int i = 0; i < 10; i++) t.send("orders", "rolled-back-" + i, "rolled-back-" + i);
      t.flush();
      throw new IllegalStateException("roll back");
    }));
    template.executeInTransaction(t -> t.send("orders", "last", "last"));

    List<String> got = new ArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (got.size() < n + 1 && System.nanoTime() < end) {
      String s = listeners.invoices.poll(200, TimeUnit.MILLISECONDS);
      if (s != null) got.add(s);
    }
    String extra = listeners.invoices.poll(1, TimeUnit.SECONDS);
    assertNull(extra, "nothing past the committed orders (a rolled-back order or a duplicate): " + extra);
    List<String> want = new ArrayList<>();
    for (int i = 0; i < n; i++) want.add("invoice-for-order-" + i);
    want.add("invoice-for-last");
    got.sort(null);
    want.sort(null);
    assertEquals(want, got, "one invoice per committed order\n" + strata.logTail(20));
  }
}
