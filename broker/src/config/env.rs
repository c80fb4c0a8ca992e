//! The environment as the apache/kafka container image reads it (`KafkaDockerWrapper.getServerConfigsFromEnv` and
//! the image's `configure` script): every `KAFKA_*` variable but the image's own is a property. The binary passes
//! `std::env::vars()` here; the library never reads the environment itself.

/// Variables the image reads for itself (JVM, log4j, JMX), never properties.
const EXCLUDED: &[&str] = &[
    "KAFKA_VERSION",
    "KAFKA_HEAP_OPTS",
    "KAFKA_LOG4J_OPTS",
    "KAFKA_OPTS",
    "KAFKA_JMX_OPTS",
    "KAFKA_JVM_PERFORMANCE_OPTS",
    "KAFKA_GC_LOG_OPTS",
    "KAFKA_LOG4J_ROOT_LOGLEVEL",
    "KAFKA_LOG4J_LOGGERS",
    "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    "KAFKA_JMX_HOSTNAME",
];

/// Prefixes of the image's own variable families (`KAFKA_JMX_PORT`, `KAFKA_LOG4J_*`), never properties.
const EXCLUDED_PREFIXES: &[&str] = &["KAFKA_JMX_", "KAFKA_LOG4J_"];

/// The property a variable names, as the image maps it: drop `KAFKA_`, lower-case, then `_` → `.`, `___` → `-`,
/// `__` → `_` (`KAFKA_LOG_DIRS` → `log.dirs`, `KAFKA_ABC___DEF` → `abc-def`, `KAFKA_ABC__DEF` → `abc_def`).
/// The bitnami/kafka image's `KAFKA_CFG_*` variables map the same way after `KAFKA_CFG_`
/// (`KAFKA_CFG_LOG_DIRS` → `log.dirs`). `None` for other variables and the image's own.
pub fn property_name(var: &str) -> Option<String> {
    let rest = var.strip_prefix("KAFKA_")?;
    if rest.is_empty()
        || EXCLUDED.contains(&var)
        || EXCLUDED_PREFIXES.iter().any(|p| var.starts_with(p))
    {
        return None;
    }
    let rest = rest.strip_prefix("CFG_").unwrap_or(rest);
    if rest.is_empty() {
        return None;
    }
    Some(
        rest.to_lowercase()
            .replace('_', ".")
            .replace("...", "-")
            .replace("..", "_"),
    )
}

/// The properties `vars` set, sorted by name. As the image's `configure` script: without `KAFKA_LISTENERS`, a
/// broker with `KAFKA_ADVERTISED_LISTENERS` listens on the advertised listeners with their hosts replaced by
/// `0.0.0.0`.
pub fn properties_from_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    let mut props: Vec<(String, String)> = vars
        .into_iter()
        .filter_map(|(k, v)| Some((property_name(&k)?, v)))
        .collect();
    props.sort();
    let get = |name: &str| {
        props
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let controller_only = get("process.roles").is_some_and(|r| r.trim() == "controller");
    if get("listeners").is_none() && !controller_only {
        if let Some(adv) = get("advertised.listeners") {
            let listeners: Vec<String> = adv
                .split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(|e| match e.split_once("://") {
                    Some((name, addr)) => {
                        let port = addr.rsplit_once(':').map_or(addr, |(_, p)| p);
                        format!("{name}://0.0.0.0:{port}")
                    }
                    None => e.to_string(),
                })
                .collect();
            props.push(("listeners".into(), listeners.join(",")));
            props.sort();
        }
    }
    props
}

/// The cluster id of the `CLUSTER_ID` variable, as the apache/kafka image formats its storage with it (a Kafka
/// UUID: 22 characters of URL-safe base64). `Ok(None)` when unset or empty; a value that is not a Kafka UUID is an
/// error naming it.
pub fn cluster_id_from_env<'a>(
    vars: impl IntoIterator<Item = &'a (String, String)>,
) -> Result<Option<String>, crate::Error> {
    let Some((_, v)) = vars.into_iter().find(|(k, _)| k == "CLUSTER_ID") else {
        return Ok(None);
    };
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    match strata_storage::parse_kafka_uuid(v) {
        Some(_) => Ok(Some(v.to_string())),
        None => Err(crate::Error::config(
            "CLUSTER_ID".into(),
            v.to_string(),
            "not a Kafka cluster id (22 characters of URL-safe base64, as `kafka-storage random-uuid` prints)"
                .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        properties_from_env(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn kafka_variables_map_to_properties_as_the_image_does() {
        assert_eq!(property_name("KAFKA_LOG_DIRS").as_deref(), Some("log.dirs"));
        assert_eq!(property_name("KAFKA_ABC___DEF").as_deref(), Some("abc-def"));
        assert_eq!(property_name("KAFKA_ABC__DEF").as_deref(), Some("abc_def"));
        assert_eq!(
            property_name("KAFKA_LISTENER_NAME_SASLTLS_SCRAM___SHA___256_SASL_JAAS_CONFIG")
                .as_deref(),
            Some("listener.name.sasltls.scram-sha-256.sasl.jaas.config")
        );
    }

    #[test]
    fn other_and_image_variables_are_not_properties() {
        assert_eq!(property_name("PATH"), None);
        assert_eq!(property_name("CLUSTER_ID"), None);
        let vars = |v: &str| vec![("CLUSTER_ID".to_string(), v.to_string())];
        assert_eq!(
            cluster_id_from_env(&vars("MkU3OEVBNTcwNTJENDM2Qk")).unwrap(),
            Some("MkU3OEVBNTcwNTJENDM2Qk".to_string())
        );
        assert_eq!(cluster_id_from_env(&vars("")).unwrap(), None);
        let e = cluster_id_from_env(&vars("my-cluster")).unwrap_err();
        assert!(
            e.to_string().contains("CLUSTER_ID") && e.to_string().contains("my-cluster"),
            "{e}"
        );
        assert_eq!(property_name("KAFKA_HEAP_OPTS"), None);
        assert_eq!(property_name("KAFKA_JMX_HOSTNAME"), None);
        assert_eq!(
            property_name("KAFKA_JMX_PORT"),
            None,
            "the image's JMX family"
        );
        assert_eq!(property_name("KAFKA_LOG4J_APPENDER"), None);
        // bitnami/kafka's KAFKA_CFG_* variables.
        assert_eq!(
            property_name("KAFKA_CFG_LOG_DIRS").as_deref(),
            Some("log.dirs")
        );
        assert_eq!(
            property_name("KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP").as_deref(),
            Some("listener.security.protocol.map")
        );
        assert_eq!(property_name("KAFKA_CFG_"), None);
        assert_eq!(property_name("KAFKA_"), None);
        assert_eq!(env(&[("HOME", "/root"), ("KAFKA_OPTS", "-X")]), vec![]);
    }

    #[test]
    fn listeners_follow_advertised_listeners_when_not_given() {
        let props = env(&[(
            "KAFKA_ADVERTISED_LISTENERS",
            "PLAINTEXT_HOST://localhost:9092,PLAINTEXT://broker:19092",
        )]);
        assert!(props.contains(&(
            "listeners".into(),
            "PLAINTEXT_HOST://0.0.0.0:9092,PLAINTEXT://0.0.0.0:19092".into()
        )));
        let given = env(&[
            ("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://localhost:9092"),
            ("KAFKA_LISTENERS", "PLAINTEXT://127.0.0.1:9092"),
        ]);
        assert!(given.contains(&("listeners".into(), "PLAINTEXT://127.0.0.1:9092".into())));
    }
}
