//! TLS and SASL listeners with real clients (librdkafka with OpenSSL) and raw sockets: SSL (with and without a
//! required client certificate), SASL_PLAINTEXT and SASL_SSL with PLAIN, refusals (wrong password, unknown user,
//! missing client certificate, a plaintext client or garbage on a TLS port, a stalled handshake) that leave the
//! other connections alone, and start-up stopped by a bad keystore; SCRAM-SHA-256/512 over SASL_SSL with
//! credentials made by AlterUserScramCredentials that survive a restart; X.509 v1 broker and client certificates
//! made by Kafka's documented openssl recipe served, their chain still verified. Certificates are generated here
//! with rcgen (the v1 ones with the openssl CLI).

use crate::common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::raw::{
    connect, metadata, read_frame, request, sasl_authenticate as authenticate, sasl_handshake,
    send_frame,
};
use common::runtime;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::{FutureProducer, FutureRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A CA, a server certificate for localhost/127.0.0.1 and a client certificate, as PEM files in a dir.
struct Pki {
    ca: PathBuf,
    ca_key: PathBuf,
    server: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn pki(dir: &Path) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::default();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(names).unwrap();
        p.extended_key_usages = vec![usage];
        let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(
        vec!["localhost".into(), "127.0.0.1".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (client_cert, client_key) =
        leaf(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth);
    let p = Pki {
        ca: dir.join("ca.pem"),
        ca_key: dir.join("ca-key.pem"),
        server: dir.join("server.pem"),
        client_cert: dir.join("client.pem"),
        client_key: dir.join("client-key.pem"),
    };
    std::fs::write(&p.ca, ca.pem()).unwrap();
    std::fs::write(&p.ca_key, ca_key.serialize_pem()).unwrap();
    std::fs::write(&p.server, format!("{server_key}{server_cert}")).unwrap();
    std::fs::write(&p.client_cert, client_cert).unwrap();
    std::fs::write(&p.client_key, client_key).unwrap();
    p
}

const HANDSHAKE_DEADLINE_MS: u64 = 1500;

/// Listeners by index: 0 PLAINTEXT, 1 SSL, 2 MTLS (SSL, client certificate required), 3 SASL (SASL_PLAINTEXT),
/// 4 SASLTLS (SASL_SSL).
struct Broker {
    server: strata_broker::Server,
    pki: Pki,
    _certs: tempfile::TempDir,
}

impl Broker {
    fn addr(&self, i: usize) -> SocketAddr {
        self.server.local_addrs()[i]
    }
    fn bootstrap(&self, i: usize) -> String {
        self.addr(i).to_string()
    }
}

async fn start(data: &Path) -> Broker {
    let certs = tempfile::tempdir().unwrap();
    let pki = pki(certs.path());
    let (ca, server) = (
        pki.ca.display().to_string(),
        pki.server.display().to_string(),
    );
    let props = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0,SASL://127.0.0.1:0,SASLTLS://127.0.0.1:0",
        ),
        (
            "listener.security.protocol.map",
            "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL:SASL_PLAINTEXT,SASLTLS:SASL_SSL",
        ),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", &server),
        ("listener.name.mtls.ssl.client.auth", "required"),
        ("listener.name.mtls.ssl.truststore.location", &ca),
        (
            "listener.name.sasl.plain.sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";"#,
        ),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";"#,
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        (
            "listener.name.sasltls.sasl.enabled.mechanisms",
            "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        ),
        ("socket.request.read.timeout.ms", "1500"),
    ];
    let props: Vec<(&str, &str)> = props.iter().map(|(k, v)| (*k, *v)).collect();
    Broker {
        server: common::start_broker_with(data, &props).await,
        pki,
        _certs: certs,
    }
}

fn config(bootstrap: &str, extra: &[(&str, &str)]) -> ClientConfig {
    let mut c = common::client_config(bootstrap);
    for (k, v) in extra {
        c.set(*k, *v);
    }
    c
}

/// Produces three messages to `topic` and consumes them back, both clients configured with `extra`.
async fn round_trip(bootstrap: &str, topic: &str, extra: &[(&str, &str)]) {
    let mut pc = config(bootstrap, extra);
    pc.set("acks", "all").set("message.timeout.ms", "30000");
    let p: FutureProducer = pc.create().expect("producer");
    for i in 0..3 {
        let v = format!("{topic}-{i}");
        p.send(
            FutureRecord::<(), _>::to(topic).payload(&v),
            Duration::from_secs(30),
        )
        .await
        .unwrap_or_else(|e| panic!("produce over {extra:?}: {e:?}"));
    }
    let mut cc = config(bootstrap, extra);
    cc.set("group.id", format!("g-{topic}"));
    let c: BaseConsumer = cc.create().expect("consumer");
    common::assign_from_beginning(&c, topic, 1);
    let got = common::consume_n(&c, 3, Duration::from_secs(30));
    let values: Vec<String> = got
        .iter()
        .map(|m| String::from_utf8(m.3.clone().unwrap()).unwrap())
        .collect();
    assert_eq!(values, [0, 1, 2].map(|i| format!("{topic}-{i}")));
}

/// Whether a produce with `extra` fails (within a short message timeout).
async fn produce_fails(bootstrap: &str, topic: &str, extra: &[(&str, &str)]) -> bool {
    let mut pc = config(bootstrap, extra);
    pc.set("message.timeout.ms", "4000");
    let p: FutureProducer = pc.create().expect("producer");
    p.send(
        FutureRecord::<(), _>::to(topic).payload("x"),
        Duration::from_secs(10),
    )
    .await
    .is_err()
}

#[test]
fn ssl_listener_serves_produce_and_consume() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let ca = b.pki.ca.display().to_string();
        round_trip(
            &b.bootstrap(1),
            "over-ssl",
            &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)],
        )
        .await;
        b.server.shutdown().await.unwrap();
    });
}

