//! The TLS server side of an SSL or SASL_SSL listener, with rustls: the listener's key and chain (a PKCS12
//! keystore with its password, or PEM from
//! `ssl.keystore.location` or inline `ssl.keystore.key` + `ssl.keystore.certificate.chain`), client
//! certificates checked against `ssl.truststore.*` as `ssl.client.auth` asks, `ssl.enabled.protocols`.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::{bad, self_signed, ListenerProps};
use crate::error::Result;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// A PEM text given inline (`key` = its name) or in a file (`key` = the location key): its bytes and where it
/// came from, for errors.
fn pem_source(key: &str, value: &str, inline: bool) -> Result<(Vec<u8>, String)> {
    if inline {
        return Ok((value.as_bytes().to_vec(), format!("{key} (inline)")));
    }
    let bytes =
        std::fs::read(value).map_err(|e| bad(key, value, format!("cannot read {value}: {e}")))?;
    Ok((bytes, value.to_string()))
}

/// PEM text with each section rebuilt as 64-character lines: a section given on one line (a KAFKA_* variable, a
/// properties value continued with `\`) has spaces where the line breaks were, which Kafka's PemParser accepts
/// and rustls's reader does not. Text that is not UTF-8 is left as it is.
fn normalized_pem(pem: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(pem) else {
        return pem.to_vec();
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(label_end) = after.find("-----") else {
            break;
        };
        let label = &after[..label_end];
        let end_marker = format!("-----END {label}-----");
        let body_start = &after[label_end + 5..];
        let Some(body_end) = body_start.find(&end_marker) else {
            break;
        };
        let body: String = body_start[..body_end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        out.push_str(&format!("-----BEGIN {label}-----\n"));
        for line in body.as_bytes().chunks(64) {
            out.push_str(std::str::from_utf8(line).unwrap_or_default());
            out.push('\n');
        }
        out.push_str(&end_marker);
        out.push('\n');
        rest = &body_start[body_end + end_marker.len()..];
    }
    out.into_bytes()
}

fn certificates(
    key: &str,
    value: &str,
    pem: &[u8],
    from: &str,
) -> Result<Vec<CertificateDer<'static>>> {
    let pem = &normalized_pem(pem)[..];
    // The reader's error is not shown: it can quote the text it could not read.
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| {
            bad(
                key,
                value,
                format!(
                    "{from}: not a valid PEM certificate (a -----BEGIN CERTIFICATE----- section)"
                ),
            )
        })?;
    if certs.is_empty() {
        return Err(bad(key, value, format!("{from} holds no PEM certificate")));
    }
    Ok(certs)
}

/// The private key of PEM text: a PKCS#8, PKCS#1 or SEC1 key, or an encrypted PKCS#8 key (`-----BEGIN ENCRYPTED
/// PRIVATE KEY-----`, PBES2 as `openssl pkcs8 -topk8` writes it) opened with `password` (`ssl.key.password`).
fn private_key(
    key: &str,
    value: &str,
    pem: &[u8],
    from: &str,
    password: Option<&str>,
) -> Result<PrivateKeyDer<'static>> {
    if pem.windows(10).any(|w| w == b"Proc-Type:") || pem.windows(9).any(|w| w == b"DEK-Info:") {
        return Err(bad(
            key,
            value,
            format!(
                "{from}: the key is encrypted the legacy OpenSSL way; convert it to PKCS#8 \
                 (`openssl pkcs8 -topk8 -v2 aes-256-cbc`) and give its password in ssl.key.password"
            ),
        ));
    }
    let pem = normalized_pem(pem);
    const BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
    let text = String::from_utf8_lossy(&pem);
    if let Some(start) = text.find(BEGIN) {
        let Some(password) = password else {
            return Err(bad(
                key,
                value,
                format!("{from}: the private key is encrypted and ssl.key.password is not set"),
            ));
        };
        let body = &text[start + BEGIN.len()..];
        let body = &body[..body.find("-----END").unwrap_or(body.len())];
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.split_whitespace().collect::<String>())
            .map_err(|_| {
                bad(
                    key,
                    value,
                    format!("{from}: the encrypted private key is not base64"),
                )
            })?;
        let info = pkcs8::EncryptedPrivateKeyInfoRef::try_from(&der[..]).map_err(|e| {
            bad(
                key,
                value,
                format!("{from}: not a PKCS#8 encrypted private key: {e}"),
            )
        })?;
        let plain = info.decrypt(password).map_err(|_| {
            bad(
                key,
                value,
                format!("{from}: ssl.key.password does not decrypt the private key (or its cipher is not PBES2)"),
            )
        })?;
        return Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()));
    }
    // The reader's error is not shown: it can quote the key.
    PrivateKeyDer::from_pem_slice(&pem).map_err(|_| {
        bad(
            key,
            value,
            format!("{from}: no PEM private key (a -----BEGIN PRIVATE KEY----- section)"),
        )
    })
}

