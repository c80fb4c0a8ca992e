//! Broker keys Kafka changes at run time (`DynamicBrokerConfig.AllDynamicConfigs`, `DynamicConfig.Broker`) beyond
//! the log defaults and the running components' keys (`crate::topics::dynamic`): those strata reads only at start
//! ([`NOT_APPLIED`], refused at run time with the reason) and those that change nothing on strata
//! ([`KEPT_NO_EFFECT`], kept and described with no effect). In `config`, so `docs/CONFIG.md` lists them.

use strata_storage::config_def::{ConfigKey, Type, Validator};

const AT_START: &str = "strata reads it once at start (restart with the new value)";

/// Keys Kafka changes at run time (`DynamicBrokerConfig.AllDynamicConfigs`) that strata cannot apply while
/// running, with why: refused by AlterConfigs / IncrementalAlterConfigs on BROKER with that reason.
pub const NOT_APPLIED: &[(&str, &str)] = &[
    ("num.recovery.threads.per.data.dir", AT_START),
    ("principal.builder.class", AT_START),
    ("advertised.listeners", AT_START),
    (
        "listener.security.protocol.map",
        "listeners are bound at start",
    ),
    ("ssl.keystore.location", "TLS material is loaded at start"),
    ("ssl.keystore.password", "TLS material is loaded at start"),
    ("ssl.key.password", "TLS material is loaded at start"),
    ("ssl.truststore.location", "TLS material is loaded at start"),
    ("ssl.truststore.password", "TLS material is loaded at start"),
    ("ssl.keystore.type", "TLS material is loaded at start"),
    ("ssl.keystore.key", "TLS material is loaded at start"),
    (
        "ssl.keystore.certificate.chain",
        "TLS material is loaded at start",
    ),
    ("ssl.truststore.type", "TLS material is loaded at start"),
    (
        "ssl.truststore.certificates",
        "TLS material is loaded at start",
    ),
    ("ssl.client.auth", "TLS material is loaded at start"),
    ("ssl.enabled.protocols", "TLS material is loaded at start"),
    ("sasl.jaas.config", AT_START),
    ("sasl.enabled.mechanisms", AT_START),
    ("connections.max.reauth.ms", AT_START),
    ("producer.id.expiration.ms", AT_START),
    ("transaction.partition.verification.enable", AT_START),
    ("remote.log.index.file.cache.total.size.bytes", AT_START),
    ("remote.log.manager.copier.thread.pool.size", AT_START),
    ("remote.log.manager.expiration.thread.pool.size", AT_START),
    ("remote.log.reader.threads", AT_START),
];

/// Keys Kafka changes at run time (`DynamicBrokerConfig.AllDynamicConfigs`, `DynamicConfig.Broker`) that strata
/// knows as Kafka keys with no effect ([`crate::config::KAFKA_ONLY_KEYS`]): Kerberos and SASL login refresh, JVM
/// TLS settings, thread pools, replication throttles, metric reporters. A dynamic update is checked by Kafka's
/// type and bounds, kept (persisted with the others) and described as Kafka describes it, and changes nothing.
/// Each with whether Kafka takes it per broker only (its `PerBrokerConfigs`, the listener security keys: refused
/// on the cluster-wide default resource with Kafka's INVALID_REQUEST).
pub const KEPT_NO_EFFECT: &[(ConfigKey, bool)] = &[
    (kept("ssl.protocol", Type::String), true),
    (kept("ssl.provider", Type::String), true),
    (kept("ssl.cipher.suites", Type::List), true),
    (kept("ssl.keymanager.algorithm", Type::String), true),
    (kept("ssl.trustmanager.algorithm", Type::String), true),
    (
        kept("ssl.endpoint.identification.algorithm", Type::String),
        true,
    ),
    (kept("ssl.secure.random.implementation", Type::String), true),
    (kept("ssl.engine.factory.class", Type::String), true),
    (
        kept("sasl.mechanism.inter.broker.protocol", Type::String),
        true,
    ),
    (kept("sasl.kerberos.service.name", Type::String), true),
    (kept("sasl.kerberos.kinit.cmd", Type::String), true),
    (
        kept("sasl.kerberos.ticket.renew.window.factor", Type::Double),
        true,
    ),
    (
        kept("sasl.kerberos.ticket.renew.jitter", Type::Double),
        true,
    ),
    (
        kept("sasl.kerberos.min.time.before.relogin", Type::Long),
        true,
    ),
    (
        kept("sasl.kerberos.principal.to.local.rules", Type::List),
        true,
    ),
    (
        kept("sasl.login.refresh.window.factor", Type::Double)
            .validator(Validator::BetweenF(0.5, 1.0)),
        true,
    ),
    (
        kept("sasl.login.refresh.window.jitter", Type::Double)
            .validator(Validator::BetweenF(0.0, 0.25)),
        true,
    ),
    (
        kept("sasl.login.refresh.min.period.seconds", Type::Short)
            .validator(Validator::Between(0, 900)),
        true,
    ),
    (
        kept("sasl.login.refresh.buffer.seconds", Type::Short)
            .validator(Validator::Between(0, 3600)),
        true,
    ),
    (
        kept("num.io.threads", Type::Int).validator(Validator::AtLeast(1)),
        false,
    ),
    (
        kept("num.network.threads", Type::Int).validator(Validator::AtLeast(1)),
        false,
    ),
    (
        kept("num.replica.fetchers", Type::Int).validator(Validator::AtLeast(1)),
        false,
    ),
    (
        kept("background.threads", Type::Int).validator(Validator::AtLeast(1)),
        false,
    ),
    (
        kept("max.connection.creation.rate", Type::Int).validator(Validator::AtLeast(0)),
        false,
    ),
    (kept("metric.reporters", Type::List), false),
    (
        kept("follower.replication.throttled.rate", Type::Long).validator(Validator::AtLeast(0)),
        false,
    ),
    (
        kept("leader.replication.throttled.rate", Type::Long).validator(Validator::AtLeast(0)),
        false,
    ),
    (
        kept("replica.alter.log.dirs.io.max.bytes.per.second", Type::Long)
            .validator(Validator::AtLeast(0)),
        false,
    ),
    (
        kept("remote.list.offsets.request.timeout.ms", Type::Long).validator(Validator::AtLeast(1)),
        false,
    ),
];

/// A row of [`KEPT_NO_EFFECT`]: the key with Kafka's type (its documentation is the catalog's).
const fn kept(name: &'static str, ty: Type) -> ConfigKey {
    ConfigKey::new(name, ty, "")
}

/// The [`KEPT_NO_EFFECT`] row of `name`, if any.
pub fn kept_no_effect(name: &str) -> Option<&'static (ConfigKey, bool)> {
    KEPT_NO_EFFECT.iter().find(|(k, _)| k.name == name)
}
