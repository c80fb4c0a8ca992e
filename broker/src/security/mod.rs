//! TLS and SASL of the client listeners: per listener, what its protocol needs, built once at start-up from the
//! `ssl.*` / `sasl.*` keys (Kafka's rule: `listener.name.<name>.<key>` wins over `<key>`). A bad key, certificate,
//! file or password stops start-up with an error naming the key and the file.

pub mod client_cert;
pub mod oauthbearer;
pub mod sasl;
pub mod scram;
pub mod self_signed;
pub mod tls;
pub mod x509_v1;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::authz::principal::SslPrincipalMapper;
use crate::config::listeners::Served;
use crate::config::BrokerConfig;
use crate::error::{Error, Result};

/// What one listener's protocol needs: a TLS acceptor (SSL, SASL_SSL) and the SASL users (SASL_*).
#[derive(Clone, Default)]
pub struct ListenerSecurity {
    /// The listener's name.
    pub name: String,
    /// `listener.security.protocol.map`'s protocol for it.
    pub protocol: String,
    /// The TLS server side, for SSL and SASL_SSL.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// The SASL mechanisms and credentials, for SASL_PLAINTEXT and SASL_SSL.
    pub sasl: Option<Arc<sasl::SaslConfig>>,
    /// `ssl.principal.mapping.rules` (per listener as Kafka reads it): an SSL client certificate's principal.
    pub principal_mapper: Arc<SslPrincipalMapper>,
}

impl std::fmt::Debug for ListenerSecurity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerSecurity")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("tls", &self.tls.is_some())
            .field("sasl", &self.sasl)
            .finish()
    }
}

/// The keys of one listener, read as Kafka reads them.
#[derive(Debug, Clone, Copy)]
pub struct ListenerProps<'a> {
    props: &'a BTreeMap<String, String>,
    listener: &'a str,
}

impl<'a> ListenerProps<'a> {
    /// The keys of `listener` among `props`.
    pub fn new(props: &'a BTreeMap<String, String>, listener: &'a str) -> Self {
        ListenerProps { props, listener }
    }

    /// `listener.name.<listener>.<key>` if given, else `<key>`: (the name found, its value).
    pub fn get(&self, key: &str) -> Option<(String, &'a str)> {
        let prefixed = format!("listener.name.{}.{key}", self.listener.to_ascii_lowercase());
        if let Some(v) = self.props.get(&prefixed) {
            return Some((prefixed, v.as_str()));
        }
        self.props.get(key).map(|v| (key.to_string(), v.as_str()))
    }

    /// `listener.name.<listener>.<key>` only (keys Kafka reads per listener and never from the global one).
    pub fn prefixed(&self, key: &str) -> Option<(String, &'a str)> {
        self.get(key)
            .filter(|(k, _)| k.starts_with("listener.name."))
    }

    /// Like [`get`](Self::get), `default` when neither is given.
    pub fn get_or(&self, key: &str, default: &'a str) -> (String, &'a str) {
        self.get(key).unwrap_or((key.to_string(), default))
    }
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> Error {
    Error::config(key.to_string(), value.to_string(), reason.into())
}

/// Builds what each client listener of `config` needs (in the order of [`BrokerConfig::client_listeners`]).
/// `data_dir` holds the developer CA when `ssl.self.signed.enable` is on. Reads the key and certificate files.
pub fn build(config: &BrokerConfig, data_dir: &Path) -> Result<Vec<ListenerSecurity>> {
    config
        .client_listeners()
        .iter()
        .map(|served| build_one(config, served, data_dir))
        .collect()
}

fn build_one(config: &BrokerConfig, served: &Served, data_dir: &Path) -> Result<ListenerSecurity> {
    let props = ListenerProps::new(&config.security_props, &served.name);
    let protocol = served.protocol.as_str();
    let tls = match protocol {
        "SSL" | "SASL_SSL" => {
            let self_signed = config
                .config_values()
                .value(&crate::config::keys::SSL_SELF_SIGNED_ENABLE);
            // The developer certificate's names: where clients are told to connect, and the bound host.
            let mut hosts: Vec<String> = served.advertised.iter().map(|(h, _)| h.clone()).collect();
            hosts.push(served.bind.ip().to_string());
            Some(tls::acceptor(
                &props,
                &served.name,
                self_signed.then_some(data_dir),
                &hosts,
                protocol == "SASL_SSL",
            )?)
        }
        _ => None,
    };
    let sasl = match protocol {
        "SASL_PLAINTEXT" | "SASL_SSL" => Some(Arc::new(sasl::SaslConfig::from_props(
            &props,
            config
                .config_values()
                .value(&crate::config::keys::CONNECTIONS_MAX_REAUTH_MS),
        )?)),
        _ => None,
    };
    let (key, rules) = props.get_or("ssl.principal.mapping.rules", "DEFAULT");
    let principal_mapper = SslPrincipalMapper::parse(rules)
        .map_err(|reason| Error::config(key, rules.to_string(), reason))?;
    Ok(ListenerSecurity {
        name: served.name.clone(),
        protocol: protocol.to_string(),
        tls,
        sasl,
        principal_mapper: Arc::new(principal_mapper),
    })
}
