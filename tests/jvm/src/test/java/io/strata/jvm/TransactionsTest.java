package io.strata.jvm;

import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TransactionsBase} with transaction version 2 (KIP-890 part 2), finalized by strata as by a Kafka 4.x broker:
 * the 4.4 client sends no AddPartitionsToTxn / AddOffsetsToTxn and EndTxn v5 bumps the epoch.
 */
class TransactionsTest extends TransactionsBase {
  @RegisterExtension static Strata strata = new Strata();

  @Override
  Strata strata() {
    return strata;
  }

  @Override
  short transactionVersion() {
    return 2;
  }
}
