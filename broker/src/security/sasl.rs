//! SASL on SASL_PLAINTEXT and SASL_SSL listeners: `sasl.enabled.mechanisms` (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER
//! with unsecured tokens: `oauthbearer.rs`), the PLAIN users of the listener's
//! JAAS line (`user_<name>="<password>"` options of `PlainLoginModule`, read as Kafka reads them), and the
//! exchange a connection goes through before anything else is served: ApiVersions, SaslHandshake (v0–v1),
//! SaslAuthenticate (v0–v2). Any other request before authentication closes the connection, as Kafka does; wrong
//! credentials are answered SASL_AUTHENTICATION_FAILED with a message, then the connection is closed.
//!
//! After a SaslHandshake v0 (KIP-43) the client sends its SASL tokens as raw length-prefixed frames with no
//! request header, and each server token goes back the same way (an empty one as a 4-byte zero length), as
//! Kafka's SaslServerAuthenticator does with its Kafka SaslAuthenticate headers off; wrong credentials close the
//! connection without an answer. Re-authentication (KIP-368) needs SaslHandshake v1 or later.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, RequestHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::{bad, ListenerProps};
use crate::codec;
use crate::error::{Error, Result};
use crate::error_code;
use crate::security::scram::{Exchange, Mechanism, ScramStore};
use strata_storage::time::now_ms;

use super::oauthbearer::{self, Validator};

/// The server callback handler strata implements for OAUTHBEARER (Kafka's default).
const UNSECURED_VALIDATOR: &str = "OAuthBearerUnsecuredValidatorCallbackHandler";

/// KIP-368's key: the longest SASL session before the client must re-authenticate.
const REAUTH_KEY: &str = "connections.max.reauth.ms";

/// The mechanisms strata implements.
pub const MECHANISMS: &[&str] = &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];

/// A listener's SASL settings.
#[derive(Clone, Default)]
pub struct SaslConfig {
    /// `sasl.enabled.mechanisms`.
    pub mechanisms: Vec<String>,
    /// PLAIN users: name → password.
    plain_users: BTreeMap<String, String>,
    /// KIP-368 session lifetime per mechanism (`connections.max.reauth.ms`; absent or 0: sessions never end).
    reauth_ms: BTreeMap<String, u64>,
    /// OAUTHBEARER's unsecured-token validator, when the mechanism is enabled.
    oauth: Option<Validator>,
}

impl std::fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslConfig")
            .field("mechanisms", &self.mechanisms)
            .field("plain_users", &self.plain_users.keys().collect::<Vec<_>>())
            .field("reauth_ms", &self.reauth_ms)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// One JAAS login module entry: `<class> <flag> key="value" ...;`.
#[derive(Debug, PartialEq, Eq)]
pub struct JaasEntry {
    /// The login module class.
    pub module: String,
    /// `required`, `requisite`, `sufficient` or `optional`.
    pub flag: String,
    /// Its options in order.
    pub options: Vec<(String, String)>,
}

/// Parses a `sasl.jaas.config` value (one login module, as Kafka's `JaasConfig` requires for it).
pub fn parse_jaas(text: &str) -> std::result::Result<JaasEntry, String> {
    let mut chars = text.trim().chars().peekable();
    let word = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut w = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '=' || c == ';' {
                break;
            }
            w.push(c);
            chars.next();
        }
        w
    };
    let module = word(&mut chars);
    let flag = word(&mut chars);
    if module.is_empty() || flag.is_empty() {
        return Err("expected `<LoginModule class> <flag> key=\"value\" ...;`".into());
    }
    if !["required", "requisite", "sufficient", "optional"].contains(&flag.as_str()) {
        return Err(format!("invalid login module control flag {flag:?}"));
    }
    let mut options = Vec::new();
    loop {
        let key = word(&mut chars);
        if key.is_empty() {
            break;
        }
        if chars.next() != Some('=') {
            return Err(format!("option {key:?} has no value"));
        }
        let value = if chars.peek() == Some(&'"') {
            chars.next();
            let mut v = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => v.extend(chars.next()),
                    Some(c) => v.push(c),
                    None => return Err(format!("value of {key:?} has no closing quote")),
                }
            }
            v
        } else {
            word(&mut chars)
        };
        options.push((key, value));
    }
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    if chars.next() != Some(';') {
        return Err("the login module entry must end with `;`".into());
    }
    if chars.any(|c| !c.is_whitespace()) {
        return Err("only one login module is allowed in sasl.jaas.config".into());
    }
    Ok(JaasEntry {
        module,
        flag,
        options,
    })
}

