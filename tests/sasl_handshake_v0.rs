//! KIP-43's SaslHandshake v0 flow on a SASL_PLAINTEXT listener, as Kafka's SaslServerAuthenticator serves it
//! (its Kafka SaslAuthenticate headers stay off after a v0 handshake): the client then sends its SASL tokens as
//! raw length-prefixed frames with no request header, and the broker answers each with a raw length-prefixed
//! token: empty (a 4-byte zero length) for PLAIN's success, the server-first and server-final messages for
//! SCRAM. Wrong credentials close the connection without an answer. kafka-python <= 2.0.2 logs in this way.

use crate::common;

use std::net::SocketAddr;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use bytes::Bytes;
use common::raw::{connect, read_frame, request, sasl_authenticate, sasl_handshake, send_frame};
use common::runtime;
use hmac::{Hmac, KeyInit, Mac};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Listeners: 0 PLAINTEXT (admin), 1 SASL (SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256). PLAIN user `al` has a
/// token `\0al\0pw` of 6 bytes, shorter than any request header.
async fn start(data: &std::path::Path) -> strata_broker::Server {
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
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_al="pw" user_alice="alice-secret";"#,
            ),
        ],
    )
    .await
}

/// SaslHandshake v0 for `mechanism`: its error code.
async fn handshake_v0(s: &mut TcpStream, mechanism: &'static str) -> i16 {
    sasl_handshake(s, 0, mechanism).await.error_code
}

/// Sends a raw token and reads the raw answer (`None`: the broker closed the connection).
async fn raw_token(s: &mut TcpStream, token: &[u8]) -> Option<Bytes> {
    send_frame(s, token).await;
    read_frame(s).await
}

async fn metadata(s: &mut TcpStream) -> Option<MetadataResponse> {
    request(s, ApiKey::Metadata, 1, &MetadataRequest::default()).await
}

/// KIP-43: after SaslHandshake v0 a raw PLAIN token (6 bytes here, no request header) authenticates, the answer
/// is an empty raw token, and requests are served afterwards; a SaslHandshake v0 on the authenticated session
/// cannot start a re-authentication (KIP-368 needs v1+) and closes it. A wrong password closes the connection
/// without an answer (Kafka's authenticator fails the channel).
#[test]
fn a_raw_plain_token_after_sasl_handshake_v0_authenticates() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let addr = b.local_addrs()[1];

        let mut s = connect(addr).await;
        assert_eq!(handshake_v0(&mut s, "PLAIN").await, 0);
        let answer = raw_token(&mut s, b"\0al\0pw").await;
        assert_eq!(answer.as_deref(), Some(&[][..]), "raw PLAIN answer");
        let m = metadata(&mut s)
            .await
            .expect("Metadata served after raw PLAIN");
        assert_eq!(m.brokers.len(), 1);
        let reauth: Option<SaslHandshakeResponse> = request(
            &mut s,
            ApiKey::SaslHandshake,
            0,
            &SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str("PLAIN")),
        )
        .await;
        assert!(
            reauth.is_none(),
            "SaslHandshake v0 re-authentication answered"
        );

        let mut wrong = connect(addr).await;
        assert_eq!(handshake_v0(&mut wrong, "PLAIN").await, 0);
        assert!(
            raw_token(&mut wrong, b"\0alice\0wrong").await.is_none(),
            "wrong password answered"
        );
        b.shutdown().await.unwrap();
    });
}

/// AlterUserScramCredentials for `user` with SCRAM-SHA-256, salt `salt`, 4096 iterations.
async fn upsert_scram(admin: SocketAddr, user: &str, password: &str, salt: &[u8]) {
    let salted = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), salt, 4096);
    let up = alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
        .with_name(StrBytes::from_string(user.to_string()))
        .with_mechanism(1)
        .with_iterations(4096)
        .with_salt(Bytes::copy_from_slice(salt))
        .with_salted_password(Bytes::copy_from_slice(&salted));
    let mut s = connect(admin).await;
    let r: AlterUserScramCredentialsResponse = request(
        &mut s,
        ApiKey::AlterUserScramCredentials,
        0,
        &AlterUserScramCredentialsRequest::default().with_upsertions(vec![up]),
    )
    .await
    .expect("answered");
    assert_eq!(r.results[0].error_code, 0, "{r:?}");
}

fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).unwrap();
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}

/// RFC 5802 client side of SCRAM-SHA-256 over raw tokens: `Some(server-final)` verified against the password,
/// `None` once the broker closes the connection.
async fn scram_raw(s: &mut TcpStream, user: &str, password: &str) -> Option<String> {
    let bare = format!("n={user},r=clientnonce123");
    let first = raw_token(s, format!("n,,{bare}").as_bytes()).await?;
    let server_first = String::from_utf8(first.to_vec()).unwrap();
    let attr = |k: &str| {
        server_first
            .split(',')
            .find_map(|p| p.strip_prefix(k))
            .unwrap()
            .to_string()
    };
    let (nonce, salt, iterations) = (attr("r="), attr("s="), attr("i="));
    assert!(nonce.starts_with("clientnonce123"), "{server_first}");
    let salt = B64.decode(salt).unwrap();
    let salted = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(
        password.as_bytes(),
        &salt,
        iterations.parse().unwrap(),
    );
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let client_key = hmac(&salted, b"Client Key");
    let signature = hmac(&Sha256::digest(&client_key), auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(a, b)| a ^ b)
        .collect();
    let last = format!("{without_proof},p={}", B64.encode(proof));
    let server_final = raw_token(s, last.as_bytes()).await?;
    let server_final = String::from_utf8(server_final.to_vec()).unwrap();
    let expected = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
    assert_eq!(server_final, format!("v={}", B64.encode(expected)));
    Some(server_final)
}

/// KIP-43 with SCRAM-SHA-256 (RFC 5802): after SaslHandshake v0 the client-first and client-final messages go
/// as raw tokens and the server-first and server-final messages come back raw; then requests are served. A
/// wrong password closes the connection at the client-final message.
#[test]
fn scram_rounds_after_sasl_handshake_v0_are_raw_tokens() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let addr = b.local_addrs()[1];
        upsert_scram(
            b.local_addrs()[0],
            "carol",
            "carol-secret",
            b"0123456789abcdef",
        )
        .await;

        let mut s = connect(addr).await;
        assert_eq!(handshake_v0(&mut s, "SCRAM-SHA-256").await, 0);
        assert!(scram_raw(&mut s, "carol", "carol-secret").await.is_some());
        assert!(
            metadata(&mut s).await.is_some(),
            "Metadata not served after raw SCRAM"
        );

        let mut wrong = connect(addr).await;
        assert_eq!(handshake_v0(&mut wrong, "SCRAM-SHA-256").await, 0);
        assert!(
            scram_raw(&mut wrong, "carol", "wrong").await.is_none(),
            "wrong SCRAM password answered"
        );
        b.shutdown().await.unwrap();
    });
}

/// Before authentication Kafka reads frames of at most `sasl.server.max.receive.size` (default 512 KiB): a raw
/// token declared larger closes the connection before any of it is read.
#[test]
fn a_raw_token_over_the_sasl_receive_size_closes_the_connection() {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let b = start(dir.path()).await;
        let mut s = connect(b.local_addrs()[1]).await;
        assert_eq!(handshake_v0(&mut s, "PLAIN").await, 0);
        s.write_all(&(512 * 1024 + 1i32).to_be_bytes())
            .await
            .unwrap();
        assert!(read_frame(&mut s).await.is_none(), "oversized token kept");

        // During a re-authentication (KIP-368, SaslHandshake v1 on an authenticated connection) frames are
        // bounded as before authentication: a 600 KiB frame closes the connection.
        let mut s = connect(b.local_addrs()[1]).await;
        assert_eq!(sasl_handshake(&mut s, 1, "PLAIN").await.error_code, 0);
        let r = sasl_authenticate(&mut s, b"\0al\0pw")
            .await
            .expect("authenticated");
        assert_eq!(r.error_code, 0);
        assert!(metadata(&mut s).await.is_some());
        assert_eq!(
            sasl_handshake(&mut s, 1, "PLAIN").await.error_code,
            0,
            "re-authentication starts"
        );
        // A frame declared at 600 KiB: refused from its length (the broker closes before reading it).
        s.write_all(&(600 * 1024i32).to_be_bytes()).await.unwrap();
        assert!(
            read_frame(&mut s).await.is_none(),
            "a 600 KiB frame during re-authentication was read"
        );
        b.shutdown().await.unwrap();
    });
}
