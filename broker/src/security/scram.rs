//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka runs them: salted credentials per user and
//! mechanism, created and deleted by AlterUserScramCredentials (the client sends the salted password, never the
//! password), listed by DescribeUserScramCredentials, kept in `scram-credentials.json` of the metadata dir
//! (written atomically), and the server side of the two-message exchange inside SaslAuthenticate (driven by
//! `crate::security::sasl`). A component of its own, below the broker context and the handlers.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256, Sha512};

use crate::error::{Error, Result};

/// Kafka's bounds on iterations (`ScramMechanism.minIterations` / `maxIterations`).
pub const MIN_ITERATIONS: i32 = 4096;
/// See [`MIN_ITERATIONS`].
pub const MAX_ITERATIONS: i32 = 16384;

/// A SCRAM mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// SCRAM-SHA-256 (type 1 in AlterUserScramCredentials).
    Sha256,
    /// SCRAM-SHA-512 (type 2).
    Sha512,
}

impl Mechanism {
    /// By its SASL name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "SCRAM-SHA-256" => Some(Self::Sha256),
            "SCRAM-SHA-512" => Some(Self::Sha512),
            _ => None,
        }
    }

    /// By its type in the admin APIs.
    pub fn from_type(t: i8) -> Option<Self> {
        match t {
            1 => Some(Self::Sha256),
            2 => Some(Self::Sha512),
            _ => None,
        }
    }

    /// The SASL name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "SCRAM-SHA-256",
            Self::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// The type in the admin APIs.
    pub fn type_id(self) -> i8 {
        match self {
            Self::Sha256 => 1,
            Self::Sha512 => 2,
        }
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            Self::Sha256 => {
                let mut m = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            Self::Sha512 => {
                let mut m = Hmac::<Sha512>::new_from_slice(key).expect("any key length");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Sha256 => Sha256::digest(data).to_vec(),
            Self::Sha512 => Sha512::digest(data).to_vec(),
        }
    }
}

/// What the server keeps of one user's password for one mechanism.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Credential {
    /// The salt (base64 in the file).
    #[serde(with = "b64")]
    pub salt: Vec<u8>,
    /// H(ClientKey).
    #[serde(with = "b64")]
    pub stored_key: Vec<u8>,
    /// HMAC(SaltedPassword, "Server Key").
    #[serde(with = "b64")]
    pub server_key: Vec<u8>,
    /// PBKDF2 iterations.
    pub iterations: i32,
}

mod b64 {
    use super::{Engine, B64};
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(v))
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        B64.decode(s).map_err(serde::de::Error::custom)
    }
}

impl Credential {
    /// The stored form of `salted_password` (Hi(password, salt, iterations), computed by the client).
    pub fn from_salted(m: Mechanism, salt: &[u8], salted_password: &[u8], iterations: i32) -> Self {
        let client_key = m.hmac(salted_password, b"Client Key");
        Credential {
            salt: salt.to_vec(),
            stored_key: m.hash(&client_key),
            server_key: m.hmac(salted_password, b"Server Key"),
            iterations,
        }
    }
}

/// user → mechanism name → credential.
type Users = BTreeMap<String, BTreeMap<String, Credential>>;

/// The SCRAM credentials, persisted.
#[derive(Debug)]
pub struct ScramStore {
    path: PathBuf,
    users: Mutex<Users>,
}

/// One change of AlterUserScramCredentials.
#[derive(Debug, Clone)]
pub enum Change {
    /// Create or replace (user, mechanism type, iterations, salt, salted password).
    Upsert(String, i8, i32, Vec<u8>, Vec<u8>),
    /// Delete (user, mechanism type).
    Delete(String, i8),
}

impl Change {
    fn user(&self) -> &str {
        match self {
            Change::Upsert(u, ..) | Change::Delete(u, _) => u,
        }
    }
}

impl ScramStore {
    /// Opens the store kept in `dir` (empty when the file does not exist yet).
    pub fn open(dir: &Path) -> Result<ScramStore> {
        let path = dir.join("scram-credentials.json");
        let users = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    format!("reading {}", path.display()),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Users::new(),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        Ok(ScramStore {
            path,
            users: Mutex::new(users),
        })
    }

    /// The credential of `user` for `m`.
    pub fn get(&self, user: &str, m: Mechanism) -> Option<Credential> {
        let users = self.users.lock();
        users.get(user).and_then(|c| c.get(m.name())).cloned()
    }

    /// (mechanism type, iterations) of each credential of `user`; `None` for an unknown user.
    pub fn describe(&self, user: &str) -> Option<Vec<(i8, i32)>> {
        let users = self.users.lock();
        users.get(user).map(|c| {
            c.iter()
                .filter_map(|(m, cred)| {
                    Mechanism::from_name(m).map(|m| (m.type_id(), cred.iterations))
                })
                .collect()
        })
    }