/// A keystore or truststore type: `ssl.keystore.type` / `ssl.truststore.type` (PEM or PKCS12; JKS is refused
/// naming the conversion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreType {
    Pem,
    Pkcs12,
}

fn store_type(props: &ListenerProps<'_>, key: &str) -> Result<StoreType> {
    // Kafka's default type is JKS; a file given without a type is read as what it holds (PEM text or PKCS12).
    let Some((k, ty)) = props.get(key) else {
        let location = key.replace(".type", ".location");
        // A DER store starts with a SEQUENCE tag; PEM text does not (only its first byte is read).
        let pkcs12 = props.get(&location).is_some_and(|(_, path)| {
            let mut first = [0u8; 1];
            std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut first))
                .is_ok_and(|()| first[0] == 0x30)
        });
        return Ok(if pkcs12 {
            StoreType::Pkcs12
        } else {
            StoreType::Pem
        });
    };
    match ty.trim().to_ascii_uppercase().as_str() {
        "PEM" => Ok(StoreType::Pem),
        "PKCS12" => Ok(StoreType::Pkcs12),
        _ => Err(bad(
            &k,
            ty,
            "strata reads PEM and PKCS12 keystores and truststores (convert a JKS store with `keytool \
             -importkeystore -srckeystore <file>.jks -destkeystore <file>.p12 -deststoretype PKCS12`)",
        )),
    }
}

/// A PKCS12 store at `location_key` = `path`, opened with the password of `password_key` (and, for a keystore
/// whose key has its own password, `ssl.key.password`).
fn pkcs12(
    props: &ListenerProps<'_>,
    location_key: &str,
    path: &str,
    password_key: &str,
    policy: p12_keystore::Pkcs12ImportPolicy,
) -> Result<p12_keystore::KeyStore> {
    let bytes = std::fs::read(path)
        .map_err(|e| bad(location_key, path, format!("cannot read {path}: {e}")))?;
    let mut passwords: Vec<(String, &str)> = Vec::new();
    if let Some((k, v)) = props.get(password_key) {
        passwords.push((k, v));
    }
    if password_key == "ssl.keystore.password" {
        if let Some((k, v)) = props.get("ssl.key.password") {
            passwords.push((k, v));
        }
    }
    if passwords.is_empty() {
        passwords.push((format!("{password_key} (not set)"), ""));
    }
    let mut last = String::new();
    for (k, password) in &passwords {
        match p12_keystore::KeyStore::from_pkcs12(&bytes, password, policy) {
            Ok(store) => return Ok(store),
            Err(e) => last = format!("{path}: not a PKCS12 store {k} opens: {e}"),
        }
    }
    Err(bad(location_key, path, last))
}

/// The certificates of a PKCS12 truststore: every certificate it holds (read with the Raw policy: `openssl pkcs12
/// -export -nokeys` writes certificates without Java's trusted-certificate attribute).
fn pkcs12_certificates(store: &p12_keystore::KeyStore) -> Vec<CertificateDer<'static>> {
    let mut out = Vec::new();
    for (_, entry) in store.entries() {
        match entry {
            p12_keystore::KeyStoreEntry::Certificate(c) => {
                out.push(CertificateDer::from(c.as_der().to_vec()))
            }
            p12_keystore::KeyStoreEntry::PrivateKeyChain(chain) => out.extend(
                chain
                    .certs()
                    .iter()
                    .map(|c| CertificateDer::from(c.as_der().to_vec())),
            ),
            p12_keystore::KeyStoreEntry::Secret(_) => {}
        }
    }
    out
}

