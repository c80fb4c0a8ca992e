//! X.509 v1 end-entity certificates checked the way Java's PKIX validator (Kafka's JSSE trust manager) checks
//! them. rustls's webpki takes only v3 end-entity certificates ("We allow only v3" in rustls-webpki's `cert.rs`,
//! with no switch), while Kafka's security documentation signs certificates with `openssl x509 -req -CA ca-cert
//! -CAkey ca-key ... -CAcreateserial` and no `-extfile`, which makes v1 ones. v3 certificates never come here:
//! they go to webpki unchanged.
//!
//! For a v1 end entity the path is built and checked here with webpki's and rustls's primitives (the DER split
//! with the `der` crate, every signature with the provider's [`WebPkiSupportedAlgorithms`] through
//! [`webpki::RawPublicKeyEntity`], trust anchors from the same [`RootCertStore`] webpki uses):
//! - the end entity: valid at `now` (notBefore ≤ now ≤ notAfter), the same signature algorithm inside and
//!   outside its TBSCertificate, no extensions (v1 has none);
//! - each certificate is signed by the next: its issuer name equals the next one's subject (byte for byte, as
//!   webpki compares names) and its signature verifies with the next one's key, with an algorithm the provider
//!   accepts for certificates (the same list webpki uses, so no SHA-1);
//! - an intermediate (a CA certificate the client sent) is v3, valid at `now`, has basicConstraints cA=TRUE, a
//!   pathLenConstraint not exceeded, keyCertSign if it has keyUsage, and no critical extension this check does
//!   not know. Java refuses v1 intermediates too (its `ConstraintsChecker`: "this is not a CA certificate");
//! - the path ends at a trust anchor of the truststore (v1 anchors included, as webpki reads them); an anchor
//!   with name constraints is not used for a v1 end entity (they are not checked here), nor is a certificate
//!   that only webpki's v3 path would accept.
//!
//! At most [`MAX_INTERMEDIATES`] intermediates deep and [`MAX_SIGNATURES`] signature checks per handshake (webpki
//! allows 100), so a client cannot make the broker search a large graph.

use std::cell::Cell;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, SubjectPublicKeyInfoDer, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, PeerMisbehaved, RootCertStore};
use x509_cert::certificate::Version;
use x509_cert::der::asn1::{AnyRef, BitStringRef};
use x509_cert::der::oid::AssociatedOid;
use x509_cert::der::{Decode, Reader, SliceReader, Tag, TagNumber, Tagged};
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName,
    SubjectKeyIdentifier,
};

/// How many intermediates a v1 end entity's path may have.
pub const MAX_INTERMEDIATES: usize = 6;
/// How many signatures one v1 path search may check.
pub const MAX_SIGNATURES: u32 = 100;

/// A refusal with its reason (rustls sends certificate_unknown for it and logs the text).
fn refused(why: impl Into<String>) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(
        std::sync::Arc::new(Reason(why.into())),
    )))
}

/// The text of a refusal.
struct Reason(String);

impl std::fmt::Debug for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reason {}

/// A certificate as the path check reads it: the bytes signed and compared, and the decoded fields.
struct Parsed<'a> {
    /// The TBSCertificate, tag and length included: what the signature covers.
    tbs: &'a [u8],
    /// The outer signatureAlgorithm's contents (webpki's `AlgorithmIdentifier` form).
    sig_alg: &'a [u8],
    /// The TBSCertificate's signature field's contents (must equal `sig_alg`).
    inner_sig_alg: &'a [u8],
    /// The signature bits.
    signature: &'a [u8],
    /// The issuer Name's contents (as webpki's `TrustAnchor::subject`).
    issuer: &'a [u8],
    /// The subject Name's contents.
    subject: &'a [u8],
    /// The SubjectPublicKeyInfo, tag and length included.
    spki: &'a [u8],
    /// The decoded certificate (version, validity, extensions).
    cert: x509_cert::Certificate,
}

