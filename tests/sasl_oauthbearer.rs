//! SASL/OAUTHBEARER with unsecured JWS tokens (Kafka's default unsecured validator): librdkafka's own unsecured
//! tokens (`enable.sasl.oauthbearer.unsecure.jwt`) produce and consume as their `sub`, a token without the
//! listener's required scope is refused while another client keeps working, a bad token gets RFC 7628's error
//! challenge and then SASL_AUTHENTICATION_FAILED naming what is wrong, a token that expires before
//! `connections.max.reauth.ms` shortens the session, and a server callback handler strata does not implement stops
//! start-up naming the key.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use common::raw::{connect, metadata, read_frame, sasl_authenticate, sasl_handshake};
use common::runtime;
use rdkafka::consumer::BaseConsumer;
use rdkafka::producer::{FutureProducer, FutureRecord};

const REAUTH_MS: i64 = 60_000;

/// Listener 0 PLAINTEXT, 1 SASL_PLAINTEXT with OAUTHBEARER requiring scope `kafka`.
async fn start(data: &std::path::Path) -> strata_broker::Server {
    let reauth = REAUTH_MS.to_string();
    common::start_broker_with(
        data,
        &[
            ("listeners", "PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0"),
            (
                "listener.security.protocol.map",
                "PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT",
            ),
            ("listener.name.sasl.sasl.enabled.mechanisms", "OAUTHBEARER"),
            (
                "listener.name.sasl.oauthbearer.sasl.jaas.config",
                r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";"#,
            ),
            ("connections.max.reauth.ms", &reauth),
        ],
    )
    .await
}

fn oauth_config(bootstrap: &str, principal_and_scope: &str) -> rdkafka::ClientConfig {
    let mut c = common::client_config(bootstrap);
    c.set("security.protocol", "sasl_plaintext")
        .set("sasl.mechanism", "OAUTHBEARER")
        .set("enable.sasl.oauthbearer.unsecure.jwt", "true")
        .set("sasl.oauthbearer.config", principal_and_scope);
    c
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An unsecured JWS with these claims, as the client initial response of RFC 7628.
fn initial_response(claims: &str) -> Vec<u8> {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "n,,\x01auth=Bearer {}.{}.\x01\x01",
        b64(r#"{"alg":"none"}"#),
        b64(claims)
    )
    .into_bytes()
}

#[test]
fn librdkafka_unsecured_tokens_produce_and_consume_and_a_missing_scope_is_refused() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = start(dir.path()).await;
        let addr = server.local_addrs()[1].to_string();
        let mut pc = oauth_config(&addr, "principal=alice scope=kafka,other lifeSeconds=600");
        pc.set("acks", "all").set("message.timeout.ms", "30000");
        let p: FutureProducer = pc.create().unwrap();
        for i in 0..3 {
            p.send(
                FutureRecord::<(), _>::to("oauth").payload(&format!("m{i}")),
                Duration::from_secs(30),
            )
            .await
            .unwrap_or_else(|e| panic!("produce over OAUTHBEARER: {e:?}"));
        }
        let mut cc = oauth_config(&addr, "principal=alice scope=kafka");
        cc.set("group.id", "oauth-g");
        let c: BaseConsumer = cc.create().unwrap();
        common::assign_from_beginning(&c, "oauth", 1);
        let got = common::consume_n(&c, 3, Duration::from_secs(30));
        let values: Vec<Vec<u8>> = got.into_iter().map(|m| m.3.unwrap()).collect();
        assert_eq!(values, [b"m0".to_vec(), b"m1".to_vec(), b"m2".to_vec()]);

        // Without the required scope: refused; the first producer is not disturbed.
        let mut bad = oauth_config(&addr, "principal=mallory scope=other");
        bad.set("message.timeout.ms", "3000");
        let bad: FutureProducer = bad.create().unwrap();
        let refused = bad
            .send(
                FutureRecord::<(), _>::to("oauth").payload("x"),
                Duration::from_secs(10),
            )
            .await;
        assert!(refused.is_err(), "a token without scope kafka was accepted");
        p.send(
            FutureRecord::<(), _>::to("oauth").payload("after"),
            Duration::from_secs(30),
        )
        .await
        .expect("the authenticated producer keeps working");
        // Clients go before the broker (a consumer closing against no broker waits for its group).
        drop((bad, c, p));
        server.shutdown().await.unwrap();
    });
}

