//! Client certificates: v3 ones checked by rustls's webpki verifier unchanged, X.509 v1 ones (what Kafka's own
//! documentation makes with `openssl x509 -req ... -CAcreateserial` and no `-extfile`, which Java accepts and
//! webpki refuses) checked against the same truststore by [`super::x509_v1`]. A CA certificate used as a client
//! certificate (webpki's CaUsedAsEndEntity) is accepted when it is itself a trust anchor of the truststore (a
//! pinned self-signed `openssl req -x509` one, as Java accepts); otherwise the handshake error, logged at WARN
//! with the peer, says why and how to fix it.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, OtherError, RootCertStore,
    SignatureScheme,
};

use super::x509_v1;

/// What the broker logs for a CA certificate used as a client certificate that is not itself in the truststore
/// (webpki's CaUsedAsEndEntity; a self-signed one listed in the truststore is accepted, as Java does).
pub const CA_AS_CLIENT_HINT: &str =
    "client certificate is a CA certificate (basicConstraints CA:TRUE) that is not itself in the truststore; \
     strata (rustls) accepts a CA certificate as a client certificate only when the truststore lists it (a pinned \
     self-signed one): make one with basicConstraints=CA:FALSE signed by a CA of the truststore, or list it";

/// A refusal explained (rustls prints it with `Debug` in its handshake error: both say it).
struct Explained(&'static str);

impl std::fmt::Debug for Explained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::fmt::Display for Explained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Explained {}

/// Whether a DER certificate has no version field (X.509 v1: the TBSCertificate does not start with `[0]`).
pub fn is_x509_v1(der: &[u8]) -> bool {
    // Skips a tag and its length: the offset of the value.
    fn header(der: &[u8], at: usize) -> Option<usize> {
        let len = *der.get(at + 1)?;
        Some(
            at + 2
                + if len & 0x80 != 0 {
                    (len & 0x7f) as usize
                } else {
                    0
                },
        )
    }
    let tbs = header(der, 0).filter(|_| der.first() == Some(&0x30));
    let first = tbs
        .filter(|&t| der.get(t) == Some(&0x30))
        .and_then(|t| header(der, t));
    matches!(first.and_then(|f| der.get(f)), Some(b) if *b != 0xa0)
}

/// rustls's client certificate verifier for v3 certificates, [`x509_v1`] for v1 ones, naming the CA-as-client
/// case in its error.
#[derive(Debug)]
pub struct ClientCerts {
    /// webpki's verifier over `roots` (v3 end entities; also whether to ask for a certificate).
    pub webpki: Arc<dyn ClientCertVerifier>,
    /// The truststore.
    pub roots: Arc<RootCertStore>,
    /// The provider's signature algorithms.
    pub algs: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for ClientCerts {
    fn offer_client_auth(&self) -> bool {
        self.webpki.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.webpki.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.webpki.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if is_x509_v1(end_entity) {
            return x509_v1::verify_end_entity(
                end_entity,
                intermediates,
                &self.roots,
                &self.algs,
                now,
            )
            .map(|()| ClientCertVerified::assertion());
        }
        match self
            .webpki
            .verify_client_cert(end_entity, intermediates, now)
        {
            Err(e) if format!("{e:?}").contains("CaUsedAsEndEntity") => {
                // A self-signed certificate listed in the truststore is accepted, as Java does; any other CA
                // certificate is refused with the reason (rustls sends certificate_unknown for it: the alert of
                // CertificateError::Other).
                x509_v1::verify_trust_anchor_itself(end_entity, &self.roots, &self.algs, now)
                    .map(|()| ClientCertVerified::assertion())
                    .map_err(|_| {
                        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
                            Arc::new(Explained(CA_AS_CLIENT_HINT)),
                        )))
                    })
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if is_x509_v1(cert) {
            return x509_v1::verify_tls12_signature(message, cert, dss, &self.algs);
        }
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if is_x509_v1(cert) {
            return x509_v1::verify_tls13_signature(message, cert, dss, &self.algs);
        }
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_without_a_version_field_is_v1() {
        // SEQUENCE { SEQUENCE { INTEGER 1 (serial) ... } }: v1; with [0] { INTEGER 2 } first: v3.
        assert!(is_x509_v1(&[0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x01]));
        assert!(!is_x509_v1(&[
            0x30, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x02, 0x01, 0x02
        ]));
        assert!(!is_x509_v1(&[
            0x30, 0x81, 0x05, 0x30, 0x82, 0x00, 0x05, 0xa0
        ]));
        assert!(is_x509_v1(&[
            0x30, 0x81, 0x05, 0x30, 0x82, 0x00, 0x05, 0x02
        ]));
        assert!(!is_x509_v1(&[]));
        assert!(!is_x509_v1(&[0x04, 0x01, 0x00]));
    }
}