/// Kafka's `ssl.client.auth=required`: the handshake fails without a certificate signed by the truststore.
#[test]
fn required_client_certificate_is_checked() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let ca = b.pki.ca.display().to_string();
        let cert = b.pki.client_cert.display().to_string();
        let key = b.pki.client_key.display().to_string();
        round_trip(
            &b.bootstrap(2),
            "over-mtls",
            &[
                ("security.protocol", "ssl"),
                ("ssl.ca.location", &ca),
                ("ssl.certificate.location", &cert),
                ("ssl.key.location", &key),
            ],
        )
        .await;
        assert!(
            produce_fails(
                &b.bootstrap(2),
                "over-mtls",
                &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)]
            )
            .await,
            "a client without a certificate was served"
        );
        b.server.shutdown().await.unwrap();
    });
}

#[test]
fn sasl_plaintext_and_sasl_ssl_with_plain_serve_produce_and_consume() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let ca = b.pki.ca.display().to_string();
        round_trip(
            &b.bootstrap(3),
            "over-sasl",
            &[
                ("security.protocol", "sasl_plaintext"),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.username", "alice"),
                ("sasl.password", "alice-secret"),
            ],
        )
        .await;
        // The SASL_SSL listener has no listener-prefixed JAAS line: the global sasl.jaas.config's users.
        round_trip(
            &b.bootstrap(4),
            "over-sasl-ssl",
            &[
                ("security.protocol", "sasl_ssl"),
                ("ssl.ca.location", &ca),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.username", "bob"),
                ("sasl.password", "bob-secret"),
            ],
        )
        .await;
        assert!(
            produce_fails(
                &b.bootstrap(3),
                "over-sasl",
                &[
                    ("security.protocol", "sasl_plaintext"),
                    ("sasl.mechanism", "PLAIN"),
                    ("sasl.username", "alice"),
                    ("sasl.password", "wrong"),
                ]
            )
            .await,
            "a wrong password was accepted"
        );
        b.server.shutdown().await.unwrap();
    });
}

/// Kafka: wrong credentials are answered SASL_AUTHENTICATION_FAILED (58) with a message and the connection is
/// closed; an unknown mechanism gets UNSUPPORTED_SASL_MECHANISM (33) with the enabled ones; a request other than
/// ApiVersions/SaslHandshake/SaslAuthenticate before authentication closes the connection. Another authenticated
/// client on the same listener keeps working throughout.
#[test]
fn wrong_credentials_are_refused_while_another_client_keeps_working() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let addr = b.addr(3);
        let mut good = connect(addr).await;
        let _: ApiVersionsResponse = request(
            &mut good,
            ApiKey::ApiVersions,
            3,
            &common::raw::api_versions_request(),
        )
        .await
        .expect("ApiVersions before authentication");
        assert_eq!(sasl_handshake(&mut good, 1, "PLAIN").await.error_code, 0);
        let ok = authenticate(&mut good, b"\0alice\0alice-secret")
            .await
            .unwrap();
        assert_eq!(ok.error_code, 0, "{ok:?}");
        assert!(metadata(&mut good).await.is_some());

        for token in [&b"\0alice\0wrong"[..], b"\0mallory\0alice-secret"] {
            let mut bad = connect(addr).await;
            assert_eq!(sasl_handshake(&mut bad, 1, "PLAIN").await.error_code, 0);
            let r = authenticate(&mut bad, token)
                .await
                .expect("an answer before the close");
            assert_eq!(r.error_code, 58, "{r:?}");
            assert!(
                r.error_message
                    .as_deref()
                    .is_some_and(|m| m.contains("Invalid username or password")),
                "{r:?}"
            );
            assert!(read_frame(&mut bad).await.is_none(), "connection left open");
            assert!(
                metadata(&mut good).await.is_some(),
                "the good client was disturbed"
            );
        }

        let mut scram = connect(addr).await;
        let r = sasl_handshake(&mut scram, 1, "SCRAM-SHA-256").await;
        assert_eq!(r.error_code, 33);
        assert_eq!(
            r.mechanisms.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
            ["PLAIN"]
        );
        assert!(read_frame(&mut scram).await.is_none());

        let mut early = connect(addr).await;
        assert!(
            metadata(&mut early).await.is_none(),
            "Metadata served before authentication"
        );
        assert!(metadata(&mut good).await.is_some());

        // On a PLAINTEXT listener there is no SASL exchange: ILLEGAL_SASL_STATE (34), as Kafka answers.
        let mut plain = connect(b.addr(0)).await;
        assert_eq!(sasl_handshake(&mut plain, 1, "PLAIN").await.error_code, 34);
        b.server.shutdown().await.unwrap();
    });
}

