//! SASL/OAUTHBEARER (RFC 7628, KIP-255) with unsecured JWS tokens, for development: what Kafka's default
//! `OAuthBearerUnsecuredValidatorCallbackHandler` accepts. The client's initial response is
//! `n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A]...^A`; the token is `base64url(header).base64url(claims).`
//! with `"alg":"none"` and no signature. The principal is the `sub` claim (or the JAAS option
//! `unsecuredValidatorPrincipalClaimName`), `exp` is required and must not have passed, `iat` (when given) must
//! not be in the future and must come before `exp`, all within `unsecuredValidatorAllowableClockSkewMs`; the
//! scopes of `unsecuredValidatorRequiredScope` (space-separated) must all be in the `scope` claim (a
//! space-separated string or a list; `unsecuredValidatorScopeClaimName`). A token that fails is answered, as
//! Kafka answers, with an RFC 7628 error challenge (`{"status":"invalid_token"}` or
//! `{"status":"insufficient_scope", "scope":"..."}`), to which the client replies `^A`; the exchange then fails
//! with SASL_AUTHENTICATION_FAILED and a message naming what was wrong with the token. Extensions are accepted
//! (Kafka's unsecured handler validates every one). Nothing is signed: never expose such a listener.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;

/// The JAAS options of the unsecured validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validator {
    /// The claim holding the principal name (`unsecuredValidatorPrincipalClaimName`, default `sub`).
    pub principal_claim: String,
    /// The claim holding the scopes (`unsecuredValidatorScopeClaimName`, default `scope`).
    pub scope_claim: String,
    /// Scopes every token must have (`unsecuredValidatorRequiredScope`).
    pub required_scope: Vec<String>,
    /// Clock skew allowed on `exp` and `iat` (`unsecuredValidatorAllowableClockSkewMs`, default 0).
    pub clock_skew_ms: u64,
}

impl Default for Validator {
    fn default() -> Self {
        Validator {
            principal_claim: "sub".into(),
            scope_claim: "scope".into(),
            required_scope: Vec::new(),
            clock_skew_ms: 0,
        }
    }
}

/// The JAAS option names the validator reads.
pub const OPTIONS: &[&str] = &[
    "unsecuredValidatorPrincipalClaimName",
    "unsecuredValidatorScopeClaimName",
    "unsecuredValidatorRequiredScope",
    "unsecuredValidatorAllowableClockSkewMs",
];

impl Validator {
    /// The validator of a JAAS line's options (`OAuthBearerLoginModule`'s; options of the login side, such as
    /// `unsecuredLoginStringClaim_sub`, are for a client and ignored). Err names the bad option.
    pub fn from_options(options: &BTreeMap<String, String>) -> Result<Validator, String> {
        let mut v = Validator::default();
        let non_empty = |key: &str, value: &str| {
            let value = value.trim();
            if value.is_empty() {
                Err(format!("{key} is empty"))
            } else {
                Ok(value.to_string())
            }
        };
        if let Some(name) = options.get("unsecuredValidatorPrincipalClaimName") {
            v.principal_claim = non_empty("unsecuredValidatorPrincipalClaimName", name)?;
        }
        if let Some(name) = options.get("unsecuredValidatorScopeClaimName") {
            v.scope_claim = non_empty("unsecuredValidatorScopeClaimName", name)?;
        }
        if let Some(scope) = options.get("unsecuredValidatorRequiredScope") {
            v.required_scope = scope.split_whitespace().map(str::to_string).collect();
        }
        if let Some(ms) = options.get("unsecuredValidatorAllowableClockSkewMs") {
            v.clock_skew_ms = ms.trim().parse().map_err(|_| {
                format!("unsecuredValidatorAllowableClockSkewMs={ms:?} is not a number of milliseconds, 0 or more")
            })?;
        }
        Ok(v)
    }
}

/// A token that passed: the principal name and when the token expires (ms since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valid {
    /// The principal claim's value.
    pub principal: String,
    /// The `exp` claim in milliseconds since the epoch.
    pub expires_ms: u64,
}