    /// Every user with a credential.
    pub fn users(&self) -> Vec<String> {
        self.users.lock().keys().cloned().collect()
    }

    /// Applies the changes of one AlterUserScramCredentials: per user (in order of first appearance) the
    /// outcome, Kafka's rules: a user named twice in one request fails (DUPLICATE_RESOURCE), an unknown mechanism
    /// fails (UNSUPPORTED_SASL_MECHANISM), iterations out of 4096..=16384 or an empty name or salt fail
    /// (UNACCEPTABLE_CREDENTIAL), deleting what does not exist fails (RESOURCE_NOT_FOUND). The file is rewritten
    /// once, atomically, before the answer.
    pub fn alter(
        &self,
        changes: &[Change],
    ) -> Result<Vec<(String, std::result::Result<(), Error>)>> {
        let mut order: Vec<String> = Vec::new();
        for c in changes {
            if !order.iter().any(|u| u == c.user()) {
                order.push(c.user().to_string());
            }
        }
        let mut users = self.users.lock();
        let mut next = users.clone();
        let mut out = Vec::new();
        for user in order {
            let mine: Vec<&Change> = changes.iter().filter(|c| c.user() == user).collect();
            let result = (|| {
                if mine.len() > 1 {
                    return Err(Error::DuplicateScramUser(user.clone()));
                }
                if user.is_empty() {
                    return Err(Error::UnacceptableCredential(
                        "username must not be empty".into(),
                    ));
                }
                match mine[0] {
                    Change::Upsert(_, t, iterations, salt, salted) => {
                        let m = Mechanism::from_type(*t).ok_or_else(|| {
                            Error::UnsupportedSaslMechanism {
                                mechanism: format!("type {t}"),
                                enabled: "SCRAM-SHA-256 (1), SCRAM-SHA-512 (2)".into(),
                            }
                        })?;
                        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(iterations) {
                            return Err(Error::UnacceptableCredential(format!(
                                "iterations {iterations} not in {MIN_ITERATIONS}..={MAX_ITERATIONS} for {}",
                                m.name()
                            )));
                        }
                        if salt.is_empty() || salted.is_empty() {
                            return Err(Error::UnacceptableCredential(
                                "salt and salted password must not be empty".into(),
                            ));
                        }
                        next.entry(user.clone()).or_default().insert(
                            m.name().to_string(),
                            Credential::from_salted(m, salt, salted, *iterations),
                        );
                        Ok(())
                    }
                    Change::Delete(_, t) => {
                        let m = Mechanism::from_type(*t).ok_or_else(|| {
                            Error::UnsupportedSaslMechanism {
                                mechanism: format!("type {t}"),
                                enabled: "SCRAM-SHA-256 (1), SCRAM-SHA-512 (2)".into(),
                            }
                        })?;
                        let gone = next.get_mut(&user).and_then(|c| c.remove(m.name()));
                        if next.get(&user).is_some_and(|c| c.is_empty()) {
                            next.remove(&user);
                        }
                        gone.map(|_| ()).ok_or_else(|| {
                            Error::ScramUserNotFound(format!(
                                "attempt to delete a nonexistent {} credential of user {user}",
                                m.name()
                            ))
                        })
                    }
                }
            })();
            out.push((user, result));
        }
        if next != *users {
            write_atomically(
                &self.path,
                &serde_json::to_vec_pretty(&next).expect("serializable"),
            )?;
            *users = next;
        }
        Ok(out)
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, renames it over `path` and syncs the directory.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    strata_storage::crash_point("scram.before_write");
    let tmp = path.with_extension("json.tmp");
    let ctx = |what: &str| format!("{what} {}", tmp.display());
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(ctx("creating"), e))?;
    f.write_all(bytes)
        .map_err(|e| Error::io(ctx("writing"), e))?;
    f.sync_all().map_err(|e| Error::io(ctx("syncing"), e))?;
    strata_storage::crash_point("scram.before_rename");
    std::fs::rename(&tmp, path)
        .map_err(|e| Error::io(format!("renaming to {}", path.display()), e))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The server side of one SCRAM exchange.
#[derive(Debug)]
pub struct Exchange {
    mechanism: Mechanism,
    /// After the first message: (user, credential, client-first-bare, server-first, nonce).
    first: Option<(String, Credential, String, String, String)>,
}

fn failed(m: Mechanism) -> Error {
    Error::SaslAuthenticationFailed(format!(
        "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
        m.name()
    ))
}

fn attribute(part: &str, name: char) -> Option<&str> {
    part.strip_prefix(name)?.strip_prefix('=')
}

/// RFC 5802 saslname: `=2C` is `,`, `=3D` is `=`.
fn unescape(name: &str) -> String {
    name.replace("=2C", ",").replace("=3D", "=")
}

impl Exchange {
    /// A new exchange for `mechanism`.
    pub fn new(mechanism: Mechanism) -> Self {
        Exchange {
            mechanism,
            first: None,
        }
    }