/// Reads until the broker closes `s` (or `limit` passes): whether it was closed.
async fn closed_within(s: &mut tokio::net::TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// A plaintext Kafka request or garbage in place of a TLS ClientHello closes only that connection; a TLS
/// client on the same listener keeps producing.
#[test]
fn plaintext_client_and_garbage_on_a_tls_port_are_refused_without_disturbing_others() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let ca = b.pki.ca.display().to_string();
        let tls = [
            ("security.protocol", "ssl"),
            ("ssl.ca.location", ca.as_str()),
        ];
        round_trip(&b.bootstrap(1), "tls-before", &tls).await;

        let mut plaintext = connect(b.addr(1)).await;
        let mut body = bytes::BytesMut::new();
        use kafka_protocol::protocol::Encodable;
        RequestHeader::default()
            .with_request_api_key(ApiKey::ApiVersions as i16)
            .with_request_api_version(0)
            .encode(&mut body, 1)
            .unwrap();
        send_frame(&mut plaintext, &body).await;
        assert!(closed_within(&mut plaintext, Duration::from_secs(10)).await);

        let mut garbage = connect(b.addr(1)).await;
        garbage
            .write_all(&[0x16, 0x03, 0x01, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7])
            .await
            .unwrap();
        garbage.write_all(&[0xAB; 4096]).await.unwrap();
        assert!(closed_within(&mut garbage, Duration::from_secs(10)).await);

        round_trip(&b.bootstrap(1), "tls-after", &tls).await;
        b.server.shutdown().await.unwrap();
    });
}

/// A client that connects to a TLS port and never sends its ClientHello does not hold its connection slot:
/// it is closed once `socket.request.read.timeout.ms` passed since the accept.
#[test]
fn a_stalled_tls_handshake_is_closed_after_its_deadline() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let started = Instant::now();
        let mut stalled = connect(b.addr(4)).await;
        assert!(
            closed_within(
                &mut stalled,
                Duration::from_millis(HANDSHAKE_DEADLINE_MS * 5)
            )
            .await,
            "a stalled handshake was kept open"
        );
        assert!(started.elapsed() >= Duration::from_millis(HANDSHAKE_DEADLINE_MS - 100));
        b.server.shutdown().await.unwrap();
    });
}

fn start_error(data: &Path, extra: &[(&str, &str)]) -> String {
    let mut props = common::local_props(data, extra);
    props.insert("listeners".into(), "SSL://127.0.0.1:0".into());
    runtime()
        .block_on(strata_broker::Server::start_from_properties(&props))
        .expect_err("start-up refused")
        .to_string()
}

/// A missing keystore file, a file without a key, and a key that does not belong to the certificate each stop
/// start-up with an error naming the key and the file.
#[test]
fn a_bad_keystore_stops_start_up_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let certs = tempfile::tempdir().unwrap();
    let p = pki(certs.path());
    let missing = certs.path().join("missing.pem").display().to_string();
    let e = start_error(dir.path(), &[("ssl.keystore.location", &missing)]);
    assert!(
        e.contains("ssl.keystore.location") && e.contains(&missing),
        "{e}"
    );

    let only_cert = p.client_cert.display().to_string();
    let e = start_error(dir.path(), &[("ssl.keystore.location", &only_cert)]);
    assert!(e.contains(&only_cert) && e.contains("private key"), "{e}");

    let mismatched = certs.path().join("mismatched.pem");
    let client_key = std::fs::read_to_string(&p.client_key).unwrap();
    let server_chain: String = std::fs::read_to_string(&p.server)
        .unwrap()
        .split_inclusive("-----END PRIVATE KEY-----\n")
        .nth(1)
        .unwrap()
        .to_string();
    std::fs::write(&mismatched, format!("{client_key}{server_chain}")).unwrap();
    let m = mismatched.display().to_string();
    let e = start_error(dir.path(), &[("ssl.keystore.location", &m)]);
    assert!(e.contains(&m) && e.contains("does not fit"), "{e}");

    let e = start_error(dir.path(), &[]);
    assert!(
        e.contains("ssl.keystore.location") && e.contains("ssl.self.signed.enable"),
        "{e}"
    );
    let e = start_error(
        dir.path(),
        &[
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.location", &missing),
        ],
    );
    assert!(
        e.contains("ssl.keystore.location") && e.contains(&missing),
        "{e}"
    );
}

