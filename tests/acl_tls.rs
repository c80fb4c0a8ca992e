//! ACLs over TLS end to end (issue 31): a client certificate's subject DN, mapped through
//! `ssl.principal.mapping.rules`, is the principal an ACL names. librdkafka (OpenSSL) producers present one of two
//! certificates signed by the listener's truststore: `CN=alice,OU=eng,O=acme` (mapped to `User:alice`, allowed WRITE
//! on the topic) is served, `CN=mallory,OU=eng,O=acme` (`User:mallory`, no ACL) gets TOPIC_AUTHORIZATION_FAILED and
//! writes nothing. The setup goes through a PLAINTEXT listener, whose `User:ANONYMOUS` is the super user here.
//! Certificates are generated with rcgen.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::raw::{connect, request};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{FutureProducer, FutureRecord};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// PEM files: the CA, the server's key and certificate, and per client (by CN) a certificate and key.
struct Pki {
    ca: PathBuf,
    server: PathBuf,
    dir: PathBuf,
}

impl Pki {
    fn client(&self, cn: &str) -> (String, String) {
        let path = |f: String| self.dir.join(f).display().to_string();
        (path(format!("{cn}.pem")), path(format!("{cn}-key.pem")))
    }
}

/// A CA, a server certificate for 127.0.0.1, and client certificates with subjects `CN=<cn>,OU=eng,O=acme`.
fn pki(dir: &Path, clients: &[&str]) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::default();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server = p.signed_by(&key, &ca, &ca_key).unwrap();
    let pki = Pki {
        ca: dir.join("ca.pem"),
        server: dir.join("server.pem"),
        dir: dir.to_path_buf(),
    };
    std::fs::write(&pki.ca, ca.pem()).unwrap();
    std::fs::write(
        &pki.server,
        format!("{}{}", key.serialize_pem(), server.pem()),
    )
    .unwrap();
    for cn in clients {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec![]).unwrap();
        // Issued in this order, the subject reads `CN=<cn>,OU=eng,O=acme` (RFC 2253 lists the last RDN first).
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(DnType::OrganizationName, "acme");
        p.distinguished_name
            .push(DnType::OrganizationalUnitName, "eng");
        p.distinguished_name.push(DnType::CommonName, *cn);
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
        let (c, k) = pki.client(cn);
        std::fs::write(c, cert.pem()).unwrap();
        std::fs::write(k, key.serialize_pem()).unwrap();
    }
    pki
}

/// A librdkafka producer presenting `cn`'s certificate; the result of producing one record to `topic`.
async fn produce_as(pki: &Pki, bootstrap: &str, cn: &str, topic: &str) -> Result<(), KafkaError> {
    let (cert, key) = pki.client(cn);
    let mut c = common::client_config(bootstrap);
    c.set("security.protocol", "ssl")
        .set("ssl.ca.location", pki.ca.display().to_string())
        .set("ssl.certificate.location", cert)
        .set("ssl.key.location", key)
        .set("acks", "all")
        .set("message.timeout.ms", "10000");
    let p: FutureProducer = c.create().expect("producer");
    p.send(
        FutureRecord::<(), _>::to(topic).payload(cn),
        Duration::from_secs(15),
    )
    .await
    .map(|_| ())
    .map_err(|(e, _)| e)
}

#[test]
fn a_mapped_certificate_dn_is_the_principal_acls_allow_or_deny() {
    common::runtime().block_on(async {
        let certs = tempfile::tempdir().unwrap();
        let pki = pki(certs.path(), &["alice", "mallory"]);
        let data = tempfile::tempdir().unwrap();
        let (ca, server) = (
            pki.ca.display().to_string(),
            pki.server.display().to_string(),
        );
        let props = [
            ("listeners", "PLAINTEXT://127.0.0.1:0,MTLS://127.0.0.1:0"),
            (
                "listener.security.protocol.map",
                "PLAINTEXT:PLAINTEXT,MTLS:SSL",
            ),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", server.as_str()),
            ("listener.name.mtls.ssl.client.auth", "required"),
            ("listener.name.mtls.ssl.truststore.location", ca.as_str()),
            (
                "ssl.principal.mapping.rules",
                "RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT",
            ),
            (
                "authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            ),
            ("super.users", "User:ANONYMOUS"),
        ];
        let broker = common::start_broker_with(data.path(), &props).await;
        let addrs = broker.local_addrs();
        let (plain, mtls) = (addrs[0], format!("127.0.0.1:{}", addrs[1].port()));

        let mut admin = connect(plain).await;
        let created: CreateTopicsResponse = request(
            &mut admin,
            ApiKey::CreateTopics,
            5,
            &CreateTopicsRequest::default()
                .with_timeout_ms(5000)
                .with_topics(vec![create_topics_request::CreatableTopic::default()
                    .with_name(TopicName(s("orders")))
                    .with_num_partitions(1)
                    .with_replication_factor(1)]),
        )
        .await
        .unwrap();
        assert_eq!(created.topics[0].error_code, 0, "{created:?}");
        // WRITE (which implies DESCRIBE) on the topic for the mapped name, not the DN.
        let acl = create_acls_request::AclCreation::default()
            .with_resource_type(2)
            .with_resource_name(s("orders"))
            .with_resource_pattern_type(3)
            .with_principal(s("User:alice"))
            .with_host(s("*"))
            .with_operation(4)
            .with_permission_type(3);
        let r: CreateAclsResponse = request(
            &mut admin,
            ApiKey::CreateAcls,
            2,
            &CreateAclsRequest::default().with_creations(vec![acl]),
        )
        .await
        .unwrap();
        assert_eq!(r.results[0].error_code, 0, "{r:?}");

        produce_as(&pki, &mtls, "alice", "orders")
            .await
            .expect("User:alice (CN=alice,OU=eng,O=acme) may write");
        let refused = produce_as(&pki, &mtls, "mallory", "orders").await;
        assert!(
            matches!(
                refused,
                Err(KafkaError::MessageProduction(
                    RDKafkaErrorCode::TopicAuthorizationFailed
                ))
            ),
            "User:mallory is refused: {refused:?}"
        );

        // Only alice's record was written.
        let end: ListOffsetsResponse = request(
            &mut admin,
            ApiKey::ListOffsets,
            7,
            &ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                    .with_name(TopicName(s("orders")))
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default().with_timestamp(-1),
                    ])]),
        )
        .await
        .unwrap();
        assert_eq!(end.topics[0].partitions[0].offset, 1, "{end:?}");
        broker.shutdown().await.unwrap();
    });
}
