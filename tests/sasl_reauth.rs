//! KIP-368 re-authentication on a SASL_PLAINTEXT listener with `connections.max.reauth.ms`: SaslAuthenticate
//! v1+ carries the session lifetime, librdkafka re-authenticates on the same connection and keeps producing, a
//! SCRAM user deleted while connected loses its connection once its session ends, a session that ends without
//! re-authentication is closed at its next request, and a re-authentication may not change the principal or the
//! mechanism (Kafka's SaslServerAuthenticator).

use crate::common;

use std::time::{Duration, Instant};

use common::raw::{connect, metadata, read_frame, request, sasl_authenticate, sasl_handshake};
use common::runtime;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::producer::{FutureProducer, FutureRecord};

/// The session lifetime of PLAIN (`listener.name.sasl.plain.connections.max.reauth.ms`).
const PLAIN_LIFETIME_MS: u64 = 1000;
/// The session lifetime of the other mechanisms (the global `connections.max.reauth.ms`).
const GLOBAL_LIFETIME_MS: u64 = 1500;

/// Listeners: 0 PLAINTEXT, 1 SASL (SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256).
async fn start(data: &std::path::Path) -> strata_broker::Server {
    let global = GLOBAL_LIFETIME_MS.to_string();
    let plain = PLAIN_LIFETIME_MS.to_string();
    common::start_broker_with(
        data,
        &[
            ("listeners", "PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0"),
            (
                "listener.security.protocol.map",
                "PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT",
            ),
            ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";"#,
            ),
            ("connections.max.reauth.ms", &global),
            ("listener.name.sasl.plain.connections.max.reauth.ms", &plain),
        ],
    )
    .await
}

fn sasl_client(bootstrap: &str, mechanism: &str, user: &str, password: &str) -> FutureProducer {
    let mut c = common::client_config(bootstrap);
    c.set("security.protocol", "sasl_plaintext")
        .set("sasl.mechanism", mechanism)
        .set("sasl.username", user)
        .set("sasl.password", password)
        .set("acks", "all")
        .set("message.timeout.ms", "5000");
    c.create().expect("producer")
}

/// KIP-368: with `connections.max.reauth.ms` set, librdkafka re-authenticates before its session ends (the
/// broker counts the re-authentications), and every message of a producer running across several of them is
/// acknowledged. The mechanism-prefixed key wins over the global one (Kafka's rule), as the raw SaslAuthenticate
/// v2 answer shows.
#[test]
fn a_producer_keeps_producing_across_re_authentications() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let sasl = b.local_addrs()[1].to_string();
        common::create_topic(&b.local_addrs()[0].to_string(), "reauth", 1).await;

        let mut s = connect(b.local_addrs()[1]).await;
        assert_eq!(sasl_handshake(&mut s, 1, "PLAIN").await.error_code, 0);
        let r = sasl_authenticate(&mut s, b"\0alice\0alice-secret")
            .await
            .expect("SaslAuthenticate answered");
        assert_eq!(
            (r.error_code, r.session_lifetime_ms),
            (0, PLAIN_LIFETIME_MS as i64),
            "{r:?}"
        );

        let p = sasl_client(&sasl, "PLAIN", "alice", "alice-secret");
        let metrics = b.broker().metrics().clone();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut sent = 0;
        while metrics.reauthentications("SASL") < 3 || sent < 10 {
            assert!(
                Instant::now() < deadline,
                "{} re-authentications after {sent} messages",
                metrics.reauthentications("SASL")
            );
            let v = format!("m{sent}");
            p.send(
                FutureRecord::<(), _>::to("reauth").payload(&v),
                Duration::from_secs(10),
            )
            .await
            .unwrap_or_else(|e| panic!("message {sent} failed: {e:?}"));
            sent += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        b.shutdown().await.unwrap();
    });
}

/// KIP-368: a SCRAM user deleted (AlterUserScramCredentials) while its producer is connected keeps its
/// connection only until the session ends: the re-authentication fails (SASL_AUTHENTICATION_FAILED, connection
/// closed), and the producer cannot produce any more.
#[test]
fn a_scram_user_deleted_while_connected_loses_its_connection() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let sasl = b.local_addrs()[1].to_string();
        common::create_topic(&b.local_addrs()[0].to_string(), "gone", 1).await;
        let mut admin = connect(b.local_addrs()[0]).await;
        let salt = b"0123456789abcdef".to_vec();
        let salted =
            pbkdf2::pbkdf2_hmac_array::<sha2::Sha256, 32>(b"carol-secret", &salt, 4096).to_vec();
        let up = alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
            .with_name(StrBytes::from_static_str("carol"))
            .with_mechanism(1)
            .with_iterations(4096)
            .with_salt(salt.into())
            .with_salted_password(salted.into());
        let r: AlterUserScramCredentialsResponse = request(
            &mut admin,
            ApiKey::AlterUserScramCredentials,
            0,
            &AlterUserScramCredentialsRequest::default().with_upsertions(vec![up]),
        )
        .await
        .unwrap();
        assert_eq!(r.results[0].error_code, 0, "{r:?}");

        let p = sasl_client(&sasl, "SCRAM-SHA-256", "carol", "carol-secret");
        p.send(
            FutureRecord::<(), _>::to("gone").payload("before"),
            Duration::from_secs(10),
        )
        .await
        .expect("carol produces");

        let del = alter_user_scram_credentials_request::ScramCredentialDeletion::default()
            .with_name(StrBytes::from_static_str("carol"))
            .with_mechanism(1);
        let r: AlterUserScramCredentialsResponse = request(
            &mut admin,
            ApiKey::AlterUserScramCredentials,
            0,
            &AlterUserScramCredentialsRequest::default().with_deletions(vec![del]),
        )
        .await
        .unwrap();
        assert_eq!(r.results[0].error_code, 0, "{r:?}");
        let deleted = Instant::now();
        // Session lifetime + message.timeout.ms + margin.
        let limit = Duration::from_millis(GLOBAL_LIFETIME_MS) + Duration::from_secs(10);
        loop {
            let sent = p
                .send(
                    FutureRecord::<(), _>::to("gone").payload("after"),
                    Duration::from_secs(10),
                )
                .await;
            if sent.is_err() {
                break;
            }
            assert!(
                deleted.elapsed() < limit,
                "carol still produces {:?} after her deletion",
                deleted.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        b.shutdown().await.unwrap();
    });
}

