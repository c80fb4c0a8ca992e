//! For development (`ssl.self.signed.enable=true`): a local CA generated once into `<log dir>/ssl/` (`ca.pem`,
//! its key `ca-key.pem`), and per TLS listener without a keystore a certificate for `localhost` / `127.0.0.1`
//! (`<listener>.pem`, key and chain) signed by it. Clients trust `ca.pem`; its path is logged at start-up.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::bad;
use crate::error::{Error, Result};

const KEY: &str = "ssl.self.signed.enable";

fn io(context: String, e: std::io::Error) -> Error {
    Error::io(context, e)
}

fn gen_err(e: rcgen::Error) -> Error {
    bad(KEY, "true", format!("generating the development CA: {e}"))
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, "strata development CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
}

/// Writes `contents` to `path` atomically (a temporary file renamed over it).
fn write(path: &Path, contents: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).map_err(|e| io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(format!("renaming to {}", path.display()), e))
}

/// The certificate chain and key of `listener`, generated (with the CA, on first use) under `<dir>/ssl/`.
pub fn listener_certificate(
    dir: &Path,
    listener: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let ssl = dir.join("ssl");
    std::fs::create_dir_all(&ssl).map_err(|e| io(format!("creating {}", ssl.display()), e))?;
    let (ca_pem, ca_key_pem) = (ssl.join("ca.pem"), ssl.join("ca-key.pem"));
    let fresh_ca = !(ca_key_pem.exists() && ca_pem.exists());
    let ca_key = if !fresh_ca {
        let text = std::fs::read_to_string(&ca_key_pem)
            .map_err(|e| io(format!("reading {}", ca_key_pem.display()), e))?;
        KeyPair::from_pem(&text).map_err(|e| {
            bad(
                KEY,
                "true",
                format!("{}: not a usable key: {e}", ca_key_pem.display()),
            )
        })?
    } else {
        let key = KeyPair::generate().map_err(gen_err)?;
        let cert = ca_params().self_signed(&key).map_err(gen_err)?;
        write(&ca_key_pem, &key.serialize_pem())?;
        write(&ca_pem, &cert.pem())?;
        key
    };
    // Signed again with the same name and key, the CA certificate verifies what it signs exactly as ca.pem does.
    let ca = ca_params().self_signed(&ca_key).map_err(gen_err)?;
    tracing::info!(ca = %ca_pem.display(), listener, "development TLS (ssl.self.signed.enable): clients trust this CA");
    let file = ssl.join(format!("{}.pem", listener.to_ascii_lowercase()));
    let ca_text = std::fs::read_to_string(&ca_pem)
        .map_err(|e| io(format!("reading {}", ca_pem.display()), e))?;
    // A listener certificate of another CA (ca.pem or its key removed and made anew) is made again: clients
    // trust the CA of ca.pem.
    let stale =
        fresh_ca || std::fs::read_to_string(&file).is_ok_and(|pem| !pem.contains(ca_text.trim()));
    if stale && file.exists() {
        tracing::warn!(file = %file.display(), ca = %ca_pem.display(),
            "development TLS: the listener certificate was not signed by this CA; making a new one");
    }
    if stale || !file.exists() {
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .map_err(gen_err)?;
        params
            .distinguished_name
            .push(DnType::CommonName, format!("strata {listener} listener"));
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().map_err(gen_err)?;
        let cert = params.signed_by(&key, &ca, &ca_key).map_err(gen_err)?;
        write(
            &file,
            &format!("{}{}{}", key.serialize_pem(), cert.pem(), ca_text),
        )?;
    }
    let pem = std::fs::read(&file).map_err(|e| io(format!("reading {}", file.display()), e))?;
    let shown = file.display().to_string();
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad(KEY, "true", format!("{shown}: {e}")))?;
    let key = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| bad(KEY, "true", format!("{shown}: {e}")))?;
    Ok((certs, key))
}