/// Why a client message was refused: the RFC 7628 error challenge to send, and what was wrong (for the final
/// error message and the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The JSON error sent as the server's challenge.
    pub challenge: String,
    /// What was wrong with the token.
    pub reason: String,
}

impl Rejected {
    fn invalid(reason: impl Into<String>) -> Self {
        Rejected {
            challenge: r#"{"status":"invalid_token"}"#.into(),
            reason: reason.into(),
        }
    }
}

/// The parts of a client initial response.
#[derive(Debug, PartialEq, Eq)]
pub struct InitialResponse {
    /// The authorization id of the GS2 header (`a=`), unescaped.
    pub authzid: Option<String>,
    /// The bearer token.
    pub token: String,
    /// The other key=value pairs (SASL extensions).
    pub extensions: BTreeMap<String, String>,
}

/// Parses `n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A]...^A` (Kafka's OAuthBearerClientInitialResponse).
pub fn parse_initial_response(bytes: &[u8]) -> Result<InitialResponse, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| "the OAUTHBEARER client response is not UTF-8".to_string())?;
    let malformed = || {
        "the OAUTHBEARER client response is not `n,[a=authzid],\\x01auth=Bearer <token>\\x01\\x01` (RFC 7628)"
            .to_string()
    };
    let rest = text.strip_prefix("n,").ok_or_else(malformed)?;
    let (authzid, rest) = rest.split_once(',').ok_or_else(malformed)?;
    let authzid = match authzid {
        "" => None,
        a => Some(
            a.strip_prefix("a=")
                .filter(|a| !a.is_empty())
                .ok_or_else(malformed)?
                .replace("=2C", ",")
                .replace("=3D", "="),
        ),
    };
    let pairs = rest
        .strip_prefix('\u{1}')
        .and_then(|r| r.strip_suffix('\u{1}'))
        .ok_or_else(malformed)?;
    // Each key=value ends with its own ^A before the final one.
    if !pairs.is_empty() && !pairs.ends_with('\u{1}') {
        return Err(malformed());
    }
    let mut token = None;
    let mut extensions = BTreeMap::new();
    for pair in pairs.split('\u{1}').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(malformed)?;
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(format!(
                "OAUTHBEARER key {key:?} is not letters only (RFC 7628)"
            ));
        }
        if key == "auth" {
            let (scheme, value) = value.split_once(' ').ok_or_else(malformed)?;
            if !scheme.eq_ignore_ascii_case("bearer") {
                return Err(format!("OAUTHBEARER auth scheme {scheme:?} is not Bearer"));
            }
            token = Some(value.trim_start().to_string());
        } else {
            extensions.insert(key.to_string(), value.to_string());
        }
    }
    let token = token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| "the OAUTHBEARER client response has no auth=Bearer token".to_string())?;
    Ok(InitialResponse {
        authzid,
        token,
        extensions,
    })
}

fn decode_json(part: &str, what: &str) -> Result<serde_json::Map<String, Value>, Rejected> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|e| Rejected::invalid(format!("the token's {what} is not base64url: {e}")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Rejected::invalid(format!(
            "the token's {what} is not a JSON object"
        ))),
    }
}

/// A NumericDate claim in milliseconds; Err when present and not a number.
fn time_claim(
    claims: &serde_json::Map<String, Value>,
    name: &str,
) -> Result<Option<f64>, Rejected> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().map(|s| s * 1000.0)),
        Some(other) => Err(Rejected::invalid(format!(
            "the token's {name} claim is not a number of seconds: {other}"
        ))),
    }
}

/// Checks an unsecured JWS compact serialization at `now_ms` as Kafka's unsecured validator does.
pub fn validate(token: &str, v: &Validator, now_ms: u64) -> Result<Valid, Rejected> {
    let claims = unsecured_claims(token)?;
    let principal = principal(&claims, v)?;
    let exp = check_times(&claims, v, now_ms)?;
    check_scope(&claims, v)?;
    Ok(Valid {
        principal,
        expires_ms: exp.max(0.0) as u64,
    })
}

