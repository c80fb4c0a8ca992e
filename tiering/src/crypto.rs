//! Envelope encryption: a random AES-256 data key per segment (DEK), wrapped by the key-encryption key (KEK)
//! from `rsm.config.encryption.key.file`, and AES-256-GCM per chunk.
//!
//! Encrypted chunk layout:
//!
//! | bytes | field |
//! |---|---|
//! | 12 | random nonce |
//! | n | ciphertext (same length as the plaintext) |
//! | 16 | GCM tag |
//!
//! The chunk's AAD binds it to its place: `segment id (16 bytes) || kind (1 byte: 0 = .log chunk, 1 = index) ||
//! chunk number (u32 big-endian)`, so a chunk moved to another segment or position fails to decrypt. The
//! wrapped DEK is stored in the manifest as base64 of the same nonce/ciphertext/tag layout with AAD
//! `"strata-dek" || segment id`, next to the KEK id (the first 8 bytes of SHA-256 of the KEK, hex).
use std::fmt;
use std::path::Path;

use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce, Tag};
use base64::Engine as _;
use sha2::Digest;

use crate::error::{Error, Result};

/// Bytes an encrypted chunk adds to its plaintext.
pub const ENCRYPTION_OVERHEAD: u64 = NONCE_LEN as u64 + TAG_LEN as u64;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// What a chunk belongs to, part of its AAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChunkKind {
    Log = 0,
    Index = 1,
}

/// The key-encryption key. `Debug` shows only its id.
#[derive(Clone)]
pub struct KeyEncryptionKey {
    cipher: Aes256Gcm,
    id: String,
}

impl fmt::Debug for KeyEncryptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyEncryptionKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl KeyEncryptionKey {
    /// A KEK from 32 raw bytes.
    pub fn from_bytes(key: &[u8; 32]) -> Self {
        let digest = sha2::Sha256::digest(key);
        let id = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Self {
            cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
            id,
        }
    }

    /// Reads the KEK from a file holding 32 raw bytes, 64 hex digits or base64 of 32 bytes (surrounding
    /// whitespace ignored).
    pub fn from_file(path: &Path) -> Result<Self> {
        let err = |reason: String| Error::Config {
            key: "rsm.config.encryption.key.file".into(),
            value: Some(path.display().to_string()),
            reason,
            source: None,
        };
        let raw = std::fs::read(path).map_err(|e| Error::Config {
            key: "rsm.config.encryption.key.file".into(),
            value: Some(path.display().to_string()),
            reason: "cannot read the key file".into(),
            source: Some(Box::new(e)),
        })?;
        if raw.len() == 32 {
            let mut k = [0u8; 32];
            k.copy_from_slice(&raw);
            return Ok(Self::from_bytes(&k));
        }
        let text = std::str::from_utf8(&raw)
            .map_err(|_| err(format!("{} bytes, expected 32 raw bytes", raw.len())))?;
        let text = text.trim();
        let decoded = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0))
                .collect::<Vec<u8>>()
        } else {
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| {
                    err("expected 32 raw bytes, 64 hex digits or base64 of 32 bytes".into())
                })?
        };
        let k: [u8; 32] = decoded.as_slice().try_into().map_err(|_| {
            err(format!(
                "key is {} bytes, expected 32 (AES-256)",
                decoded.len()
            ))
        })?;
        Ok(Self::from_bytes(&k))
    }

    /// The key's id as stored in manifests.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Wraps a fresh data key for `segment`; returns the key and its wrapped form (base64).
    pub(crate) fn new_data_key(&self, segment: &uuid::Uuid) -> (DataKey, String) {
        let mut dek = [0u8; 32];
        rand::fill(&mut dek);
        let wrapped = seal(&self.cipher, &dek, &dek_aad(segment));
        (
            DataKey::new(&dek, *segment),
            base64::engine::general_purpose::STANDARD.encode(wrapped),
        )
    }

    /// Unwraps a data key from a manifest.
    pub(crate) fn unwrap_data_key(
        &self,
        segment: &uuid::Uuid,
        wrapped: &str,
        what: &str,
    ) -> Result<DataKey> {
        let decrypt_err = || {
            Error::corrupt(
                format!("data key of {what}"),
                "decryption failed: wrong encryption key or corrupted data",
            )
        };
        let blob = base64::engine::general_purpose::STANDARD
            .decode(wrapped)
            .map_err(|_| decrypt_err())?;
        let dek = open(&self.cipher, &blob, &dek_aad(segment)).ok_or_else(decrypt_err)?;
        let dek: [u8; 32] = dek.as_slice().try_into().map_err(|_| decrypt_err())?;
        Ok(DataKey::new(&dek, *segment))
    }
}

fn dek_aad(segment: &uuid::Uuid) -> Vec<u8> {
    let mut aad = b"strata-dek".to_vec();
    aad.extend_from_slice(segment.as_bytes());
    aad
}

fn chunk_aad(segment: &uuid::Uuid, kind: ChunkKind, n: u32) -> [u8; 21] {
    let mut aad = [0u8; 21];
    aad[..16].copy_from_slice(segment.as_bytes());
    aad[16] = kind as u8;
    aad[17..].copy_from_slice(&n.to_be_bytes());
    aad
}

