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
/// Writes `contents` to `path` through a temporary file; `private` files (holding a key) are readable by their
/// owner only.
fn write(path: &Path, contents: &str, private: bool) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).map_err(|e| io(format!("writing {}", tmp.display()), e))?;
    if private {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io(format!("restricting {}", tmp.display()), e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io(format!("renaming to {}", path.display()), e))
}

/// The certificate chain and key of `listener`, generated (with the CA, on first use) under `<dir>/ssl/`, for
/// localhost, 127.0.0.1 and `hosts` (the listener's advertised and bound hosts).
pub fn listener_certificate(
    dir: &Path,
    listener: &str,
    hosts: &[String],
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
        write(&ca_key_pem, &key.serialize_pem(), true)?;
        write(&ca_pem, &cert.pem(), false)?;
        key
    };
    // Signed again with the same name and key, the CA certificate verifies what it signs exactly as ca.pem does.
    let ca = ca_params().self_signed(&ca_key).map_err(gen_err)?;
    tracing::info!(ca = %ca_pem.display(), listener, "development TLS (ssl.self.signed.enable): clients trust this CA");
    let file = ssl.join(format!("{}.pem", listener.to_ascii_lowercase()));
    let ca_text = std::fs::read_to_string(&ca_pem)
        .map_err(|e| io(format!("reading {}", ca_pem.display()), e))?;
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    for h in hosts {
        let h = h.trim_matches(|c| c == '[' || c == ']');
        if !h.is_empty() && h != "0.0.0.0" && h != "::" && !names.iter().any(|n| n == h) {
            names.push(h.to_string());
        }
    }
    // The names the certificate was made for are kept beside it: other names (a new advertised host) make a new
    // certificate, as does one of another CA (ca.pem or its key removed and made anew).
    let names_file = ssl.join(format!("{}.names", listener.to_ascii_lowercase()));
    let same_names = match std::fs::read_to_string(&names_file) {
        Ok(t) => t.lines().map(str::to_string).collect::<Vec<_>>() == names,
        // Made before the names were kept: for localhost and 127.0.0.1.
        Err(_) => names.len() == 2,
    };
    let other_ca = std::fs::read_to_string(&file).is_ok_and(|pem| !pem.contains(ca_text.trim()));
    if file.exists() && (fresh_ca || other_ca) {
        tracing::warn!(file = %file.display(), ca = %ca_pem.display(),
            "development TLS: the listener certificate was not signed by this CA; making a new one");
    }
    if fresh_ca || other_ca || !same_names || !file.exists() {
        let mut params = CertificateParams::new(names.clone()).map_err(gen_err)?;
        params
            .distinguished_name
            .push(DnType::CommonName, format!("strata {listener} listener"));
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().map_err(gen_err)?;
        let cert = params.signed_by(&key, &ca, &ca_key).map_err(gen_err)?;
        write(
            &file,
            &format!("{}{}{}", key.serialize_pem(), cert.pem(), ca_text),
            true,
        )?;
        write(&names_file, &names.join("\n"), false)?;
        tracing::info!(listener, names = ?names, "development TLS: listener certificate made");
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The listener certificate names the listener's hosts (made again when they change) and the files holding
    /// keys are readable by their owner only.
    #[test]
    fn the_listener_certificate_names_its_hosts_and_keys_stay_private() {
        let dir = tempfile::tempdir().unwrap();
        let (first, _) = listener_certificate(dir.path(), "SSL", &["0.0.0.0".into()]).unwrap();
        let has =
            |der: &CertificateDer<'_>, name: &[u8]| der.windows(name.len()).any(|w| w == name);
        assert!(has(&first[0], b"localhost") && !has(&first[0], b"my-broker.test"));
        let (again, _) = listener_certificate(dir.path(), "SSL", &["127.0.0.1".into()]).unwrap();
        assert_eq!(again[0], first[0], "same names: the same certificate");
        let hosts = ["my-broker.test".to_string(), "0.0.0.0".to_string()];
        let (named, _) = listener_certificate(dir.path(), "SSL", &hosts).unwrap();
        assert!(has(&named[0], b"my-broker.test") && has(&named[0], b"localhost"));
        for f in ["ca-key.pem", "ssl.pem"] {
            let mode = std::fs::metadata(dir.path().join("ssl").join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f}");
        }
    }
}
