package org.apache.kafka.common.utils;

/**
 * A bridge for Kafka's file connectors in {@code ConnectTest} (issue 32), test classpath only. connect-file is not
 * published for 4.4.0, and its newest build (4.3.1) calls {@code AppInfoParser.getVersion()} in this package, which
 * kafka-clients 4.4 moved to {@code org.apache.kafka.common.utils.internals}. That one call is the only thing the
 * connectors use that 4.4 does not have (checked with javap), so it is forwarded here.
 */
public final class AppInfoParser {
  private AppInfoParser() {}

  /** kafka-clients' version, as 4.4's {@code internals.AppInfoParser.getVersion()} reports it. */
  public static String getVersion() {
    return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
  }
}