fn seal(cipher: &Aes256Gcm, plain: &[u8], aad: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(NONCE_LEN + plain.len() + TAG_LEN);
    let mut nonce = [0u8; NONCE_LEN];
    rand::fill(&mut nonce);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(plain);
    let tag = cipher
        .encrypt_inout_detached(&Nonce::from(nonce), aad, (&mut out[NONCE_LEN..]).into())
        .expect("AES-GCM encryption of less than 64 GiB cannot fail");
    out.extend_from_slice(&tag);
    out
}

fn open(cipher: &Aes256Gcm, sealed: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < NONCE_LEN + TAG_LEN {
        return None;
    }
    let (nonce, rest) = sealed.split_at(NONCE_LEN);
    let (ct, tag) = rest.split_at(rest.len() - TAG_LEN);
    let mut buf = ct.to_vec();
    cipher
        .decrypt_inout_detached(
            &Nonce::try_from(nonce).ok()?,
            aad,
            buf.as_mut_slice().into(),
            &Tag::try_from(tag).ok()?,
        )
        .ok()?;
    Some(buf)
}

/// A segment's data key.
#[derive(Clone)]
pub(crate) struct DataKey {
    cipher: Aes256Gcm,
    segment: uuid::Uuid,
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataKey")
            .field("segment", &self.segment)
            .finish_non_exhaustive()
    }
}

impl DataKey {
    fn new(key: &[u8; 32], segment: uuid::Uuid) -> Self {
        Self {
            cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
            segment,
        }
    }

    pub(crate) fn encrypt(&self, kind: ChunkKind, n: u32, plain: &[u8]) -> Vec<u8> {
        seal(&self.cipher, plain, &chunk_aad(&self.segment, kind, n))
    }

    pub(crate) fn decrypt(
        &self,
        kind: ChunkKind,
        n: u32,
        sealed: &[u8],
        what: &dyn Fn() -> String,
    ) -> Result<Vec<u8>> {
        open(&self.cipher, sealed, &chunk_aad(&self.segment, kind, n)).ok_or_else(|| {
            Error::corrupt(
                what(),
                "decryption failed: wrong encryption key or corrupted data",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_round_trips_and_is_bound_to_its_position() {
        let kek = KeyEncryptionKey::from_bytes(&[7; 32]);
        let seg = uuid::Uuid::new_v4();
        let (dek, wrapped) = kek.new_data_key(&seg);
        let sealed = dek.encrypt(ChunkKind::Log, 3, b"hello");
        assert_eq!(sealed.len() as u64, 5 + ENCRYPTION_OVERHEAD);
        let dek2 = kek.unwrap_data_key(&seg, &wrapped, "t").unwrap();
        assert_eq!(
            dek2.decrypt(ChunkKind::Log, 3, &sealed, &|| "c".into())
                .unwrap(),
            b"hello"
        );
        let moved = dek2
            .decrypt(ChunkKind::Log, 4, &sealed, &|| "chunk 4".into())
            .unwrap_err();
        assert!(matches!(moved, Error::Corrupt { .. }), "{moved}");
        assert!(dek2
            .decrypt(ChunkKind::Index, 3, &sealed, &|| "c".into())
            .is_err());
        // The wrapped key is bound to its segment too.
        assert!(kek
            .unwrap_data_key(&uuid::Uuid::new_v4(), &wrapped, "t")
            .is_err());
    }

    #[test]
    fn wrong_kek_cannot_unwrap() {
        let seg = uuid::Uuid::new_v4();
        let (_, wrapped) = KeyEncryptionKey::from_bytes(&[1; 32]).new_data_key(&seg);
        let e = KeyEncryptionKey::from_bytes(&[2; 32])
            .unwrap_data_key(&seg, &wrapped, "segment x")
            .unwrap_err();
        assert!(
            matches!(&e, Error::Corrupt { what, reason, .. }
                if what == "data key of segment x" && reason.contains("decryption failed")),
            "{e}"
        );
    }

    #[test]
    fn key_file_accepts_raw_hex_and_base64_and_rejects_short_keys() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("raw");
        std::fs::write(&raw, [9u8; 32]).unwrap();
        let hex = dir.path().join("hex");
        std::fs::write(&hex, format!("{}\n", "09".repeat(32))).unwrap();
        let b64 = dir.path().join("b64");
        std::fs::write(
            &b64,
            base64::engine::general_purpose::STANDARD.encode([9u8; 32]),
        )
        .unwrap();
        let ids: Vec<String> = [raw, hex, b64]
            .iter()
            .map(|p| KeyEncryptionKey::from_file(p).unwrap().id().to_string())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "{ids:?}");
        let short = dir.path().join("short");
        std::fs::write(&short, "0102").unwrap();
        let e = KeyEncryptionKey::from_file(&short).unwrap_err();
        assert!(e.to_string().contains("short"), "{e}");
        let missing = KeyEncryptionKey::from_file(&dir.path().join("nope")).unwrap_err();
        assert!(missing.to_string().contains("cannot read"), "{missing}");
    }
}