/// `ssl.self.signed.enable=true`: a CA and a listener certificate are generated into the data dir; a client
/// trusting the CA file is served, and a restart keeps the same CA.
#[test]
fn the_self_signed_switch_generates_a_ca_clients_trust() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let props = [
            ("listeners", "SSL://127.0.0.1:0"),
            ("ssl.self.signed.enable", "true"),
        ];
        let server = common::start_broker_with(dir.path(), &props).await;
        let ca = dir.path().join("ssl").join("ca.pem");
        let first = std::fs::read(&ca).expect("ca.pem generated");
        let ca = ca.display().to_string();
        round_trip(
            &server.local_addr().to_string(),
            "self-signed",
            &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)],
        )
        .await;
        server.shutdown().await.unwrap();
        let again = common::start_broker_with(dir.path(), &props).await;
        assert_eq!(
            std::fs::read(&ca).unwrap(),
            first,
            "the CA changed on restart"
        );
        again.shutdown().await.unwrap();

        // ca.pem removed: a new CA, and the listener certificate made again under it (not the old CA's).
        std::fs::remove_file(&ca).unwrap();
        let fresh = common::start_broker_with(dir.path(), &props).await;
        assert_ne!(std::fs::read(&ca).unwrap(), first, "no new CA");
        round_trip(
            &fresh.local_addr().to_string(),
            "self-signed-new-ca",
            &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)],
        )
        .await;
        fresh.shutdown().await.unwrap();

        // A new log dir listed in front: the CA stays where it was made.
        let front = tempfile::tempdir().unwrap();
        let dirs = format!("{},{}", front.path().display(), dir.path().display());
        let mut with_front = props.to_vec();
        with_front.push(("log.dirs", &dirs));
        let both = common::start_broker_with(dir.path(), &with_front).await;
        assert!(
            !front.path().join("ssl").exists(),
            "a second CA in the new dir"
        );
        round_trip(
            &both.local_addr().to_string(),
            "self-signed-front",
            &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)],
        )
        .await;
        both.shutdown().await.unwrap();
    });
}

/// KIP-684: a broker-wide `ssl.client.auth=required` asks SSL listeners for client certificates, not SASL_SSL
/// ones (only `listener.name.<l>.ssl.client.auth` does there): a SASL client without a certificate is served.
#[test]
fn broker_wide_client_auth_leaves_sasl_ssl_listeners_to_sasl() {
    runtime().block_on(async {
        let certs = tempfile::tempdir().unwrap();
        let pki = pki(certs.path());
        let (ca, server) = (pki.ca.display().to_string(), pki.server.display().to_string());
        let dir = tempfile::tempdir().unwrap();
        let props = [
            ("listeners", "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0"),
            ("ssl.keystore.location", &server),
            ("ssl.truststore.location", &ca),
            ("ssl.client.auth", "required"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";"#,
            ),
        ];
        let b = common::start_broker_with(dir.path(), &props).await;
        let addrs = b.local_addrs().to_vec();
        let tls = [("security.protocol", "ssl"), ("ssl.ca.location", ca.as_str())];
        assert!(
            produce_fails(&addrs[0].to_string(), "kip684", &tls).await,
            "the SSL listener served a client without a certificate"
        );
        round_trip(
            &addrs[1].to_string(),
            "kip684",
            &[
                ("security.protocol", "sasl_ssl"),
                ("ssl.ca.location", &ca),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.username", "alice"),
                ("sasl.password", "alice-secret"),
            ],
        )
        .await;
        b.shutdown().await.unwrap();
    });
}

/// AlterUserScramCredentials upserting `user`'s `mechanism` (1 = SHA-256, 2 = SHA-512) for `password`, as
/// Kafka's admin client computes it (the broker gets the salted password, never the password).
fn upsert(
    user: &str,
    mechanism: i8,
    password: &str,
) -> alter_user_scram_credentials_request::ScramCredentialUpsertion {
    let salt: Vec<u8> = (0..16).map(|i| i * 7 + mechanism as u8).collect();
    let salted = if mechanism == 1 {
        pbkdf2::pbkdf2_hmac_array::<sha2::Sha256, 32>(password.as_bytes(), &salt, 4096).to_vec()
    } else {
        pbkdf2::pbkdf2_hmac_array::<sha2::Sha512, 64>(password.as_bytes(), &salt, 4096).to_vec()
    };
    alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
        .with_name(StrBytes::from_string(user.to_string()))
        .with_mechanism(mechanism)
        .with_iterations(4096)
        .with_salt(salt.into())
        .with_salted_password(salted.into())
}

async fn describe_scram(
    addr: SocketAddr,
    users: Option<&[&str]>,
) -> DescribeUserScramCredentialsResponse {
    let mut s = connect(addr).await;
    let req = DescribeUserScramCredentialsRequest::default().with_users(users.map(|u| {
        u.iter()
            .map(|n| {
                describe_user_scram_credentials_request::UserName::default()
                    .with_name(StrBytes::from_string(n.to_string()))
            })
            .collect()
    }));
    request(&mut s, ApiKey::DescribeUserScramCredentials, 0, &req)
        .await
        .expect("answered")
}

fn scram(
    mechanism: &'static str,
    user: &'static str,
    password: &'static str,
    ca: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("security.protocol", "sasl_ssl".into()),
        ("ssl.ca.location", ca.to_string()),
        ("sasl.mechanism", mechanism.into()),
        ("sasl.username", user.into()),
        ("sasl.password", password.into()),
    ]
}