/// OAUTHBEARER's validator: the options of the listener's `OAuthBearerLoginModule` JAAS line
/// (`listener.name.<l>.oauthbearer.sasl.jaas.config`, else `sasl.jaas.config` when it names that module; none:
/// the defaults). A server callback handler other than Kafka's unsecured validator stops start-up: strata does
/// not fetch keys to check signed tokens.
fn oauth_validator(props: &ListenerProps<'_>) -> Result<Validator> {
    for key in [
        "oauthbearer.sasl.server.callback.handler.class",
        "sasl.server.callback.handler.class",
    ] {
        if let Some((k, class)) = props.get(key) {
            if !class.trim().is_empty() && !class.trim().ends_with(UNSECURED_VALIDATOR) {
                return Err(bad(
                    &k,
                    class,
                    format!(
                        "strata's OAUTHBEARER checks unsecured JWS tokens only (Kafka's {UNSECURED_VALIDATOR}); \
                         signed tokens (JWKS, sasl.oauthbearer.jwks.endpoint.url) are not implemented"
                    ),
                ));
            }
        }
    }
    let line = props.prefixed("oauthbearer.sasl.jaas.config").or_else(|| {
        props
            .get("sasl.jaas.config")
            .filter(|(_, v)| v.contains("OAuthBearerLoginModule"))
    });
    let Some((key, jaas)) = line else {
        return Ok(Validator::default());
    };
    let entry = parse_jaas(jaas).map_err(|r| bad(&key, "(hidden)", r))?;
    if !entry.module.ends_with("OAuthBearerLoginModule") {
        return Err(bad(
            &key,
            &entry.module,
            "OAUTHBEARER needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
        ));
    }
    let options = entry.options.into_iter().collect();
    Validator::from_options(&options).map_err(|r| bad(&key, "(hidden)", r))
}