/// The listener's certificate chain and key.
fn keystore(
    props: &ListenerProps<'_>,
    listener: &str,
    self_signed_dir: Option<&Path>,
    hosts: &[String],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let ty = store_type(props, "ssl.keystore.type")?;
    if let (Some((kk, kv)), Some((ck, cv))) = (
        props.get("ssl.keystore.key"),
        props.get("ssl.keystore.certificate.chain"),
    ) {
        let password = props.get("ssl.key.password").map(|(_, v)| v);
        let key = private_key(
            &kk,
            "(hidden)",
            kv.as_bytes(),
            &format!("{kk} (inline)"),
            password,
        )?;
        let certs = certificates(&ck, "(inline)", cv.as_bytes(), &format!("{ck} (inline)"))?;
        return Ok((certs, key));
    }
    if let Some((k, v)) = props
        .get("ssl.keystore.key")
        .or_else(|| props.get("ssl.keystore.certificate.chain"))
    {
        let _ = v;
        return Err(bad(
            &k,
            "(hidden)",
            "an inline keystore needs both ssl.keystore.key and ssl.keystore.certificate.chain",
        ));
    }
    if let (Some((k, path)), StoreType::Pkcs12) = (props.get("ssl.keystore.location"), ty) {
        let store = pkcs12(
            props,
            &k,
            path,
            "ssl.keystore.password",
            p12_keystore::Pkcs12ImportPolicy::Strict,
        )?;
        let (_, chain) = store.private_key_chain().ok_or_else(|| {
            bad(
                &k,
                path,
                format!(
                    "{path}: the PKCS12 keystore holds no private key with its certificate chain"
                ),
            )
        })?;
        let certs = chain
            .certs()
            .iter()
            .map(|c| CertificateDer::from(c.as_der().to_vec()))
            .collect::<Vec<_>>();
        if certs.is_empty() {
            return Err(bad(
                &k,
                path,
                format!("{path}: the PKCS12 key entry has no certificate"),
            ));
        }
        let key = PrivateKeyDer::Pkcs8(chain.key().as_der().to_vec().into());
        return Ok((certs, key));
    }
    if let Some((k, path)) = props.get("ssl.keystore.location") {
        let (pem, from) = pem_source(&k, path, false)?;
        let certs = certificates(&k, path, &pem, &from)?;
        let password = props.get("ssl.key.password").map(|(_, v)| v);
        let key = private_key(&k, path, &pem, &from, password)?;
        return Ok((certs, key));
    }
    if let Some(dir) = self_signed_dir {
        return self_signed::listener_certificate(dir, listener, hosts);
    }
    Err(bad(
        &format!("listener.name.{}.ssl.keystore.location", listener.to_ascii_lowercase()),
        "",
        format!(
            "listener {listener} speaks TLS and needs a key and certificate: ssl.keystore.location (a PEM file with \
             both), or ssl.keystore.key + ssl.keystore.certificate.chain, or ssl.self.signed.enable=true for development"
        ),
    ))
}

/// The CA certificates client certificates are checked against, if any are configured.
fn truststore(props: &ListenerProps<'_>) -> Result<Option<(String, RootCertStore)>> {
    let ty = store_type(props, "ssl.truststore.type")?;
    if let (Some((k, path)), StoreType::Pkcs12, None) = (
        props.get("ssl.truststore.location"),
        ty,
        props.get("ssl.truststore.certificates"),
    ) {
        let store = pkcs12(
            props,
            &k,
            path,
            "ssl.truststore.password",
            p12_keystore::Pkcs12ImportPolicy::Raw,
        )?;
        let mut roots = RootCertStore::empty();
        for cert in pkcs12_certificates(&store) {
            roots.add(cert).map_err(|e| {
                bad(
                    &k,
                    path,
                    format!("{path}: not a usable CA certificate: {e}"),
                )
            })?;
        }
        if roots.is_empty() {
            return Err(bad(
                &k,
                path,
                format!("{path}: the PKCS12 truststore holds no certificate"),
            ));
        }
        return Ok(Some((k, roots)));
    }
    let (k, v, inline) = match (
        props.get("ssl.truststore.certificates"),
        props.get("ssl.truststore.location"),
    ) {
        (Some((k, v)), _) => (k, v, true),
        (None, Some((k, v))) => (k, v, false),
        (None, None) => return Ok(None),
    };
    let (pem, from) = pem_source(&k, v, inline)?;
    let shown = if inline { "(inline)" } else { v };
    let mut roots = RootCertStore::empty();
    for cert in certificates(&k, shown, &pem, &from)? {
        roots.add(cert).map_err(|e| {
            bad(
                &k,
                shown,
                format!("{from}: not a usable CA certificate: {e}"),
            )
        })?;
    }
    Ok(Some((k, roots)))
}