fn refs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Kafka's SCRAM: credentials created with AlterUserScramCredentials (iterations 4096..=16384), listed by
/// DescribeUserScramCredentials, authenticate SCRAM-SHA-256 and SCRAM-SHA-512 clients over SASL_SSL, a wrong
/// password is refused, and they are still there after a restart until deleted.
#[test]
fn scram_credentials_from_the_admin_api_authenticate_and_survive_a_restart() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let mut admin = connect(b.addr(0)).await;
        let req = AlterUserScramCredentialsRequest::default().with_upsertions(vec![
            upsert("carol", 1, "carol-secret"),
            upsert("dave", 2, "dave-secret"),
            upsert("weak", 1, "x").with_iterations(100),
        ]);
        let r: AlterUserScramCredentialsResponse =
            request(&mut admin, ApiKey::AlterUserScramCredentials, 0, &req)
                .await
                .unwrap();
        let codes: Vec<(String, i16)> = r
            .results
            .iter()
            .map(|r| (r.user.to_string(), r.error_code))
            .collect();
        assert_eq!(
            codes,
            [("carol".into(), 0), ("dave".into(), 0), ("weak".into(), 93)],
            "{r:?}"
        );

        let ca = b.pki.ca.display().to_string();
        round_trip(
            &b.bootstrap(4),
            "scram-256",
            &refs(&scram("SCRAM-SHA-256", "carol", "carol-secret", &ca)),
        )
        .await;
        round_trip(
            &b.bootstrap(4),
            "scram-512",
            &refs(&scram("SCRAM-SHA-512", "dave", "dave-secret", &ca)),
        )
        .await;
        assert!(
            produce_fails(
                &b.bootstrap(4),
                "scram-256",
                &refs(&scram("SCRAM-SHA-256", "carol", "wrong", &ca))
            )
            .await,
            "a wrong SCRAM password was accepted"
        );
        assert!(
            produce_fails(
                &b.bootstrap(4),
                "scram-256",
                &refs(&scram("SCRAM-SHA-512", "carol", "carol-secret", &ca))
            )
            .await,
            "carol has no SCRAM-SHA-512 credential"
        );
        let all = describe_scram(b.addr(0), None).await;
        let users: Vec<String> = all.results.iter().map(|r| r.user.to_string()).collect();
        assert_eq!(users, ["carol", "dave"]);
        // An empty list is "all users" too (what librdkafka sends; Kafka's ScramImage).
        let empty = describe_scram(b.addr(0), Some(&[])).await;
        let listed: Vec<String> = empty.results.iter().map(|r| r.user.to_string()).collect();
        assert_eq!(listed, users);
        b.server.shutdown().await.unwrap();

        let b = start(dir.path()).await;
        let ca = b.pki.ca.display().to_string();
        round_trip(
            &b.bootstrap(4),
            "scram-after-restart",
            &refs(&scram("SCRAM-SHA-256", "carol", "carol-secret", &ca)),
        )
        .await;
        let mut admin = connect(b.addr(0)).await;
        let del = AlterUserScramCredentialsRequest::default().with_deletions(vec![
            alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                .with_name(StrBytes::from_static_str("carol"))
                .with_mechanism(1),
        ]);
        let r: AlterUserScramCredentialsResponse =
            request(&mut admin, ApiKey::AlterUserScramCredentials, 0, &del)
                .await
                .unwrap();
        assert_eq!(r.results[0].error_code, 0, "{r:?}");
        let carol = describe_scram(b.addr(0), Some(&["carol", "dave"])).await;
        let codes: Vec<i16> = carol.results.iter().map(|r| r.error_code).collect();
        assert_eq!(codes, [91, 0], "{carol:?}");
        assert_eq!(carol.results[1].credential_infos[0].mechanism, 2);
        b.server.shutdown().await.unwrap();
    });
}

/// Whether the openssl CLI is there (`.ci/run` installs it); without it a test that needs it says so and skips.
fn has_openssl(for_what: &str) -> bool {
    let there = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok();
    if !there {
        eprintln!("SKIPPED: the openssl CLI is not installed; it makes {for_what} of this test");
    }
    there
}