type Claims = serde_json::Map<String, Value>;

/// The claims of an unsecured JWS (`header.claims.`, alg none, no signature).
fn unsecured_claims(token: &str) -> Result<Claims, Rejected> {
    let parts: Vec<&str> = token.split('.').collect();
    let [header, claims, signature] = parts.as_slice() else {
        return Err(Rejected::invalid(format!(
            "the token has {} dot-separated parts, an unsecured JWS has 3 (header.claims.)",
            parts.len()
        )));
    };
    if !signature.is_empty() {
        return Err(Rejected::invalid(
            "the token is signed: strata validates unsecured JWS tokens only (alg none, no signature)",
        ));
    }
    let header = decode_json(header, "header")?;
    if header.get("alg").and_then(Value::as_str) != Some("none") {
        return Err(Rejected::invalid(format!(
            "the token's header has alg {}, an unsecured JWS has \"none\"",
            header
                .get("alg")
                .map_or("(none given)".into(), Value::to_string)
        )));
    }
    decode_json(claims, "claims")
}

/// The principal: the validator's principal claim, a non-empty string.
fn principal(claims: &Claims, v: &Validator) -> Result<String, Rejected> {
    match claims.get(&v.principal_claim) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(_) => Err(Rejected::invalid(format!(
            "the token's principal claim {} is not a non-empty string",
            v.principal_claim
        ))),
        None => Err(Rejected::invalid(format!(
            "the token has no principal claim {}",
            v.principal_claim
        ))),
    }
}

/// Checks `exp` (required, not past) and `iat` (if given, not in the future, before `exp`), both within the
/// allowed clock skew; the expiry in milliseconds.
fn check_times(claims: &Claims, v: &Validator, now_ms: u64) -> Result<f64, Rejected> {
    let skew = v.clock_skew_ms as f64;
    let now = now_ms as f64;
    let exp = time_claim(claims, "exp")?
        .ok_or_else(|| Rejected::invalid("the token has no exp (expiration time) claim"))?;
    if exp <= now - skew {
        return Err(Rejected::invalid(format!(
            "the token expired: exp {:.3} s is not after now ({:.3} s) minus the allowed clock skew ({} ms)",
            exp / 1000.0,
            now / 1000.0,
            v.clock_skew_ms
        )));
    }
    if let Some(iat) = time_claim(claims, "iat")? {
        if iat > now + skew {
            return Err(Rejected::invalid(format!(
                "the token was issued in the future: iat {:.3} s is after now ({:.3} s) plus the allowed clock skew ({} ms)",
                iat / 1000.0,
                now / 1000.0,
                v.clock_skew_ms
            )));
        }
        if exp <= iat {
            return Err(Rejected::invalid(format!(
                "the token's exp {:.3} s is not after its iat {:.3} s",
                exp / 1000.0,
                iat / 1000.0
            )));
        }
    }
    Ok(exp)
}