impl SaslConfig {
    /// The listener's SASL settings: `sasl.enabled.mechanisms`, and for PLAIN the JAAS line of
    /// `listener.name.<l>.plain.sasl.jaas.config`, else `listener.name.<l>.sasl.jaas.config`, else
    /// `sasl.jaas.config`; per mechanism the session lifetime of
    /// `listener.name.<l>.<mechanism>.connections.max.reauth.ms`, else `listener.name.<l>.connections.max.reauth.ms`,
    /// else `global_reauth_ms` (the unprefixed key, Kafka's rule for KIP-368).
    pub fn from_props(props: &ListenerProps<'_>, global_reauth_ms: i64) -> Result<SaslConfig> {
        let (mkey, mvalue) = props.get_or("sasl.enabled.mechanisms", "PLAIN");
        let mechanisms: Vec<String> = mvalue
            .split(',')
            .map(|m| m.trim().to_ascii_uppercase())
            .filter(|m| !m.is_empty())
            .collect();
        if mechanisms.is_empty() {
            return Err(bad(&mkey, mvalue, "no SASL mechanism enabled"));
        }
        for m in &mechanisms {
            if !MECHANISMS.contains(&m.as_str()) {
                return Err(bad(
                    &mkey,
                    mvalue,
                    format!(
                        "strata does not implement SASL mechanism {m} (implemented: {})",
                        MECHANISMS.join(", ")
                    ),
                ));
            }
        }
        let mut plain_users = BTreeMap::new();
        if mechanisms.iter().any(|m| m == "PLAIN") {
            let (jkey, jaas) = props
                .prefixed("plain.sasl.jaas.config")
                .or_else(|| props.get("sasl.jaas.config"))
                .ok_or_else(|| {
                    bad(
                        &format!(
                            "listener.name.{}.plain.sasl.jaas.config",
                            props.listener.to_ascii_lowercase()
                        ),
                        "",
                        format!(
                            "listener {} enables PLAIN and needs its users: a JAAS line \
                             `org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>=\"<password>\";`",
                            props.listener
                        ),
                    )
                })?;
            let entry = parse_jaas(jaas).map_err(|r| bad(&jkey, "(hidden)", r))?;
            if !entry.module.ends_with("PlainLoginModule") {
                return Err(bad(
                    &jkey,
                    &entry.module,
                    "PLAIN needs org.apache.kafka.common.security.plain.PlainLoginModule",
                ));
            }
            for (k, v) in entry.options {
                if let Some(user) = k.strip_prefix("user_") {
                    plain_users.insert(user.to_string(), v);
                }
            }
            if plain_users.is_empty() {
                return Err(bad(
                    &jkey,
                    "(hidden)",
                    "the PlainLoginModule line has no user_<name>=\"<password>\" option",
                ));
            }
        }
        let oauth = if mechanisms.iter().any(|m| m == "OAUTHBEARER") {
            Some(oauth_validator(props)?)
        } else {
            None
        };
        let mut reauth_ms = BTreeMap::new();
        for m in &mechanisms {
            let prefixed = props
                .get(&format!("{}.{REAUTH_KEY}", m.to_ascii_lowercase()))
                .or_else(|| props.get(REAUTH_KEY))
                .filter(|(k, _)| k.starts_with("listener.name."));
            let ms = match prefixed {
                Some((key, v)) => v
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| bad(&key, v, "expected a number of milliseconds, 0 or more"))?,
                None => global_reauth_ms.max(0) as u64,
            };
            if ms > 0 {
                reauth_ms.insert(m.clone(), ms);
            }
        }
        Ok(SaslConfig {
            mechanisms,
            plain_users,
            reauth_ms,
            oauth,
        })
    }

    /// Checks a PLAIN token (`authzid NUL user NUL password`, RFC 4616): the authenticated user name.
    pub fn authenticate_plain(&self, token: &[u8]) -> std::result::Result<String, Error> {
        let failed = |why: &str| Error::SaslAuthenticationFailed(why.to_string());
        let text =
            std::str::from_utf8(token).map_err(|_| failed("the PLAIN token is not UTF-8"))?;
        let mut parts = text.split('\0');
        let (Some(authzid), Some(user), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(failed(
                "the PLAIN token is not authzid NUL user NUL password",
            ));
        };
        if user.is_empty() || password.is_empty() {
            return Err(failed("the PLAIN token has an empty user name or password"));
        }
        if !authzid.is_empty() && authzid != user {
            return Err(failed("authorization id differs from the user name"));
        }
        match self.plain_users.get(user) {
            Some(expected) if constant_time_eq(expected.as_bytes(), password.as_bytes()) => {
                Ok(user.to_string())
            }
            _ => Err(failed("Invalid username or password")),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What the connection does with a frame: every frame before authentication, and afterwards the SaslHandshake
/// that starts a re-authentication (KIP-368) and everything up to its end.
#[derive(Debug)]
pub enum Step {
    /// Serve it as usual (ApiVersions, and any request of an authenticated session that has not expired).
    Dispatch,
    /// Send this response and wait for the next request.
    Reply(Bytes),
    /// Send this response, then close (the reason is logged).
    ReplyAndClose(Bytes, String),
    /// Close without an answer (also how a raw-token exchange after SaslHandshake v0 fails).
    Close(String),
    /// The session ended (`connections.max.reauth.ms`) without a re-authentication: close, as Kafka does.
    Expired(String),
}

/// An exchange that has just ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completed {
    /// The first authentication of the connection.
    Authenticated,
    /// A re-authentication (KIP-368), same mechanism and principal.
    Reauthenticated,
}

/// A re-authentication under way: what the session had before it.
#[derive(Debug)]
struct Reauth {
    /// Set when the client asked for another mechanism: the re-authentication fails at its SaslAuthenticate
    /// (Kafka's REAUTH_BAD_MECHANISM state).
    bad_mechanism: Option<String>,
}

/// The SASL exchange of one connection.
#[derive(Debug)]
pub struct Session {
    config: std::sync::Arc<SaslConfig>,
    scram_store: std::sync::Arc<ScramStore>,
    mechanism: Option<String>,
    scram: Option<Exchange>,
    principal: Option<String>,
    reauth: Option<Reauth>,
    expires: Option<Instant>,
    completed: Option<Completed>,
    /// A SaslHandshake v0 was answered: the frames up to the end of the exchange are raw SASL tokens.
    raw_tokens: bool,
    /// OAUTHBEARER: the error challenge was sent for a bad token; the client's `^A` ends the exchange with this.
    oauth_error: Option<String>,
    /// OAUTHBEARER: when the token of the exchange that just ended expires (ms since the epoch).
    credential_expires_ms: Option<u64>,
}

impl Session {
    /// A connection that has not authenticated yet.
    pub fn new(
        config: std::sync::Arc<SaslConfig>,
        scram_store: std::sync::Arc<ScramStore>,
    ) -> Self {
        Session {
            config,
            scram_store,
            mechanism: None,
            scram: None,
            principal: None,
            reauth: None,
            expires: None,
            completed: None,
            raw_tokens: false,
            oauth_error: None,
            credential_expires_ms: None,
        }
    }

    /// `User:<name>` once authenticated (kept through a re-authentication).
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The mechanism chosen by the handshake.
    pub fn mechanism(&self) -> Option<&str> {
        self.mechanism.as_deref()
    }

    /// Whether the next frame is a raw SASL token (after SaslHandshake v0), not a request: it has no request
    /// header, so it may be shorter than one.
    pub fn expects_raw_token(&self) -> bool {
        self.raw_tokens
    }

    /// Whether the connection has authenticated (it stays so through a re-authentication).
    pub fn authenticated(&self) -> bool {
        self.principal.is_some()
    }

    /// Whether a re-authentication (KIP-368) is under way: its frames are bounded as before authentication.
    pub fn reauthenticating(&self) -> bool {
        self.reauth.is_some()
    }

    /// The exchange that ended well with the last [`Step::Reply`], once.
    pub fn take_completed(&mut self) -> Option<Completed> {
        self.completed.take()
    }

    /// Handles a frame: before authentication, every one; afterwards a SaslHandshake starts a re-authentication,
    /// and any other request is served while the session lasts and closes the connection once it has expired.
    pub fn step(&mut self, frame: Bytes) -> Step {
        if self.raw_tokens {
            return self.raw_token(&frame);
        }
        if let Some(step) = self.while_authenticated(&frame) {
            return step;
        }
        let mut body = frame;
        let (api, version, header) = match codec::decode_header(&mut body) {
            Ok(h) => h,
            Err(reason) => return Step::Close(reason),
        };
        if !crate::codec::versions::is_supported(api, version) && api != ApiKey::ApiVersions {
            return Step::Close(format!(
                "unsupported {api:?} version {version} before SASL authentication"
            ));
        }
        match api {
            ApiKey::ApiVersions => Step::Dispatch,
            ApiKey::SaslHandshake => match codec::decode(&mut body, version, api) {
                Ok(req) => self.handshake(&header, version, req),
                Err(reason) => Step::Close(reason),
            },
            ApiKey::SaslAuthenticate => match codec::decode(&mut body, version, api) {
                Ok(req) => self.sasl_authenticate(&header, version, req),
                Err(reason) => Step::Close(reason),
            },
            other if self.reauth.is_some() => Step::Close(format!(
                "{other:?} request during SASL re-authentication (only SaslHandshake and SaslAuthenticate are served)"
            )),
            other => Step::Close(format!(
                "{other:?} request before SASL authentication (only ApiVersions, SaslHandshake and SaslAuthenticate are served)"
            )),
        }
    }

    /// Once authenticated (and not re-authenticating): any request but SaslHandshake is served while the session
    /// lasts, and closes the connection once it expired. `None`: the frame is for the SASL exchange.
    fn while_authenticated(&self, frame: &Bytes) -> Option<Step> {
        if self.principal.is_none() || self.reauth.is_some() {
            return None;
        }
        let api = frame.get(..2).map(|b| i16::from_be_bytes([b[0], b[1]]));
        if api == Some(ApiKey::SaslHandshake as i16) {
            return None;
        }
        Some(match self.expires {
            Some(at) if Instant::now() >= at => Step::Expired(format!(
                "the SASL session of {} ended (connections.max.reauth.ms) without a re-authentication",
                self.principal.as_deref().unwrap_or("?")
            )),
            _ => Step::Dispatch,
        })
    }

    /// SaslHandshake: picks the mechanism (before authentication, or to start a KIP-368 re-authentication).
    fn handshake(
        &mut self,
        header: &RequestHeader,
        version: i16,
        req: SaslHandshakeRequest,
    ) -> Step {
        let api = ApiKey::SaslHandshake;
        let asked = req.mechanism.to_string();
        let enabled: Vec<StrBytes> = self
            .config
            .mechanisms
            .iter()
            .map(|m| StrBytes::from_string(m.clone()))
            .collect();
        // KIP-368: an authenticated session starts a re-authentication with a new SaslHandshake.
        let reauth = self.principal.is_some() && self.reauth.is_none();
        if reauth && version == 0 {
            return Step::Close(
                "SaslHandshake v0 cannot start a re-authentication (KIP-368 needs v1 or later)"
                    .into(),
            );
        }
        let error = if self.mechanism.is_some() && !reauth {
            Some(Error::IllegalSaslState("a second SaslHandshake".into()))
        } else if !self.config.mechanisms.contains(&asked) {
            Some(Error::UnsupportedSaslMechanism {
                mechanism: asked.clone(),
                enabled: self.config.mechanisms.join(","),
            })
        } else {
            None
        };
        let resp = SaslHandshakeResponse::default()
            .with_error_code(error_code::of_error(error.as_ref()))
            .with_mechanisms(enabled);
        let bytes = match codec::encode(header, api, version, &resp) {
            Ok(b) => b,
            Err(reason) => return Step::Close(reason),
        };
        if let Some(e) = error {
            return Step::ReplyAndClose(bytes, e.to_string());
        }
        if reauth {
            let previous = self.mechanism.take().unwrap_or_default();
            // Kafka answers the handshake and fails the SaslAuthenticate that follows.
            let bad_mechanism = (previous != asked).then(|| {
                format!(
                    "SASL mechanism '{asked}' requested by client is not supported for \
                     re-authentication of mechanism '{previous}'"
                )
            });
            self.reauth = Some(Reauth { bad_mechanism });
            self.scram = None;
            self.oauth_error = None;
        }
        self.mechanism = Some(asked);
        // KIP-43: v0 has no SaslAuthenticate; raw tokens follow.
        self.raw_tokens = version == 0;
        Step::Reply(bytes)
    }

    /// SaslAuthenticate: one step of the mechanism's exchange; the session lifetime (v1+) once it ends well.
    fn sasl_authenticate(
        &mut self,
        header: &RequestHeader,
        version: i16,
        req: SaslAuthenticateRequest,
    ) -> Step {
        let api = ApiKey::SaslAuthenticate;
        let result = self.authenticate(&req.auth_bytes);
        let mut resp = SaslAuthenticateResponse::default()
            .with_error_code(error_code::of_error(result.as_ref().err()));
        match &result {
            Err(e) => resp = resp.with_error_message(Some(StrBytes::from_string(e.to_string()))),
            Ok((server, _)) => resp = resp.with_auth_bytes(Bytes::copy_from_slice(server)),
        }
        let done = matches!(result, Ok((_, Some(_))));
        let lifetime_ms = self.lifetime_ms();
        if done && version >= 1 {
            // KIP-368: the client re-authenticates before this ends (v0 clients cannot, and are closed).
            resp = resp.with_session_lifetime_ms(lifetime_ms as i64);
        }
        let bytes = match codec::encode(header, api, version, &resp) {
            Ok(b) => b,
            Err(reason) => return Step::Close(reason),
        };
        match result {
            Ok((_, Some(user))) => {
                self.finish(user, lifetime_ms);
                Step::Reply(bytes)
            }
            Ok((_, None)) => Step::Reply(bytes),
            Err(e) => Step::ReplyAndClose(bytes, e.to_string()),
        }
    }

    /// One raw SASL token after SaslHandshake v0: the server's token goes back length-prefixed (empty for PLAIN's
    /// success); a failure closes the connection without an answer. The session ends after the mechanism's
    /// `connections.max.reauth.ms` as for SaslAuthenticate v0 (such a client cannot re-authenticate).
    fn raw_token(&mut self, token: &[u8]) -> Step {
        match self.authenticate(token) {
            Ok((server, user)) => {
                let mut reply = Vec::with_capacity(4 + server.len());
                reply.extend_from_slice(&(server.len() as i32).to_be_bytes());
                reply.extend_from_slice(&server);
                if let Some(user) = user {
                    self.finish(user, self.lifetime_ms());
                }
                Step::Reply(Bytes::from(reply))
            }
            Err(e) => Step::Close(format!("SASL authentication failed: {e}")),
        }
    }

    /// An exchange ended well: `user` is the principal, the session lasts `lifetime_ms` (0: no end), requests
    /// follow (no raw tokens), and what completed is kept for [`Session::take_completed`].
    fn finish(&mut self, user: String, lifetime_ms: u64) {
        self.principal = Some(user);
        self.scram = None;
        self.raw_tokens = false;
        self.expires =
            (lifetime_ms > 0).then(|| Instant::now() + Duration::from_millis(lifetime_ms));
        self.completed = Some(match self.reauth.take() {
            Some(_) => Completed::Reauthenticated,
            None => Completed::Authenticated,
        });
    }

    /// The session lifetime of the chosen mechanism (0: no end). With `connections.max.reauth.ms` set, a token
    /// that expires sooner ends the session sooner (KIP-368: the lesser of the two); without it, sessions never
    /// end, whatever the token says (as in Kafka).
    fn lifetime_ms(&self) -> u64 {
        let max = self
            .mechanism
            .as_ref()
            .and_then(|m| self.config.reauth_ms.get(m))
            .copied()
            .unwrap_or(0);
        match self.credential_expires_ms {
            Some(exp) if max > 0 => max.min(exp.saturating_sub(now_ms().max(0) as u64).max(1)),
            _ => max,
        }
    }

    /// One OAUTHBEARER message: the client's initial response, or its `^A` after an error challenge.
    fn oauthbearer(
        &mut self,
        token: &[u8],
    ) -> std::result::Result<(Vec<u8>, Option<String>), Error> {
        if let Some(error) = self.oauth_error.take() {
            if token == b"\x01" {
                return Err(Error::SaslAuthenticationFailed(error));
            }
        }
        let failed = |why: String| Error::SaslAuthenticationFailed(format!("OAUTHBEARER: {why}"));
        let validator = self
            .config
            .oauth
            .as_ref()
            .ok_or_else(|| Error::IllegalSaslState("OAUTHBEARER is not enabled".into()))?;
        let response = oauthbearer::parse_initial_response(token).map_err(failed)?;
        match oauthbearer::validate(&response.token, validator, now_ms().max(0) as u64) {
            Ok(valid) => {
                if let Some(authzid) = response.authzid.filter(|a| *a != valid.principal) {
                    return Err(failed(format!(
                        "the authorization id {authzid} differs from the token's principal {}",
                        valid.principal
                    )));
                }
                self.credential_expires_ms = Some(valid.expires_ms);
                Ok((Vec::new(), Some(valid.principal)))
            }
            Err(rejected) => {
                // RFC 7628: the error goes back as a challenge; the client answers ^A and the exchange fails.
                self.oauth_error = Some(format!(
                    "OAUTHBEARER token rejected: {} ({})",
                    rejected.reason, rejected.challenge
                ));
                Ok((rejected.challenge.into_bytes(), None))
            }
        }
    }

    /// One SaslAuthenticate token: (the server's message, `User:<name>` once authenticated). A re-authentication
    /// must keep the mechanism and the principal (Kafka's SaslServerAuthenticator).
    fn authenticate(
        &mut self,
        token: &[u8],
    ) -> std::result::Result<(Vec<u8>, Option<String>), Error> {
        if let Some(why) = self.reauth.as_ref().and_then(|r| r.bad_mechanism.clone()) {
            return Err(Error::SaslAuthenticationFailed(why));
        }
        let (server, user) = match self.mechanism.as_deref() {
            Some("PLAIN") => self
                .config
                .authenticate_plain(token)
                .map(|u| (Vec::new(), Some(u))),
            Some("OAUTHBEARER") => self.oauthbearer(token),
            Some(m) => match Mechanism::from_name(m) {
                Some(scram) => self
                    .scram
                    .get_or_insert_with(|| Exchange::new(scram))
                    .step(&self.scram_store, token),
                None => Err(Error::IllegalSaslState(format!(
                    "mechanism {m} has no exchange"
                ))),
            },
            None => Err(Error::IllegalSaslState(
                "SaslAuthenticate before SaslHandshake".into(),
            )),
        }
        .map_err(|e| match (e, &self.reauth) {
            (Error::SaslAuthenticationFailed(m), Some(_)) => {
                Error::SaslAuthenticationFailed(format!("re-authentication failed: {m}"))
            }
            (e, _) => e,
        })?;
        let principal = user.map(|u| format!("User:{u}"));
        if let (Some(new), Some(_), Some(old)) = (&principal, &self.reauth, &self.principal) {
            if new != old {
                return Err(Error::SaslAuthenticationFailed(format!(
                    "Cannot change principals during re-authentication from {old}: {new}"
                )));
            }
        }
        Ok((server, principal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a\"b";"#;

    #[test]
    fn a_kafka_plain_jaas_line_gives_its_users() {
        let e = parse_jaas(JAAS).unwrap();
        assert_eq!(e.flag, "required");
        assert!(e.options.contains(&("user_alice".into(), "a\"b".into())));
        assert_eq!(e.options.len(), 4);
    }

    #[test]
    fn malformed_jaas_lines_are_refused() {
        for bad in [
            "",
            "Module",
            "Module required user_a=\"x\"",
            "Module maybe user_a=\"x\";",
            "Module required user_a=\"x;",
            "Module required a=\"x\"; Other required;",
        ] {
            assert!(parse_jaas(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn plain_tokens_are_checked_against_the_jaas_users() {
        let mut props = BTreeMap::new();
        props.insert(
            "listener.name.sasl.plain.sasl.jaas.config".to_string(),
            JAAS.to_string(),
        );
        let c = SaslConfig::from_props(&ListenerProps::new(&props, "SASL"), 0).unwrap();
        assert_eq!(
            c.authenticate_plain(b"\0admin\0admin-secret").unwrap(),
            "admin"
        );
        assert_eq!(
            c.authenticate_plain(b"alice\0alice\0a\"b").unwrap(),
            "alice"
        );
        for bad in [
            &b"\0admin\0wrong"[..],
            b"\0nobody\0x",
            b"bob\0admin\0admin-secret",
            b"admin",
        ] {
            assert!(matches!(
                c.authenticate_plain(bad),
                Err(Error::SaslAuthenticationFailed(_))
            ));
        }
    }

    #[test]
    fn plain_without_users_or_an_unknown_mechanism_stops_start_up() {
        let props = BTreeMap::new();
        let e = SaslConfig::from_props(&ListenerProps::new(&props, "SASL"), 0).unwrap_err();
        assert!(
            e.to_string()
                .contains("listener.name.sasl.plain.sasl.jaas.config"),
            "{e}"
        );
        let mut props = BTreeMap::new();
        props.insert("sasl.enabled.mechanisms".to_string(), "GSSAPI".to_string());
        let e = SaslConfig::from_props(&ListenerProps::new(&props, "SASL"), 0).unwrap_err();
        assert!(e.to_string().contains("GSSAPI"), "{e}");
    }
}