/// Runs `openssl args` in `dir`, asserting success: its standard output.
fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `ssl.keystore.type=PKCS12` / `ssl.truststore.type=PKCS12` with passwords (stores made by `openssl pkcs12
/// -export`, AES-256 and HMAC-SHA256 as OpenSSL 3 writes them): an SSL listener and one requiring client
/// certificates serve librdkafka; a client without a certificate is refused; a wrong password, or a JKS type,
/// stops start-up naming the key and the file.
#[test]
fn pkcs12_keystore_and_truststore_with_passwords_serve_clients() {
    if !has_openssl("the PKCS12 stores") {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    let pki = pki(certs.path());
    let p = |p: &Path| p.display().to_string();
    let (keystore, truststore) = (
        certs.path().join("server.p12"),
        certs.path().join("trust.p12"),
    );
    openssl(
        certs.path(),
        &[
            "pkcs12",
            "-export",
            "-in",
            &p(&pki.server),
            "-inkey",
            &p(&pki.server),
            "-name",
            "broker",
            "-passout",
            "pass:ks-secret",
            "-out",
            &p(&keystore),
        ],
    );
    openssl(
        certs.path(),
        &[
            "pkcs12",
            "-export",
            "-nokeys",
            "-in",
            &p(&pki.ca),
            "-passout",
            "pass:ts-secret",
            "-out",
            &p(&truststore),
        ],
    );
    let (ks, ts, ca) = (p(&keystore), p(&truststore), p(&pki.ca));
    let props = [
        ("listeners", "SSL://127.0.0.1:0,MTLS://127.0.0.1:0"),
        ("listener.security.protocol.map", "SSL:SSL,MTLS:SSL"),
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", &ks),
        ("ssl.keystore.password", "ks-secret"),
        ("ssl.key.password", "ks-secret"),
        ("listener.name.mtls.ssl.client.auth", "required"),
        ("listener.name.mtls.ssl.truststore.type", "PKCS12"),
        ("listener.name.mtls.ssl.truststore.location", &ts),
        ("listener.name.mtls.ssl.truststore.password", "ts-secret"),
    ];
    runtime().block_on(async {
        let data = tempfile::tempdir().unwrap();
        let server = common::start_broker_with(data.path(), &props).await;
        let addrs = server.local_addrs().to_vec();
        let tls = [
            ("security.protocol", "ssl"),
            ("ssl.ca.location", ca.as_str()),
        ];
        round_trip(&addrs[0].to_string(), "p12", &tls).await;
        let (cert, key) = (p(&pki.client_cert), p(&pki.client_key));
        let mut mtls = tls.to_vec();
        mtls.extend([
            ("ssl.certificate.location", cert.as_str()),
            ("ssl.key.location", key.as_str()),
        ]);
        round_trip(&addrs[1].to_string(), "p12-mtls", &mtls).await;
        assert!(
            produce_fails(&addrs[1].to_string(), "p12-mtls", &tls).await,
            "a client without a certificate was served"
        );
        server.shutdown().await.unwrap();
    });

    let data = tempfile::tempdir().unwrap();
    let mut wrong: Vec<(&str, &str)> = props.to_vec();
    wrong.retain(|(k, _)| !k.ends_with("password"));
    wrong.push(("ssl.keystore.password", "not-it"));
    let e = start_error(data.path(), &wrong);
    assert!(
        e.contains("ssl.keystore.location") && e.contains(&ks),
        "{e}"
    );
    let mut jks: Vec<(&str, &str)> = props.to_vec();
    jks.push(("ssl.keystore.type", "JKS"));
    let e = start_error(data.path(), &jks);
    assert!(
        e.contains("ssl.keystore.type") && e.contains("keytool"),
        "{e}"
    );

    // An encrypted PKCS#8 PEM key (KIP-651's ssl.key.password): served with the password, refused without or
    // with a wrong one.
    let encrypted = certs.path().join("server-encrypted.pem");
    let key_pem = openssl(
        certs.path(),
        &[
            "pkcs8",
            "-topk8",
            "-v2",
            "aes-256-cbc",
            "-in",
            &p(&pki.server),
            "-passout",
            "pass:key-secret",
        ],
    );
    let chain: String = std::fs::read_to_string(&pki.server)
        .unwrap()
        .split_inclusive("-----END PRIVATE KEY-----\n")
        .nth(1)
        .unwrap()
        .to_string();
    std::fs::write(&encrypted, [key_pem, chain.into_bytes()].concat()).unwrap();
    let enc = p(&encrypted);
    let pem_props = [
        ("listeners", "SSL://127.0.0.1:0"),
        ("ssl.keystore.location", enc.as_str()),
        ("ssl.key.password", "key-secret"),
    ];
    runtime().block_on(async {
        let data = tempfile::tempdir().unwrap();
        let server = common::start_broker_with(data.path(), &pem_props).await;
        let tls = [
            ("security.protocol", "ssl"),
            ("ssl.ca.location", ca.as_str()),
        ];
        round_trip(&server.local_addr().to_string(), "encrypted-key", &tls).await;
        server.shutdown().await.unwrap();
    });
    let e = start_error(data.path(), &pem_props[1..2]);
    assert!(
        e.contains(&enc) && e.contains("ssl.key.password is not set"),
        "{e}"
    );
    let e = start_error(data.path(), &[pem_props[1], ("ssl.key.password", "wrong")]);
    assert!(e.contains(&enc) && e.contains("does not decrypt"), "{e}");
}

/// A CA, a broker certificate and a client certificate made the way Kafka's security documentation makes them
/// with the openssl CLI: `openssl req -new -x509 -keyout ca-key -out ca-cert`, then each certificate request
/// signed with `openssl x509 -req -CA ca-cert -CAkey ca-key -in cert-file -out cert-signed -CAcreateserial` and no
/// `-extfile`, which OpenSSL 3 makes X.509 v1.
struct KafkaDocsPki {
    ca: PathBuf,
    ca_key: PathBuf,
}

impl KafkaDocsPki {
    /// A CA named `/CN=<cn>`, its files `dir/<name>-cert` and `dir/<name>-key`.
    fn new(dir: &Path, name: &str, cn: &str) -> KafkaDocsPki {
        let (cert, key) = (
            dir.join(format!("{name}-cert")),
            dir.join(format!("{name}-key")),
        );
        let p = |p: &Path| p.display().to_string();
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-x509",
                "-keyout",
                &p(&key),
                "-out",
                &p(&cert),
                "-days",
                "365",
                "-nodes",
                "-subj",
                &format!("/CN={cn}"),
            ],
        );
        KafkaDocsPki {
            ca: cert,
            ca_key: key,
        }
    }

    /// A key and the certificate for `cn` signed by the recipe, in `dir/<name>.pem` (key first) and
    /// `dir/<name>-cert.pem` / `dir/<name>-key.pem`: the paths of the combined file, the certificate and the key.
    fn sign(&self, dir: &Path, name: &str, cn: &str) -> (String, String, String) {
        let p = |p: &Path| p.display().to_string();
        let (key, csr, cert) = (
            dir.join(format!("{name}-key.pem")),
            dir.join(format!("{name}.csr")),
            dir.join(format!("{name}-cert.pem")),
        );
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &p(&key),
                "-subj",
                &format!("/CN={cn}"),
                "-out",
                &p(&csr),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-CA",
                &p(&self.ca),
                "-CAkey",
                &p(&self.ca_key),
                "-in",
                &p(&csr),
                "-out",
                &p(&cert),
                "-days",
                "365",
                "-CAcreateserial",
            ],
        );
        let der = openssl(dir, &["x509", "-in", &p(&cert), "-outform", "der"]);
        assert!(
            strata_broker::security::client_cert::is_x509_v1(&der),
            "openssl made a v3 certificate for {name}"
        );
        let both = dir.join(format!("{name}.pem"));
        let text = [std::fs::read(&key).unwrap(), std::fs::read(&cert).unwrap()].concat();
        std::fs::write(&both, text).unwrap();
        (p(&both), p(&cert), p(&key))
    }
}