/// Checks that the scope claim (a space-separated string or an array) holds every required scope; a missing
/// one is answered with Kafka's `insufficient_scope` challenge.
fn check_scope(claims: &Claims, v: &Validator) -> Result<(), Rejected> {
    if v.required_scope.is_empty() {
        return Ok(());
    }
    let have: Vec<String> = match claims.get(&v.scope_claim) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let missing: Vec<&String> = v
        .required_scope
        .iter()
        .filter(|s| !have.contains(s))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let required = v.required_scope.join(" ");
    Err(Rejected {
        challenge: format!(
            r#"{{"status":"insufficient_scope", "scope":"{}"}}"#,
            required.replace('"', "")
        ),
        reason: format!(
            "the token's {} claim lacks the required scope {}",
            v.scope_claim,
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(json: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    fn token(claims: &str) -> String {
        format!("{}.{}.", b64(r#"{"alg":"none"}"#), b64(claims))
    }

    const NOW: u64 = 1_700_000_000_000;

    #[test]
    fn librdkafka_style_initial_responses_parse() {
        let r =
            parse_initial_response(b"n,,\x01auth=Bearer abc.def.\x01traceId=42\x01\x01").unwrap();
        assert_eq!(r.token, "abc.def.");
        assert_eq!(r.authzid, None);
        assert_eq!(r.extensions.get("traceId").map(String::as_str), Some("42"));
        let r = parse_initial_response(b"n,a=al=2Cice,\x01auth=bearer t..\x01\x01").unwrap();
        assert_eq!(r.authzid.as_deref(), Some("al,ice"));
        assert_eq!(r.token, "t..");
        for bad in [
            &b"y,,\x01auth=Bearer t..\x01\x01"[..],
            b"n,,auth=Bearer t..\x01\x01",
            b"n,,\x01auth=Basic t..\x01\x01",
            b"n,,\x01\x01",
            b"n,,\x01auth=Bearer t..\x01",
            b"n,,\x01a-b=1\x01auth=Bearer t..\x01\x01",
            b"\xff",
        ] {
            assert!(parse_initial_response(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_valid_unsecured_token_gives_its_subject_and_expiry() {
        let t = token(r#"{"sub":"alice","iat":1699999999.5,"exp":1700003600}"#);
        let v = validate(&t, &Validator::default(), NOW).unwrap();
        assert_eq!(v.principal, "alice");
        assert_eq!(v.expires_ms, 1_700_003_600_000);
    }

    #[test]
    fn bad_tokens_are_refused_naming_what_is_wrong() {
        let d = Validator::default();
        let cases = [
            (token(r#"{"sub":"a","exp":1699999999}"#), "expired"),
            (token(r#"{"sub":"a"}"#), "no exp"),
            (token(r#"{"exp":1800000000}"#), "no principal claim sub"),
            (
                token(r#"{"sub":"","exp":1800000000}"#),
                "not a non-empty string",
            ),
            (token(r#"{"sub":"a","exp":"soon"}"#), "not a number"),
            (
                token(r#"{"sub":"a","iat":1700000100,"exp":1800000000}"#),
                "future",
            ),
            (
                format!(
                    "{}.{}.",
                    b64(r#"{"alg":"HS256"}"#),
                    b64(r#"{"sub":"a","exp":1800000000}"#)
                ),
                "alg",
            ),
            (
                format!("{}sig", token(r#"{"sub":"a","exp":1800000000}"#)),
                "signed",
            ),
            ("only.two".to_string(), "3"),
            ("%%%.%%%.".to_string(), "base64url"),
        ];
        for (t, why) in cases {
            let e = validate(&t, &d, NOW).expect_err(why);
            assert!(e.reason.contains(why), "{why}: {}", e.reason);
            assert_eq!(e.challenge, r#"{"status":"invalid_token"}"#);
        }
    }

    #[test]
    fn clock_skew_and_required_scopes_follow_the_jaas_options() {
        let options: BTreeMap<String, String> = [
            ("unsecuredValidatorAllowableClockSkewMs", "5000"),
            ("unsecuredValidatorRequiredScope", "read write"),
            ("unsecuredValidatorPrincipalClaimName", "client_id"),
            ("unsecuredValidatorScopeClaimName", "scp"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let v = Validator::from_options(&options).unwrap();
        // Expired 2 s ago: within the 5 s skew.
        let t = token(r#"{"client_id":"svc","exp":1699999998,"scp":["read","write","x"]}"#);
        assert_eq!(validate(&t, &v, NOW).unwrap().principal, "svc");
        let t = token(r#"{"client_id":"svc","exp":1800000000,"scp":"read"}"#);
        let e = validate(&t, &v, NOW).unwrap_err();
        assert_eq!(
            e.challenge,
            r#"{"status":"insufficient_scope", "scope":"read write"}"#
        );
        assert!(e.reason.contains("write"), "{}", e.reason);
        let bad: BTreeMap<String, String> = [(
            "unsecuredValidatorAllowableClockSkewMs".to_string(),
            "-1".to_string(),
        )]
        .into();
        assert!(Validator::from_options(&bad).unwrap_err().contains("-1"));
    }
}
