package io.strata.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TransactionsBase} with transaction version 1: the broker is downgraded first, as {@code kafka-features
 * downgrade --feature transaction.version=1} downgrades a Kafka 4.x broker, so the 4.4 client falls back to
 * AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v4 (no epoch bump), as clients before Kafka 4.0 do.
 */
class TransactionsTv1Test extends TransactionsBase {
  @RegisterExtension static Strata strata = new Strata();

  @BeforeAll
  static void downgrade() throws Exception {
    try (Admin admin = Clients.admin(strata)) {
      admin.updateFeatures(Map.of("transaction.version",
              new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new UpdateFeaturesOptions())
          .all().get(30, TimeUnit.SECONDS);
      assertEquals((short) 1, admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS)
          .finalizedFeatures().get("transaction.version").maxVersionLevel());
    }
  }

  @Override
  Strata strata() {
    return strata;
  }

  @Override
  short transactionVersion() {
    return 1;
  }
}