/// Kafka's documented certificates (X.509 v1 broker and client certificates, which Java accepts and rustls's
/// webpki alone does not) serve librdkafka on a listener requiring client certificates; the chain is still
/// checked: a v1 client certificate signed by a CA outside the truststore (with the same name as the trusted one)
/// is refused, and so is one whose signature was tampered with. Needs the openssl CLI (skipped with a message without it).
#[test]
fn kafka_documented_x509_v1_certificates_serve_clients_and_are_still_verified() {
    if !has_openssl("the X.509 v1 certificates") {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    let dir = certs.path();
    let pki = KafkaDocsPki::new(dir, "ca", "kafka-docs-ca");
    let (server, _, _) = pki.sign(dir, "broker", "localhost");
    let (_, client_cert, client_key) = pki.sign(dir, "client", "v1client");
    // Another CA with the same name: only the signature tells its certificates apart.
    let other = KafkaDocsPki::new(dir, "impostor-ca", "kafka-docs-ca");
    let (_, stranger_cert, stranger_key) = other.sign(dir, "stranger", "v1client");
    // The client certificate with one bit of its signature flipped.
    let tampered = dir.join("tampered-cert.pem");
    let mut der = openssl(dir, &["x509", "-in", &client_cert, "-outform", "der"]);
    let last = der.len() - 1;
    der[last] ^= 1;
    std::fs::write(dir.join("tampered.der"), &der).unwrap();
    let pem = openssl(
        dir,
        &[
            "x509",
            "-inform",
            "der",
            "-in",
            "tampered.der",
            "-outform",
            "pem",
        ],
    );
    std::fs::write(&tampered, pem).unwrap();
    let tampered = tampered.display().to_string();
    let ca = pki.ca.display().to_string();
    let props = [
        ("listeners", "SSL://127.0.0.1:0"),
        ("ssl.keystore.location", server.as_str()),
        ("ssl.client.auth", "required"),
        ("ssl.truststore.location", ca.as_str()),
    ];
    runtime().block_on(async {
        let data = tempfile::tempdir().unwrap();
        let server = common::start_broker_with(data.path(), &props).await;
        let bootstrap = server.local_addr().to_string();
        let client = |cert: &str, key: &str| {
            vec![
                ("security.protocol", "ssl".to_string()),
                ("ssl.ca.location", ca.clone()),
                // The recipe's certificates carry no subjectAltName (`openssl x509 -req` drops the request's
                // extensions), so hostname verification is off, as Kafka's docs say for them; the chain is still
                // verified by the client (OpenSSL) and by the broker.
                ("ssl.endpoint.identification.algorithm", "none".to_string()),
                ("ssl.certificate.location", cert.to_string()),
                ("ssl.key.location", key.to_string()),
            ]
        };
        let ok = client(&client_cert, &client_key);
        round_trip(&bootstrap, "kafka-docs-v1", &refs(&ok)).await;
        let stranger = client(&stranger_cert, &stranger_key);
        assert!(
            produce_fails(&bootstrap, "kafka-docs-v1", &refs(&stranger)).await,
            "a v1 client certificate from a CA outside the truststore was accepted"
        );
        let bad_signature = client(&tampered, &client_key);
        assert!(
            produce_fails(&bootstrap, "kafka-docs-v1", &refs(&bad_signature)).await,
            "a v1 client certificate with a tampered signature was accepted"
        );
        server.shutdown().await.unwrap();
    });
}

/// Spawns the strata binary with an SSL listener that requires client certificates checked against
/// `truststore`, asserts that a client presenting `cert`/`key` (`what`) is refused, and returns the broker's log
/// line holding `hint`.
fn refused_client_certificate_log(
    pki: &Pki,
    truststore: &str,
    cert: &str,
    key: &str,
    hint: &str,
    what: &str,
) -> String {
    let data = tempfile::tempdir().unwrap();
    let (ca, server) = (
        pki.ca.display().to_string(),
        pki.server.display().to_string(),
    );
    let b = common::ChildBroker::spawn_with(
        data.path(),
        0,
        &[
            ("listener.security.protocol.map", "PLAINTEXT:SSL"),
            ("ssl.keystore.location", &server),
            ("ssl.client.auth", "required"),
            ("ssl.truststore.location", truststore),
        ],
    );
    let refused = runtime().block_on(produce_fails(
        &b.bootstrap,
        "refused-cert",
        &[
            ("security.protocol", "ssl"),
            ("ssl.ca.location", &ca),
            ("ssl.certificate.location", cert),
            ("ssl.key.location", key),
        ],
    ));
    assert!(refused, "{what} was accepted");
    let deadline = Instant::now() + Duration::from_secs(20);
    let line = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = b
            .logs
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("a WARN naming {what}"));
        if line.contains(hint) {
            break line;
        }
    };
    assert!(b.terminate());
    line
}