impl<'a> Parsed<'a> {
    fn new(der: &'a [u8]) -> Result<Self, rustls::Error> {
        let bad = |_: x509_cert::der::Error| {
            rustls::Error::InvalidCertificate(CertificateError::BadEncoding)
        };
        let mut r = SliceReader::new(der).map_err(bad)?;
        let (tbs, sig_alg, signature) = r
            .sequence(|r| {
                let tbs = r.tlv_bytes()?;
                let alg: AnyRef<'a> = r.decode()?;
                let sig: BitStringRef<'a> = r.decode()?;
                Ok::<_, x509_cert::der::Error>((tbs, alg, sig))
            })
            .map_err(bad)?;
        r.finish().map_err(bad)?;
        let malformed = || rustls::Error::InvalidCertificate(CertificateError::BadEncoding);
        if sig_alg.tag() != Tag::Sequence {
            return Err(malformed());
        }
        let signature = signature.as_bytes().ok_or_else(malformed)?;
        let mut t = SliceReader::new(tbs).map_err(bad)?;
        let (inner_sig_alg, issuer, subject, spki) = t
            .sequence(|t| {
                let version = Tag::ContextSpecific {
                    constructed: true,
                    number: TagNumber(0),
                };
                if Tag::peek(t)? == version {
                    t.tlv_bytes()?;
                }
                let _serial = t.tlv_bytes()?;
                let inner: AnyRef<'a> = t.decode()?;
                let issuer: AnyRef<'a> = t.decode()?;
                let _validity = t.tlv_bytes()?;
                let subject: AnyRef<'a> = t.decode()?;
                let spki = t.tlv_bytes()?;
                while !t.is_finished() {
                    t.tlv_bytes()?;
                }
                Ok::<_, x509_cert::der::Error>((inner, issuer, subject, spki))
            })
            .map_err(bad)?;
        let cert = x509_cert::Certificate::from_der(der).map_err(bad)?;
        Ok(Parsed {
            tbs,
            sig_alg: sig_alg.value(),
            inner_sig_alg: inner_sig_alg.value(),
            signature,
            issuer: issuer.value(),
            subject: subject.value(),
            spki,
            cert,
        })
    }

    /// Refuses a certificate not valid at `now` (RFC 5280: both ends of the validity period included).
    fn check_validity(&self, now: UnixTime, what: &str) -> Result<(), rustls::Error> {
        let validity = self.cert.tbs_certificate().validity();
        let (from, until) = (
            validity.not_before.to_unix_duration().as_secs(),
            validity.not_after.to_unix_duration().as_secs(),
        );
        let now = now.as_secs();
        if now < from {
            return Err(refused(format!(
                "the {what} is not valid before {from} (unix seconds)"
            )));
        }
        if now > until {
            return Err(refused(format!(
                "the {what} expired at {until} (unix seconds)"
            )));
        }
        Ok(())
    }
}

/// One path search: the client's intermediates, the truststore, the algorithms, the time and a budget.
struct Search<'s> {
    intermediates: Vec<Parsed<'s>>,
    roots: &'s RootCertStore,
    algs: &'s WebPkiSupportedAlgorithms,
    now: UnixTime,
    signatures_left: Cell<u32>,
}

