//! Listeners as Kafka reads them: `listeners` is a list of `NAME://host:port`, each name's security protocol
//! comes from `listener.security.protocol.map`, `controller.listener.names` are the KRaft controller's (not
//! served), `advertised.listeners` gives per name the address clients are told. strata serves every client
//! listener with its protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL: see `crate::security`); a client is
//! told the endpoint of the listener it connected to.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// One `NAME://host:port` entry (name upper-cased, host without IPv6 brackets, empty = every interface).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The listener name.
    pub name: String,
    /// The host; empty means every interface.
    pub host: String,
    /// The port (0 = any free port).
    pub port: u16,
}

/// One client listener strata serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The address to bind.
    pub bind: SocketAddr,
    /// The address given to clients, when `advertised.listeners` names this listener.
    pub advertised: Option<(String, u16)>,
    /// The listener's name.
    pub name: String,
    /// Its security protocol (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub protocol: String,
}

/// Parses one `NAME://host:port` (Kafka's `^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)`).
pub fn parse_endpoint(entry: &str) -> Result<Endpoint, String> {
    let entry = entry.trim();
    let (name, addr) = entry
        .split_once("://")
        .ok_or_else(|| format!("{entry:?} is not NAME://host:port"))?;
    let (host, port) = addr
        .rsplit_once(':')
        .ok_or_else(|| format!("{entry:?} has no :port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{entry:?}: port is not a number in 0..=65535"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if name.is_empty() {
        return Err(format!("{entry:?} has no listener name"));
    }
    Ok(Endpoint {
        name: name.to_ascii_uppercase(),
        host: host.to_string(),
        port,
    })
}

/// Parses `listener.security.protocol.map` (`NAME:PROTOCOL,...`).
pub fn parse_protocol_map(value: &str) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, proto) = item
            .split_once(':')
            .ok_or_else(|| format!("{item:?} is not NAME:PROTOCOL"))?;
        let proto = proto.trim().to_ascii_uppercase();
        if !["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].contains(&proto.as_str()) {
            return Err(format!(
                "invalid security protocol {proto:?} for listener {name}"
            ));
        }
        map.insert(name.trim().to_ascii_uppercase(), proto);
    }
    Ok(map)
}

fn bind_ip(host: &str) -> Result<IpAddr, String> {
    match host {
        "" => Ok(IpAddr::from([0, 0, 0, 0])),
        "localhost" => Ok(IpAddr::from([127, 0, 0, 1])),
        h => h
            .parse()
            .map_err(|_| format!("host {h:?} must be empty, an IP address or localhost")),
    }
}

/// The client listeners to serve, in the order of `listeners` (controller listeners left out). Errors (key,
/// reason) name the key at fault.
pub fn choose(
    listeners: &[String],
    advertised: &[String],
    protocol_map: &str,
    map_explicit: bool,
    controller_names: &[String],
    inter_broker: Option<&str>,
) -> Result<Vec<Served>, (&'static str, String)> {
    let err = |key: &'static str| move |reason: String| (key, reason);
    let mut map =
        parse_protocol_map(protocol_map).map_err(err("listener.security.protocol.map"))?;
    let endpoints: Vec<Endpoint> = listeners
        .iter()
        .map(|e| parse_endpoint(e))
        .collect::<Result<_, _>>()
        .map_err(err("listeners"))?;
    let controllers: Vec<String> = controller_names
        .iter()
        .map(|n| n.to_ascii_uppercase())
        .collect();
    if !map_explicit {
        // Kafka (KRaft): without an explicit map, controller listener names default to PLAINTEXT.
        for c in &controllers {
            map.entry(c.clone()).or_insert_with(|| "PLAINTEXT".into());
        }
    }
    for (i, e) in endpoints.iter().enumerate() {
        if endpoints[..i].iter().any(|o| o.name == e.name) {
            return Err((
                "listeners",
                format!("listener name {} appears twice", e.name),
            ));
        }
    }
    let clients: Vec<&Endpoint> = endpoints
        .iter()
        .filter(|e| !controllers.contains(&e.name))
        .collect();
    for e in &clients {
        if !map.contains_key(&e.name) {
            return Err((
                "listener.security.protocol.map",
                format!("no security protocol defined for listener {}", e.name),
            ));
        }
    }
    if clients.is_empty() {
        return Err((
            "listeners",
            "no client listener: every listener is in controller.listener.names".to_string(),
        ));
    }
    let adv: Vec<Endpoint> = advertised
        .iter()
        .map(|e| parse_endpoint(e))
        .collect::<Result<_, _>>()
        .map_err(err("advertised.listeners"))?;
    for a in &adv {
        if !endpoints.iter().any(|e| e.name == a.name) {
            return Err((
                "advertised.listeners",
                format!("listener {} is not in listeners", a.name),
            ));
        }
        if a.host == "0.0.0.0" && !controllers.contains(&a.name) {
            return Err((
                "advertised.listeners",
                "cannot use the nonroutable meta-address 0.0.0.0; use a routable IP address".into(),
            ));
        }
    }
    if let Some(ib) = inter_broker.map(str::trim).filter(|s| !s.is_empty()) {
        if !map.contains_key(&ib.to_ascii_uppercase()) {
            return Err((
                "inter.broker.listener.name",
                format!("listener {ib} is not in listener.security.protocol.map"),
            ));
        }
    }
    clients
        .iter()
        .map(|e| {
            let ip = bind_ip(&e.host).map_err(err("listeners"))?;
            let advertised = adv
                .iter()
                .find(|a| a.name == e.name)
                .filter(|a| !a.host.is_empty())
                .map(|a| (a.host.clone(), a.port));
            Ok(Served {
                bind: SocketAddr::new(ip, e.port),
                advertised,
                name: e.name.clone(),
                protocol: map[&e.name].clone(),
            })
        })
        .collect()
}