/// A self-signed client certificate listed in the truststore (`openssl req -x509` makes it CA:TRUE, which webpki
/// refuses as an end entity) is accepted, as Java's PKIX accepts a path that is the trust anchor alone.
#[test]
fn a_self_signed_client_certificate_listed_in_the_truststore_is_accepted() {
    let certs = tempfile::tempdir().unwrap();
    let pki = pki(certs.path());
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["pinned-client".into()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let pinned = params.self_signed(&key).unwrap();
    let (cert, key_file, trust) = (
        certs.path().join("pinned.pem"),
        certs.path().join("pinned-key.pem"),
        certs.path().join("trust.pem"),
    );
    std::fs::write(&cert, pinned.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    // Listed beside another anchor, as a truststore usually holds several.
    let ca_pem = std::fs::read_to_string(&pki.ca).unwrap();
    std::fs::write(&trust, format!("{ca_pem}{}", pinned.pem())).unwrap();
    let data = tempfile::tempdir().unwrap();
    let p = |p: &Path| p.display().to_string();
    let server = p(&pki.server);
    let trust_s = p(&trust);
    let b = common::ChildBroker::spawn_with(
        data.path(),
        0,
        &[
            ("listener.security.protocol.map", "PLAINTEXT:SSL"),
            ("ssl.keystore.location", &server),
            ("ssl.client.auth", "required"),
            ("ssl.truststore.location", &trust_s),
        ],
    );
    let (ca, cert_s, key_s) = (p(&pki.ca), p(&cert), p(&key_file));
    runtime().block_on(round_trip(
        &b.bootstrap,
        "pinned-cert",
        &[
            ("security.protocol", "ssl"),
            ("ssl.ca.location", &ca),
            ("ssl.certificate.location", &cert_s),
            ("ssl.key.location", &key_s),
        ],
    ));
    assert!(b.terminate());
}

/// A CA certificate used as a client certificate that is not itself in the truststore (here a CA issued by the
/// truststore's CA) is refused by rustls as a CA used as an end entity: the WARN says so and how to fix it.
#[test]
fn an_unlisted_ca_certificate_used_as_client_certificate_is_refused_with_the_reason_logged() {
    let certs = tempfile::tempdir().unwrap();
    let pki = pki(certs.path());
    let root_key = KeyPair::generate().unwrap();
    let mut root = CertificateParams::default();
    root.distinguished_name.push(DnType::CommonName, "root CA");
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let root = root.self_signed(&root_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["sub-ca-client".into()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let sub_ca = params.signed_by(&key, &root, &root_key).unwrap();
    let (cert, key_file, trust) = (
        certs.path().join("sub-ca.pem"),
        certs.path().join("sub-ca-key.pem"),
        certs.path().join("trust.pem"),
    );
    std::fs::write(&cert, sub_ca.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    std::fs::write(&trust, root.pem()).unwrap();
    let p = |p: &Path| p.display().to_string();
    let line = refused_client_certificate_log(
        &pki,
        &p(&trust),
        &p(&cert),
        &p(&key_file),
        strata_broker::security::client_cert::CA_AS_CLIENT_HINT,
        "a CA certificate as a client certificate",
    );
    assert!(line.contains("WARN"), "{line}");
}