/// What is wrong with a certificate's validity period at `now`, if anything (expired, not yet valid, or expiring
/// within 30 days).
fn validity_problem(leaf: &[u8], now: std::time::SystemTime) -> Option<String> {
    use x509_cert::der::Decode;
    let cert = x509_cert::Certificate::from_der(leaf).ok()?;
    let validity = cert.tbs_certificate().validity();
    let (from, until) = (
        validity.not_before.to_system_time(),
        validity.not_after.to_system_time(),
    );
    let secs = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    if until <= now {
        Some(format!(
            "expired at {} (unix seconds): TLS clients will refuse it",
            secs(until)
        ))
    } else if from > now {
        Some(format!(
            "is not valid before {} (unix seconds): TLS clients will refuse it until then",
            secs(from)
        ))
    } else {
        let left = until.duration_since(now).unwrap_or_default();
        (left < std::time::Duration::from_secs(30 * 86_400))
            .then(|| format!("expires in {} days", left.as_secs() / 86_400))
    }
}

/// Logs a WARN when the listener's certificate is expired, not yet valid, or about to expire.
fn check_validity(listener: &str, leaf: &CertificateDer<'_>, now: std::time::SystemTime) {
    if let Some(problem) = validity_problem(leaf, now) {
        tracing::warn!(listener, "the listener's TLS certificate {problem}");
    }
}

/// `ssl.enabled.protocols` as rustls versions (TLSv1 and TLSv1.1, which rustls does not speak, are left out
/// with a warning; none left stops start-up).
fn protocols(props: &ListenerProps<'_>) -> Result<Vec<&'static rustls::SupportedProtocolVersion>> {
    let (k, v) = props.get_or("ssl.enabled.protocols", "TLSv1.2,TLSv1.3");
    let mut out = Vec::new();
    for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match p {
            "TLSv1.3" => out.push(&rustls::version::TLS13),
            "TLSv1.2" => out.push(&rustls::version::TLS12),
            other => {
                tracing::warn!(key = %k, protocol = other, "TLS protocol not supported by rustls, left out")
            }
        }
    }
    if out.is_empty() {
        return Err(bad(
            &k,
            v,
            "no protocol strata speaks: use TLSv1.2 and/or TLSv1.3",
        ));
    }
    Ok(out)
}

/// The listener's chain with its key, the key checked against the first certificate as rustls's
/// `with_single_cert` does, an X.509 v1 certificate (Kafka's documented `openssl x509 -req` recipe; webpki cannot
/// read it) included.
fn certified_key(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> std::result::Result<rustls::sign::CertifiedKey, rustls::Error> {
    let signing = provider().key_provider.load_private_key(key)?;
    let certified = rustls::sign::CertifiedKey::new(certs, signing);
    let leaf = certified.end_entity_cert()?;
    let checked = if super::client_cert::is_x509_v1(leaf) {
        match certified.key.public_key() {
            Some(spki) if spki.as_ref() != super::x509_v1::spki(leaf)? => {
                Err(rustls::InconsistentKeys::KeyMismatch.into())
            }
            _ => Ok(()),
        }
    } else {
        certified.keys_match()
    };
    match checked {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified)
        }
        Err(e) => Err(e),
    }
}