/// Parses Kafka's `max.connections.per.ip.overrides`: `host:count,...` (an IPv6 address keeps its colons: the
/// count follows the last one). Hosts are IP addresses or `localhost` (both loopbacks); no DNS lookups. The
/// error says which entry is wrong and why.
pub fn parse_ip_overrides(value: &str) -> Result<BTreeMap<IpAddr, usize>, String> {
    let mut out = BTreeMap::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (host, count) = entry
            .rsplit_once(':')
            .ok_or_else(|| format!("{entry:?} is not host:count"))?;
        let count: usize = count
            .trim()
            .parse()
            .map_err(|e| format!("count {count:?} of {entry:?}: {e}"))?;
        let host = host.trim().trim_start_matches('[').trim_end_matches(']');
        if host.eq_ignore_ascii_case("localhost") {
            out.insert(IpAddr::from([127, 0, 0, 1]), count);
            out.insert(IpAddr::from(std::net::Ipv6Addr::LOCALHOST), count);
            continue;
        }
        let ip = host
            .parse()
            .map_err(|_| format!("{host:?} is not an IP address (or localhost)"))?;
        out.insert(ip, count);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT_MAP: &str =
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT";

    fn list(s: &str) -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn kafka_single_node_listeners_serve_plaintext_on_every_interface() {
        let s = choose(
            &list("PLAINTEXT://:9092,CONTROLLER://:9093"),
            &list("PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"),
            DEFAULT_MAP,
            false,
            &list("CONTROLLER"),
            Some("PLAINTEXT"),
        )
        .unwrap();
        assert_eq!(s.len(), 1, "the controller listener is not served");
        let s = &s[0];
        assert_eq!(s.bind, "0.0.0.0:9092".parse().unwrap());
        assert_eq!(s.advertised, Some(("localhost".into(), 9092)));
        assert_eq!(s.name, "PLAINTEXT");
    }

    /// Kafka serves every listener of `listeners` and advertises each per name (`advertised.listeners`).
    #[test]
    fn every_client_listener_is_served_with_its_own_advertised_address() {
        let s = choose(
            &list("CONTROLLER://:29093,PLAINTEXT_HOST://:9092,PLAINTEXT://:19092"),
            &list("PLAINTEXT_HOST://localhost:9092,PLAINTEXT://broker:19092"),
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
            true,
            &list("CONTROLLER"),
            Some("PLAINTEXT"),
        )
        .unwrap();
        let served = |name: &str, port: u16, host: &str| Served {
            bind: SocketAddr::from(([0, 0, 0, 0], port)),
            advertised: Some((host.to_string(), port)),
            name: name.to_string(),
            protocol: "PLAINTEXT".to_string(),
        };
        assert_eq!(
            s,
            vec![
                served("PLAINTEXT_HOST", 9092, "localhost"),
                served("PLAINTEXT", 19092, "broker"),
            ]
        );
    }

    /// Kafka: each listener speaks the protocol `listener.security.protocol.map` gives its name.
    #[test]
    fn tls_and_sasl_listeners_are_served_with_their_protocol() {
        let s = choose(
            &list("SSL://127.0.0.1:9093,SASL_PLAINTEXT://127.0.0.1:9094,EXTERNAL://:9095"),
            &[],
            &format!("{DEFAULT_MAP},EXTERNAL:SASL_SSL"),
            true,
            &[],
            None,
        )
        .unwrap();
        let protocols: Vec<(&str, &str)> = s
            .iter()
            .map(|l| (l.name.as_str(), l.protocol.as_str()))
            .collect();
        assert_eq!(
            protocols,
            [
                ("SSL", "SSL"),
                ("SASL_PLAINTEXT", "SASL_PLAINTEXT"),
                ("EXTERNAL", "SASL_SSL")
            ]
        );
    }

    #[test]
    fn bad_listener_entries_are_refused() {
        for (l, map) in [
            ("127.0.0.1:9092", DEFAULT_MAP),
            ("PLAINTEXT://host", DEFAULT_MAP),
            ("PLAINTEXT://127.0.0.1:99999", DEFAULT_MAP),
            ("OTHER://127.0.0.1:1", DEFAULT_MAP),
            ("PLAINTEXT://:1,PLAINTEXT://:2", DEFAULT_MAP),
            ("PLAINTEXT://:1", "PLAINTEXT:TLS"),
        ] {
            assert!(
                choose(&list(l), &[], map, true, &[], None).is_err(),
                "{l} accepted"
            );
        }
        let adv_zero = choose(
            &list("PLAINTEXT://:1"),
            &list("PLAINTEXT://0.0.0.0:1"),
            DEFAULT_MAP,
            false,
            &[],
            None,
        );
        assert_eq!(adv_zero.unwrap_err().0, "advertised.listeners");
    }

    #[test]
    fn only_controller_listeners_is_refused() {
        let (key, _) = choose(
            &list("CONTROLLER://:9093"),
            &[],
            DEFAULT_MAP,
            false,
            &list("CONTROLLER"),
            None,
        )
        .unwrap_err();
        assert_eq!(key, "listeners");
    }
}