#[test]
fn a_bad_token_gets_the_error_challenge_then_a_failure_naming_the_problem() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = start(dir.path()).await;
        let addr = server.local_addrs()[1];
        let expired = format!(
            r#"{{"sub":"alice","scope":"kafka","exp":{}}}"#,
            now_s() - 60
        );
        let missing_scope = format!(r#"{{"sub":"alice","scope":"x","exp":{}}}"#, now_s() + 60);
        for (claims, challenge, why) in [
            (expired, r#"{"status":"invalid_token"}"#, "expired"),
            (
                missing_scope,
                r#"{"status":"insufficient_scope", "scope":"kafka"}"#,
                "lacks the required scope kafka",
            ),
        ] {
            let mut s = connect(addr).await;
            assert_eq!(sasl_handshake(&mut s, 1, "OAUTHBEARER").await.error_code, 0);
            let r = sasl_authenticate(&mut s, &initial_response(&claims))
                .await
                .expect("the challenge");
            assert_eq!(r.error_code, 0, "{r:?}");
            assert_eq!(&r.auth_bytes[..], challenge.as_bytes());
            let r = sasl_authenticate(&mut s, b"\x01")
                .await
                .expect("the failure");
            assert_eq!(r.error_code, 58, "{r:?}");
            let message = r.error_message.map(|m| m.to_string()).unwrap_or_default();
            assert!(message.contains(why), "{message}");
            assert!(read_frame(&mut s).await.is_none(), "connection left open");
        }
        // Not an RFC 7628 message at all: refused at once.
        let mut s = connect(addr).await;
        assert_eq!(sasl_handshake(&mut s, 1, "OAUTHBEARER").await.error_code, 0);
        let r = sasl_authenticate(&mut s, b"Bearer abc").await.unwrap();
        assert_eq!(r.error_code, 58, "{r:?}");
        assert!(read_frame(&mut s).await.is_none());
        // An authorization id other than the token's subject.
        let mut s = connect(addr).await;
        assert_eq!(sasl_handshake(&mut s, 1, "OAUTHBEARER").await.error_code, 0);
        let claims = format!(
            r#"{{"sub":"alice","scope":"kafka","exp":{}}}"#,
            now_s() + 60
        );
        let mut token = initial_response(&claims);
        token.splice(2..2, b"a=bob".iter().copied());
        let r = sasl_authenticate(&mut s, &token).await.unwrap();
        assert_eq!(r.error_code, 58, "{r:?}");
        server.shutdown().await.unwrap();
    });
}

#[test]
fn a_token_expiring_before_the_reauth_limit_shortens_the_session() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = start(dir.path()).await;
        let mut s = connect(server.local_addrs()[1]).await;
        assert_eq!(sasl_handshake(&mut s, 1, "OAUTHBEARER").await.error_code, 0);
        let claims = format!(
            r#"{{"sub":"alice","scope":["kafka"],"iat":{},"exp":{}}}"#,
            now_s(),
            now_s() + 20
        );
        let r = sasl_authenticate(&mut s, &initial_response(&claims))
            .await
            .unwrap();
        assert_eq!(r.error_code, 0, "{r:?}");
        assert!(r.auth_bytes.is_empty());
        assert!(
            r.session_lifetime_ms > 0 && r.session_lifetime_ms <= 20_000,
            "lifetime {} ms for a token expiring in 20 s (max {REAUTH_MS})",
            r.session_lifetime_ms
        );
        assert!(
            metadata(&mut s).await.is_some(),
            "authenticated requests are served"
        );
        server.shutdown().await.unwrap();
    });
}

#[test]
fn a_signed_token_validator_stops_start_up_naming_the_key() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let props = common::local_props(
            dir.path(),
            &[
                ("listeners", "SASL_PLAINTEXT://127.0.0.1:0"),
                ("sasl.enabled.mechanisms", "OAUTHBEARER"),
                (
                    "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
                ),
            ],
        );
        let err = strata_broker::Server::start_from_properties(&props)
            .await
            .expect_err("start-up refused")
            .to_string();
        assert!(
            err.contains("listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class")
                && err.contains("unsecured"),
            "{err}"
        );
    });
}