    /// Handles the next client message: the server-first message (after the client-first), or the
    /// server-final one with the authenticated user (after the client-final).
    pub fn step(
        &mut self,
        store: &ScramStore,
        msg: &[u8],
    ) -> std::result::Result<(Vec<u8>, Option<String>), Error> {
        let m = self.mechanism;
        let bad = |why: &str| {
            Error::SaslAuthenticationFailed(format!("invalid {} message: {why}", m.name()))
        };
        let text = std::str::from_utf8(msg).map_err(|_| bad("not UTF-8"))?;
        match self.first.take() {
            None => {
                // gs2-header: "n,," or "y,," (no channel binding), optionally "a=authzid".
                let mut parts = text.splitn(3, ',');
                let (Some(cb), Some(authzid), Some(bare)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err(bad("no gs2 header"));
                };
                if cb != "n" && cb != "y" {
                    return Err(bad("channel binding is not supported"));
                }
                let mut user = None;
                let mut nonce = None;
                for p in bare.split(',') {
                    if let Some(u) = attribute(p, 'n') {
                        user = Some(unescape(u));
                    } else if let Some(r) = attribute(p, 'r') {
                        nonce = Some(r.to_string());
                    }
                }
                let (Some(user), Some(client_nonce)) = (user, nonce) else {
                    return Err(bad("no user name or nonce"));
                };
                if let Some(a) = attribute(authzid, 'a') {
                    if unescape(a) != user {
                        return Err(Error::SaslAuthenticationFailed(
                            "Authentication failed: Client requested an authorization id that is different from username".into(),
                        ));
                    }
                }
                let cred = store.get(&user, m).ok_or_else(|| failed(m))?;
                let server_nonce: [u8; 18] = rand::random();
                let nonce = format!("{client_nonce}{}", B64.encode(server_nonce));
                let server_first = format!(
                    "r={nonce},s={},i={}",
                    B64.encode(&cred.salt),
                    cred.iterations
                );
                self.first = Some((user, cred, bare.to_string(), server_first.clone(), nonce));
                Ok((server_first.into_bytes(), None))
            }
            Some((user, cred, client_first_bare, server_first, nonce)) => {
                let (without_proof, proof) =
                    text.rsplit_once(",p=").ok_or_else(|| bad("no proof"))?;
                let r = without_proof
                    .split(',')
                    .find_map(|p| attribute(p, 'r'))
                    .ok_or_else(|| bad("no nonce"))?;
                // The nonce must end with the server's, as Kafka 3.x's ScramSaslServer checked (4.0 compares it
                // whole): librdkafka before 2.6.1 (Debian's kcat among them) sends its own nonce again in front
                // (librdkafka#4895), and its proof covers the message as it sent it, so nothing is weakened.
                if !r.ends_with(nonce.as_str()) {
                    return Err(failed(m));
                }
                let proof = B64.decode(proof).map_err(|_| bad("proof is not base64"))?;
                let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
                let client_signature = m.hmac(&cred.stored_key, auth_message.as_bytes());
                if proof.len() != client_signature.len() {
                    return Err(failed(m));
                }
                let client_key: Vec<u8> = proof
                    .iter()
                    .zip(&client_signature)
                    .map(|(a, b)| a ^ b)
                    .collect();
                let stored = m.hash(&client_key);
                let same = stored.len() == cred.stored_key.len()
                    && stored
                        .iter()
                        .zip(&cred.stored_key)
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0;
                if !same {
                    return Err(failed(m));
                }
                let server_signature = m.hmac(&cred.server_key, auth_message.as_bytes());
                Ok((
                    format!("v={}", B64.encode(server_signature)).into_bytes(),
                    Some(user),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's SCRAM-SHA-256 example (user "user", password "pencil").
    #[test]
    fn the_rfc_7677_exchange_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let store = ScramStore::open(dir.path()).unwrap();
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let mut salted = [0u8; 32];
        pbkdf2_hmac_sha256(b"pencil", &salt, 4096, &mut salted);
        let r = store
            .alter(&[Change::Upsert(
                "user".into(),
                1,
                4096,
                salt,
                salted.to_vec(),
            )])
            .unwrap();
        assert!(r[0].1.is_ok());
        let cred = store.get("user", Mechanism::Sha256).unwrap();
        // Drive the exchange with the RFC's nonces: replace the random server nonce by the RFC's.
        let mut ex = Exchange::new(Mechanism::Sha256);
        let client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO";
        let server_first =
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        ex.first = Some((
            "user".into(),
            cred,
            client_first_bare.into(),
            server_first.into(),
            "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0".into(),
        ));
        let (server_final, user) = ex
            .step(
                &store,
                b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            )
            .unwrap();
        assert_eq!(user.as_deref(), Some("user"));
        assert_eq!(
            String::from_utf8(server_final).unwrap(),
            "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    /// librdkafka < 2.6.1 repeats its nonce in front of the combined one in client-final and signs that message:
    /// accepted, as Kafka 3.x accepted it (the nonce must end with the server's); any other nonce is refused.
    #[test]
    fn a_client_final_nonce_ending_with_the_servers_is_accepted_as_kafka_3_did() {
        let dir = tempfile::tempdir().unwrap();
        let store = ScramStore::open(dir.path()).unwrap();
        let salt = vec![7u8; 16];
        let mut salted = [0u8; 32];
        pbkdf2_hmac_sha256(b"secret", &salt, 4096, &mut salted);
        store
            .alter(&[Change::Upsert("bob".into(), 1, 4096, salt, salted.to_vec())])
            .unwrap();
        let m = Mechanism::Sha256;
        let client_key = m.hmac(&salted, b"Client Key");
        let stored_key = m.hash(&client_key);
        let attempt = |client_nonce_in_final: &str| {
            let mut ex = Exchange::new(m);
            let (first, _) = ex.step(&store, b"n,,n=bob,r=cnonce").unwrap();
            let server_first = String::from_utf8(first).unwrap();
            let combined = server_first[2..].split(',').next().unwrap().to_string();
            let without_proof = format!("c=biws,r={client_nonce_in_final}{combined}");
            let auth = format!("n=bob,r=cnonce,{server_first},{without_proof}");
            let signature = m.hmac(&stored_key, auth.as_bytes());
            let proof: Vec<u8> = client_key
                .iter()
                .zip(&signature)
                .map(|(a, b)| a ^ b)
                .collect();
            let last = format!("{without_proof},p={}", B64.encode(proof));
            ex.step(&store, last.as_bytes()).map(|(_, user)| user)
        };
        assert_eq!(attempt("").unwrap().as_deref(), Some("bob"));
        assert_eq!(attempt("cnonce").unwrap().as_deref(), Some("bob"));
        let wrong = |nonce: &str| {
            let mut ex = Exchange::new(m);
            ex.step(&store, b"n,,n=bob,r=cnonce").unwrap();
            ex.step(&store, format!("c=biws,r={nonce},p=AAAA").as_bytes())
        };
        assert!(wrong("cnonce").is_err());
        assert!(wrong("other").is_err());
    }

    fn pbkdf2_hmac_sha256(password: &[u8], salt: &[u8], rounds: u32, out: &mut [u8]) {
        // Hi() of RFC 5802 for one block: U1 = HMAC(p, salt || 1), Ui = HMAC(p, Ui-1), result = XOR of all.
        let m = Mechanism::Sha256;
        let mut u = m.hmac(password, &[salt, &[0, 0, 0, 1]].concat());
        let mut acc = u.clone();
        for _ in 1..rounds {
            u = m.hmac(password, &u);
            acc.iter_mut().zip(&u).for_each(|(a, b)| *a ^= b);
        }
        out.copy_from_slice(&acc);
    }

    #[test]
    fn credentials_follow_kafkas_rules_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = ScramStore::open(dir.path()).unwrap();
        let up = |u: &str, t: i8, i: i32| Change::Upsert(u.into(), t, i, vec![1; 16], vec![2; 32]);
        let r = store
            .alter(&[
                up("alice", 1, 4096),
                up("bob", 2, 100),
                up("carol", 9, 4096),
                up("dave", 1, 4096),
                Change::Delete("dave".into(), 2),
                Change::Delete("erin".into(), 1),
            ])
            .unwrap();
        let codes: Vec<i16> = r
            .iter()
            .map(|(_, r)| r.as_ref().err().map_or(0, crate::error_code::code))
            .collect();
        assert_eq!(codes, [0, 93, 33, 92, 91]);
        let again = ScramStore::open(dir.path()).unwrap();
        assert_eq!(again.users(), ["alice"]);
        assert_eq!(again.describe("alice"), Some(vec![(1, 4096)]));
        assert!(again.get("alice", Mechanism::Sha256).is_some());
        let r = again.alter(&[Change::Delete("alice".into(), 1)]).unwrap();
        assert!(r[0].1.is_ok());
        assert!(ScramStore::open(dir.path()).unwrap().users().is_empty());
    }
}