impl Search<'_> {
    /// Whether `cert`'s signature verifies with `spki` (a SubjectPublicKeyInfo with tag and length).
    fn signed_by(&self, cert: &Parsed<'_>, spki: &[u8]) -> Result<(), rustls::Error> {
        let left = self.signatures_left.get();
        if left == 0 {
            return Err(refused(format!(
                "no path to the truststore within {MAX_SIGNATURES} signature checks"
            )));
        }
        self.signatures_left.set(left - 1);
        let spki = SubjectPublicKeyInfoDer::from(spki);
        let key = webpki::RawPublicKeyEntity::try_from(&spki)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        let mut known = false;
        for alg in self
            .algs
            .all
            .iter()
            .filter(|a| a.signature_alg_id().as_ref() == cert.sig_alg)
        {
            known = true;
            match key.verify_signature(*alg, cert.tbs, cert.signature) {
                Ok(()) => return Ok(()),
                Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_)) => {}
                Err(_) => {
                    return Err(rustls::Error::InvalidCertificate(
                        CertificateError::BadSignature,
                    ))
                }
            }
        }
        Err(if known {
            rustls::Error::InvalidCertificate(CertificateError::BadSignature)
        } else {
            refused(
                "the certificate's signature algorithm is not one strata accepts (SHA-1 is not)",
            )
        })
    }

    /// Refuses an intermediate that cannot issue certificates `below` intermediates above an end entity.
    fn usable_ca(&self, ca: &Parsed<'_>, below: usize) -> Result<(), rustls::Error> {
        let tbs = ca.cert.tbs_certificate();
        if tbs.version() != Version::V3 {
            return Err(refused(
                "an intermediate certificate of the client's chain is not X.509 v3, so not a CA (Java refuses it too)",
            ));
        }
        ca.check_validity(self.now, "intermediate certificate")?;
        let not_ca = || {
            refused("an intermediate certificate of the client's chain is not a CA (basicConstraints cA=TRUE)")
        };
        let (_, bc) = tbs
            .get_extension::<BasicConstraints>()
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?
            .ok_or_else(not_ca)?;
        if !bc.ca {
            return Err(not_ca());
        }
        if bc.path_len_constraint.is_some_and(|n| (n as usize) < below) {
            return Err(refused(
                "an intermediate certificate's pathLenConstraint is exceeded",
            ));
        }
        if let Some((_, ku)) = tbs
            .get_extension::<KeyUsage>()
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?
        {
            if !ku.key_cert_sign() {
                return Err(refused(
                    "an intermediate certificate's keyUsage lacks keyCertSign",
                ));
            }
        }
        // EKU on intermediates is not checked: Java's PKIX does not either.
        let known = [
            BasicConstraints::OID,
            KeyUsage::OID,
            ExtendedKeyUsage::OID,
            SubjectAltName::OID,
            SubjectKeyIdentifier::OID,
            AuthorityKeyIdentifier::OID,
        ];
        for e in tbs.extensions().into_iter().flatten() {
            if e.critical && !known.contains(&e.extn_id) {
                return Err(refused(format!(
                    "an intermediate certificate has critical extension {} that strata does not check",
                    e.extn_id
                )));
            }
        }
        Ok(())
    }

    /// Whether `cert` (with `below` intermediates under it) chains to a trust anchor.
    fn to_anchor(&self, cert: &Parsed<'_>, below: usize) -> Result<(), rustls::Error> {
        let mut last = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        for anchor in self
            .roots
            .roots
            .iter()
            .filter(|a| a.subject.as_ref() == cert.issuer)
        {
            if anchor.name_constraints.is_some() {
                last = refused(
                    "the trust anchor has name constraints, which strata does not check for X.509 v1 certificates",
                );
                continue;
            }
            match self.signed_by(cert, &webpki::spki_for_anchor(anchor)) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        if below >= MAX_INTERMEDIATES {
            return Err(last);
        }
        for ca in self
            .intermediates
            .iter()
            .filter(|c| c.subject == cert.issuer)
        {
            let step = self
                .usable_ca(ca, below)
                .and_then(|()| self.signed_by(cert, ca.spki))
                .and_then(|()| self.to_anchor(ca, below + 1));
            match step {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Verifies an X.509 v1 end-entity certificate and the `intermediates` the client sent against `roots` at `now`
/// (see the module documentation for what is checked).
pub fn verify_end_entity(
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    roots: &RootCertStore,
    algs: &WebPkiSupportedAlgorithms,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let ee = Parsed::new(end_entity)?;
    if ee.cert.tbs_certificate().version() != Version::V1 {
        return Err(refused("not an X.509 v1 certificate"));
    }
    if ee.cert.tbs_certificate().extensions().is_some() || ee.sig_alg != ee.inner_sig_alg {
        return Err(rustls::Error::InvalidCertificate(
            CertificateError::BadEncoding,
        ));
    }
    ee.check_validity(now, "client certificate")?;
    let search = Search {
        intermediates: intermediates
            .iter()
            .take(MAX_INTERMEDIATES * 2)
            .filter_map(|c| Parsed::new(c).ok())
            .filter(|c| c.sig_alg == c.inner_sig_alg)
            .collect(),
        roots,
        algs,
        now,
        signatures_left: Cell::new(MAX_SIGNATURES),
    };
    search.to_anchor(&ee, 0)
}

/// Accepts a client certificate that is itself a trust anchor of `roots` (the same subject and key: a self-signed
/// certificate, `openssl req -x509` or keytool's `-genkeypair`, listed in the truststore), valid at `now` and
/// signed by its own key, as Java's PKIX validator does (the path is the anchor alone). webpki refuses it when it
/// says CA:TRUE (CaUsedAsEndEntity); no other certificate is accepted here, and nothing is relaxed for
/// certificates that chain to an anchor: whoever holds an anchor's key could already issue any client
/// certificate.
pub fn verify_trust_anchor_itself(
    end_entity: &CertificateDer<'_>,
    roots: &RootCertStore,
    algs: &WebPkiSupportedAlgorithms,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let ee = Parsed::new(end_entity)?;
    let listed = roots.roots.iter().any(|a| {
        a.subject.as_ref() == ee.subject
            && a.name_constraints.is_none()
            && webpki::spki_for_anchor(a).as_ref() == ee.spki
    });
    if !listed {
        return Err(rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
    }
    if ee.sig_alg != ee.inner_sig_alg || ee.issuer != ee.subject {
        return Err(refused(
            "a trust anchor used as a client certificate must be self-signed",
        ));
    }
    ee.check_validity(now, "client certificate")?;
    let search = Search {
        intermediates: Vec::new(),
        roots,
        algs,
        now,
        signatures_left: Cell::new(1),
    };
    search.signed_by(&ee, ee.spki)
}

/// The SubjectPublicKeyInfo of a certificate (tag and length included).
pub fn spki(cert: &[u8]) -> Result<Vec<u8>, rustls::Error> {
    Parsed::new(cert).map(|p| p.spki.to_vec())
}

/// TLS 1.2's CertificateVerify of a v1 certificate: rustls's `verify_tls12_signature` with the key taken from the
/// certificate here (webpki would refuse to read it).
pub fn verify_tls12_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    let spki = SubjectPublicKeyInfoDer::from(spki(cert)?);
    let key = webpki::RawPublicKeyEntity::try_from(&spki)
        .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let candidates = algs
        .mapping
        .iter()
        .find(|(scheme, _)| *scheme == dss.scheme)
        .map(|(_, a)| *a)
        .ok_or(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
    for alg in candidates {
        match key.verify_signature(*alg, message, dss.signature()) {
            Ok(()) => return Ok(HandshakeSignatureValid::assertion()),
            Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_)) => {}
            Err(_) => break,
        }
    }
    Err(rustls::Error::InvalidCertificate(
        CertificateError::BadSignature,
    ))
}

/// TLS 1.3's CertificateVerify of a v1 certificate: rustls's own check with the certificate's key.
pub fn verify_tls13_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    let spki = SubjectPublicKeyInfoDer::from(spki(cert)?);
    rustls::crypto::verify_tls13_signature_with_raw_key(message, &spki, dss, algs)
}

#[cfg(test)]
mod tests {
    //! Certificates made with the openssl CLI (as Kafka's docs make them; `.ci/run` installs it): a test
    //! without it says so and passes.
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    fn openssl(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(out.stdout)
    }

    /// A CA, certificates signed by the recipe, read as DER.
    struct Pki {
        dir: tempfile::TempDir,
    }

    impl Pki {
        fn path(&self, name: &str) -> String {
            self.dir.path().join(name).display().to_string()
        }

        /// A self-signed v3 CA `name` (`openssl req -x509`, CA:TRUE as OpenSSL's default config makes it).
        fn ca(&self, name: &str) -> Option<()> {
            let (cert, key) = (
                self.path(&format!("{name}.pem")),
                self.path(&format!("{name}.key")),
            );
            let subj = format!("/CN={name}");
            openssl(
                self.dir.path(),
                &[
                    "req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key,
                    "-out", &cert, "-days", "30", "-subj", &subj,
                ],
            )
            .map(drop)
        }

        /// `name` signed by `issuer` with `openssl x509 -req` (v1 without `ext`, v3 with those extensions).
        fn sign(&self, name: &str, issuer: &str, ext: Option<&str>) -> Option<()> {
            let (key, csr, cert) = (
                self.path(&format!("{name}.key")),
                self.path(&format!("{name}.csr")),
                self.path(&format!("{name}.pem")),
            );
            let subj = format!("/CN={name}");
            openssl(
                self.dir.path(),
                &[
                    "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-subj",
                    &subj, "-out", &csr,
                ],
            )?;
            let (ca, ca_key) = (
                self.path(&format!("{issuer}.pem")),
                self.path(&format!("{issuer}.key")),
            );
            let mut args = vec![
                "x509",
                "-req",
                "-CA",
                &ca,
                "-CAkey",
                &ca_key,
                "-in",
                &csr,
                "-out",
                &cert,
                "-days",
                "30",
                "-CAcreateserial",
            ];
            let ext_file = self.path(&format!("{name}.ext"));
            if let Some(ext) = ext {
                std::fs::write(&ext_file, ext).unwrap();
                args.extend(["-extfile", &ext_file]);
            }
            openssl(self.dir.path(), &args).map(drop)
        }

        fn der(&self, name: &str) -> CertificateDer<'static> {
            let pem = self.path(&format!("{name}.pem"));
            let der = openssl(self.dir.path(), &["x509", "-in", &pem, "-outform", "der"]).unwrap();
            CertificateDer::from(der)
        }

        fn roots(&self, names: &[&str]) -> RootCertStore {
            let mut roots = RootCertStore::empty();
            for n in names {
                roots.add(self.der(n)).unwrap();
            }
            roots
        }
    }

    /// A temp dir with the root CA `root`, or None (and a message) without the openssl CLI.
    fn pki() -> Option<Pki> {
        let p = Pki {
            dir: tempfile::tempdir().unwrap(),
        };
        if openssl(p.dir.path(), &["version"]).is_none() {
            eprintln!("SKIPPED: the openssl CLI is not installed");
            return None;
        }
        p.ca("root")?;
        Some(p)
    }

    fn verify(
        p: &Pki,
        leaf: &str,
        chain: &[&str],
        roots: &[&str],
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        let chain: Vec<_> = chain.iter().map(|n| p.der(n)).collect();
        verify_end_entity(&p.der(leaf), &chain, &p.roots(roots), &algs, now)
    }

    fn days_from_now(days: i64) -> UnixTime {
        let now = UnixTime::now().as_secs() as i64;
        UnixTime::since_unix_epoch(Duration::from_secs((now + days * 86_400) as u64))
    }

    const CA: &str = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n";

    #[test]
    fn a_v1_certificate_signed_by_a_trusted_ca_is_accepted_only_while_valid() {
        let Some(p) = pki() else { return };
        p.sign("client", "root", None).unwrap();
        assert!(crate::security::client_cert::is_x509_v1(&p.der("client")));
        verify(&p, "client", &[], &["root"], UnixTime::now()).unwrap();
        let expired = verify(&p, "client", &[], &["root"], days_from_now(40)).unwrap_err();
        assert!(expired.to_string().contains("expired"), "{expired}");
        let early = verify(&p, "client", &[], &["root"], days_from_now(-2)).unwrap_err();
        assert!(early.to_string().contains("not valid before"), "{early}");
    }

    #[test]
    fn a_v1_certificate_from_an_untrusted_or_impostor_ca_is_refused() {
        let Some(p) = pki() else { return };
        p.ca("other").unwrap();
        p.sign("client", "other", None).unwrap();
        let e = verify(&p, "client", &[], &["root"], UnixTime::now()).unwrap_err();
        assert_eq!(
            e,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)
        );
        // A CA named like the trusted one with another key: its certificates fail the signature check.
        let impostor = Pki {
            dir: tempfile::tempdir().unwrap(),
        };
        impostor.ca("root").unwrap();
        impostor.sign("client", "root", None).unwrap();
        std::fs::copy(impostor.path("client.pem"), p.path("forged.pem")).unwrap();
        let e = verify(&p, "forged", &[], &["root"], UnixTime::now()).unwrap_err();
        assert_eq!(
            e,
            rustls::Error::InvalidCertificate(CertificateError::BadSignature)
        );
    }

    #[test]
    fn intermediates_of_a_v1_certificate_must_be_v3_cas() {
        let Some(p) = pki() else { return };
        p.sign("inter", "root", Some(CA)).unwrap();
        p.sign("client", "inter", None).unwrap();
        verify(&p, "client", &["inter"], &["root"], UnixTime::now()).unwrap();
        // Without the intermediate there is no path.
        assert!(verify(&p, "client", &[], &["root"], UnixTime::now()).is_err());

        p.sign(
            "not-ca",
            "root",
            Some("basicConstraints=critical,CA:FALSE\n"),
        )
        .unwrap();
        p.sign("client2", "not-ca", None).unwrap();
        let e = verify(&p, "client2", &["not-ca"], &["root"], UnixTime::now()).unwrap_err();
        assert!(e.to_string().contains("not a CA"), "{e}");

        p.sign("v1-inter", "root", None).unwrap();
        p.sign("client3", "v1-inter", None).unwrap();
        let e = verify(&p, "client3", &["v1-inter"], &["root"], UnixTime::now()).unwrap_err();
        assert!(e.to_string().contains("not X.509 v3"), "{e}");

        p.sign(
            "no-sign",
            "root",
            Some("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature\n"),
        )
        .unwrap();
        p.sign("client4", "no-sign", None).unwrap();
        let e = verify(&p, "client4", &["no-sign"], &["root"], UnixTime::now()).unwrap_err();
        assert!(e.to_string().contains("keyCertSign"), "{e}");

        p.sign(
            "pathlen0",
            "root",
            Some("basicConstraints=critical,CA:TRUE,pathlen:0\n"),
        )
        .unwrap();
        p.sign("inter2", "pathlen0", Some(CA)).unwrap();
        p.sign("client5", "inter2", None).unwrap();
        let e = verify(
            &p,
            "client5",
            &["inter2", "pathlen0"],
            &["root"],
            UnixTime::now(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("pathLenConstraint"), "{e}");
    }

    #[test]
    fn a_v1_trust_anchor_is_accepted() {
        let Some(p) = pki() else { return };
        // A v1 CA: a self-signed certificate made with `x509 -req -signkey` (no extensions).
        p.sign("v1-root", "root", None).unwrap();
        let (csr, key, cert) = (
            p.path("v1-root.csr"),
            p.path("v1-root.key"),
            p.path("v1-root.pem"),
        );
        openssl(
            p.dir.path(),
            &[
                "x509", "-req", "-in", &csr, "-signkey", &key, "-out", &cert, "-days", "30",
            ],
        )
        .unwrap();
        p.sign("client", "v1-root", None).unwrap();
        verify(&p, "client", &[], &["v1-root"], UnixTime::now()).unwrap();
        assert!(verify(&p, "client", &[], &["root"], UnixTime::now()).is_err());
    }

    #[test]
    fn a_client_certificate_that_is_a_listed_anchor_is_accepted_while_valid() {
        let Some(p) = pki() else { return };
        p.ca("other").unwrap();
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        let anchor = |leaf: &str, roots: &[&str], now| {
            verify_trust_anchor_itself(&p.der(leaf), &p.roots(roots), &algs, now)
        };
        anchor("root", &["other", "root"], UnixTime::now()).unwrap();
        assert!(anchor("root", &["other"], UnixTime::now()).is_err());
        assert!(anchor("root", &["root"], days_from_now(31)).is_err());
        // A certificate issued by an anchor is not an anchor itself.
        p.sign("leaf", "root", None).unwrap();
        assert!(anchor("leaf", &["root"], UnixTime::now()).is_err());
    }
}