/// KIP-368: a session that ends without a re-authentication is served until then, and the first request after
/// it (other than a SaslHandshake) closes the connection, as Kafka's SocketServer does.
#[test]
fn an_expired_session_is_closed_at_its_next_request() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let mut s = connect(b.local_addrs()[1]).await;
        assert_eq!(sasl_handshake(&mut s, 1, "PLAIN").await.error_code, 0);
        let authenticated = Instant::now();
        let r = sasl_authenticate(&mut s, b"\0alice\0alice-secret")
            .await
            .expect("SaslAuthenticate answered");
        assert_eq!(r.error_code, 0, "{r:?}");
        let deadline =
            authenticated + Duration::from_millis(PLAIN_LIFETIME_MS) + Duration::from_secs(5);
        loop {
            let before = authenticated.elapsed();
            match metadata(&mut s).await {
                Some(_) => assert!(
                    Instant::now() < deadline,
                    "still served after the session ended"
                ),
                None => {
                    assert!(
                        before >= Duration::from_millis(PLAIN_LIFETIME_MS - 50),
                        "closed {before:?} into a {PLAIN_LIFETIME_MS} ms session"
                    );
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        b.shutdown().await.unwrap();
    });
}

/// KIP-368 (Kafka's SaslServerAuthenticator): a re-authentication with the same mechanism and principal keeps
/// the connection; with another principal it gets SASL_AUTHENTICATION_FAILED (58) "Cannot change principals
/// during re-authentication" and the connection is closed; asking for another mechanism is answered at the
/// handshake and fails at the SaslAuthenticate that follows.
#[test]
fn re_authentication_with_another_principal_or_mechanism_is_refused() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let addr = b.local_addrs()[1];
        let login = || async {
            let mut s = connect(addr).await;
            assert_eq!(sasl_handshake(&mut s, 1, "PLAIN").await.error_code, 0);
            assert_eq!(
                sasl_authenticate(&mut s, b"\0alice\0alice-secret")
                    .await
                    .expect("SaslAuthenticate answered")
                    .error_code,
                0
            );
            s
        };

        let mut same = login().await;
        assert_eq!(sasl_handshake(&mut same, 1, "PLAIN").await.error_code, 0);
        let r = sasl_authenticate(&mut same, b"\0alice\0alice-secret")
            .await
            .expect("SaslAuthenticate answered");
        assert_eq!(
            (r.error_code, r.session_lifetime_ms),
            (0, PLAIN_LIFETIME_MS as i64),
            "{r:?}"
        );
        assert!(
            metadata(&mut same).await.is_some(),
            "re-authenticated session not served"
        );
        assert_eq!(b.broker().metrics().reauthentications("SASL"), 1);

        let mut other = login().await;
        assert_eq!(sasl_handshake(&mut other, 1, "PLAIN").await.error_code, 0);
        let r = sasl_authenticate(&mut other, b"\0bob\0bob-secret")
            .await
            .expect("SaslAuthenticate answered");
        assert_eq!(r.error_code, 58, "{r:?}");
        let msg = r.error_message.as_deref().unwrap_or_default().to_string();
        assert!(
            msg.contains("Cannot change principals during re-authentication"),
            "{msg}"
        );
        assert!(
            read_frame(&mut other).await.is_none(),
            "connection left open"
        );

        let mut mech = login().await;
        assert_eq!(
            sasl_handshake(&mut mech, 1, "SCRAM-SHA-256")
                .await
                .error_code,
            0
        );
        let r = sasl_authenticate(&mut mech, b"n,,n=alice,r=abcdefgh")
            .await
            .expect("SaslAuthenticate answered");
        assert_eq!(r.error_code, 58, "{r:?}");
        let msg = r.error_message.as_deref().unwrap_or_default().to_string();
        assert!(
            msg.contains("not supported for re-authentication of mechanism 'PLAIN'"),
            "{msg}"
        );
        assert!(
            read_frame(&mut mech).await.is_none(),
            "connection left open"
        );
        assert!(
            metadata(&mut same).await.is_some(),
            "the good session was disturbed"
        );
        b.shutdown().await.unwrap();
    });
}