/// The TLS acceptor of `listener` (the key and certificate from `self_signed_dir`'s developer CA when no
/// keystore is given and it is `Some`, for `hosts` beside localhost); `sasl` for a SASL_SSL listener.
pub fn acceptor(
    props: &ListenerProps<'_>,
    listener: &str,
    self_signed_dir: Option<&Path>,
    hosts: &[String],
    sasl: bool,
) -> Result<TlsAcceptor> {
    let versions = protocols(props)?;
    let (certs, key) = keystore(props, listener, self_signed_dir, hosts)?;
    if let Some(leaf) = certs.first() {
        check_validity(listener, leaf, std::time::SystemTime::now());
    }
    // KIP-684: on a SASL_SSL listener only the listener-prefixed key asks for client certificates (a broker-wide
    // ssl.client.auth is meant for its SSL listeners).
    let (auth_key, auth) = if sasl {
        props.prefixed("ssl.client.auth")
    } else {
        props.get("ssl.client.auth")
    }
    .unwrap_or_else(|| ("ssl.client.auth".to_string(), "none"));
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&versions)
        .map_err(|e| bad("ssl.enabled.protocols", "", e.to_string()))?;
    let trust = truststore(props)?;
    let builder = match auth.to_ascii_lowercase().as_str() {
        "none" => builder.with_no_client_auth(),
        mode @ ("requested" | "required") => {
            let Some((_, roots)) = trust else {
                return Err(bad(
                    &auth_key,
                    auth,
                    "client certificates need a truststore: ssl.truststore.location or ssl.truststore.certificates",
                ));
            };
            let roots = Arc::new(roots);
            let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), provider());
            let verifier = if mode == "requested" {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| bad(&auth_key, auth, e.to_string()))?;
            builder.with_client_cert_verifier(Arc::new(super::client_cert::ClientCerts {
                webpki: verifier,
                roots,
                algs: provider().signature_verification_algorithms,
            }))
        }
        _ => return Err(bad(&auth_key, auth, "must be none, requested or required")),
    };
    let (where_key, where_value) = props
        .get("ssl.keystore.location")
        .unwrap_or_else(|| ("ssl.keystore.key".into(), "(inline)"));
    let certified = certified_key(certs, key).map_err(|e| {
        bad(
            &where_key,
            where_value,
            format!("the private key does not fit the certificate chain: {e}"),
        )
    })?;
    let config =
        builder.with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expired, not yet valid and soon expiring certificates are named; a current one is not.
    #[test]
    fn certificate_validity_problems_are_named() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2030, 1, 1);
        let der = p.self_signed(&key).unwrap().der().to_vec();
        let at = |y: u64| {
            std::time::UNIX_EPOCH + std::time::Duration::from_secs((y - 1970) * 365 * 86_400)
        };
        assert_eq!(validity_problem(&der, at(2026)), None);
        assert!(validity_problem(&der, at(2031))
            .unwrap()
            .contains("expired"));
        assert!(validity_problem(&der, at(2019))
            .unwrap()
            .contains("not valid before"));
        let soon =
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_893_456_000 - 10 * 86_400);
        assert!(
            validity_problem(&der, soon).unwrap().contains("expires in"),
            "{:?}",
            validity_problem(&der, soon)
        );
        assert_eq!(validity_problem(b"not a certificate", at(2026)), None);
    }

    /// A key and chain given on one line (spaces where the line breaks were) read as the PEM they are; an
    /// unreadable key's error never quotes it.
    #[test]
    fn one_line_pem_is_read_and_errors_do_not_quote_the_key() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let one_line = |pem: String| pem.replace('\n', " ");
        let key_line = one_line(key.serialize_pem());
        let cert_line = one_line(cert.pem());
        assert!(!key_line.contains('\n'));
        let k = private_key(
            "ssl.keystore.key",
            "(hidden)",
            key_line.as_bytes(),
            "inline",
            None,
        )
        .unwrap();
        assert_eq!(k.secret_der(), key.serialized_der());
        let c = certificates("c", "(inline)", cert_line.as_bytes(), "inline").unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].as_ref(), cert.der().as_ref());

        let body: String = key_line
            .split("-----")
            .nth(2)
            .unwrap()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let garbled = format!(
            "-----BEGIN PRIVATE KEY----- {}!! -----END PRIVATE KEY-----",
            &body[..40]
        );
        let e = private_key(
            "ssl.keystore.key",
            "(hidden)",
            garbled.as_bytes(),
            "inline",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("ssl.keystore.key") && !e.contains(&body[..20]),
            "{e}"
        );
        let bytes = garbled.as_bytes()[..10]
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        assert!(!e.contains(&bytes), "{e}");
    }
}
