//! Principals as Kafka derives them (`DefaultKafkaPrincipalBuilder`): `User:<name>` from SASL, `User:ANONYMOUS` on
//! PLAINTEXT and on SSL without a client certificate, and for an SSL client certificate its subject's distinguished
//! name (RFC 2253, as Java's `X500Principal.getName()`) through `ssl.principal.mapping.rules` (`SslPrincipalMapper`:
//! `RULE:pattern/replacement/[LU]` and `DEFAULT`, the first rule whose pattern matches the whole DN wins).
//! `principal.builder.class` other than Kafka's default is refused at start-up.

use regex::Regex;

use crate::error::{Error, Result};

/// The principal of an unauthenticated connection (PLAINTEXT, SSL without a client certificate).
pub const ANONYMOUS: &str = "User:ANONYMOUS";

/// Kafka's default principal builder, the only one strata has.
pub const DEFAULT_PRINCIPAL_BUILDER: &str =
    "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder";

/// Refuses a `principal.builder.class` other than Kafka's default (a custom class cannot run in strata).
pub fn check_principal_builder(value: Option<&str>) -> Result<()> {
    match value.map(str::trim) {
        None | Some("") | Some(DEFAULT_PRINCIPAL_BUILDER) => Ok(()),
        Some(other) => Err(Error::config(
            "principal.builder.class".into(),
            other.into(),
            format!(
                "strata derives principals as Kafka's {DEFAULT_PRINCIPAL_BUILDER} does and cannot load another class"
            ),
        )),
    }
}

/// One rule of `ssl.principal.mapping.rules`.
#[derive(Debug, Clone)]
enum Rule {
    /// The DN as is.
    Default,
    /// The DN rewritten when `pattern` matches all of it.
    Replace {
        pattern: Regex,
        replacement: String,
        lower: bool,
        upper: bool,
    },
}

/// `ssl.principal.mapping.rules`, parsed as Kafka's `SslPrincipalMapper` parses them.
#[derive(Debug, Clone)]
pub struct SslPrincipalMapper {
    rules: Vec<Rule>,
}

impl Default for SslPrincipalMapper {
    /// The default rules: `DEFAULT`.
    fn default() -> Self {
        SslPrincipalMapper {
            rules: vec![Rule::Default],
        }
    }
}

/// Kafka's rule grammar (`SslPrincipalMapper.RULE_PATTERN`).
const RULE_PATTERN: &str = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)";

impl SslPrincipalMapper {
    /// Parses `rules` (comma-separated `DEFAULT` / `RULE:...`); a bad rule names itself.
    pub fn parse(rules: &str) -> std::result::Result<Self, String> {
        let splitter = Regex::new(&format!(r"\s*({RULE_PATTERN})\s*(?:,\s*|$)")).expect("valid");
        let whole = Regex::new(&format!("^(?:{RULE_PATTERN})")).expect("valid");
        let mut out = Vec::new();
        for cap in splitter.captures_iter(rules.trim()) {
            let rule = cap.get(1).map_or("", |m| m.as_str());
            let m = whole
                .captures(rule)
                .ok_or_else(|| format!("Invalid rule: {rule}"))?;
            let end = m.get(0).map_or(0, |g| g.end());
            if end != rule.len() {
                return Err(format!(
                    "Invalid rule: `{rule}`, unmatched substring: `{}`",
                    &rule[end..]
                ));
            }
            if m.get(1).is_some() {
                out.push(Rule::Default);
            } else if let (Some(p), Some(r)) = (m.get(2), m.get(3)) {
                let pattern = Regex::new(&format!("^(?:{})$", p.as_str()))
                    .map_err(|e| format!("Invalid rule: {rule}: {e}"))?;
                let flag = m.get(4).map_or("", |f| f.as_str());
                out.push(Rule::Replace {
                    pattern,
                    replacement: r.as_str().to_string(),
                    lower: flag == "L",
                    upper: flag == "U",
                });
            }
        }
        Ok(SslPrincipalMapper { rules: out })
    }

    /// The principal name of `dn`: the first rule that applies; `None` when none does (Kafka then fails the
    /// authentication: `NoMatchingRule`).
    pub fn name(&self, dn: &str) -> Option<String> {
        self.rules.iter().find_map(|rule| match rule {
            Rule::Default => Some(dn.to_string()),
            Rule::Replace {
                pattern,
                replacement,
                lower,
                upper,
            } => {
                let caps = pattern.captures(dn)?;
                let mut out = expand(replacement, &caps);
                if *lower {
                    out = out.to_lowercase();
                } else if *upper {
                    out = out.to_uppercase();
                }
                Some(out)
            }
        })
    }
}

/// Java's `Matcher.appendReplacement`: `$n` is group n (digits taken while the group exists), `\x` is `x`; as
/// Kafka's `escapeLiteralBackReferences`, a `$n` naming no group stays literal.
fn expand(replacement: &str, caps: &regex::Captures<'_>) -> String {
    let groups = caps.len() - 1;
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '$' if chars.peek().is_some_and(|d| d.is_ascii_digit()) => {
                let first = chars.next().and_then(|d| d.to_digit(10)).unwrap_or(0) as usize;
                if first > groups {
                    out.push('$');
                    out.push_str(&first.to_string());
                    continue;
                }
                let mut n = first;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    let next = n * 10 + d as usize;
                    if next > groups {
                        break;
                    }
                    n = next;
                    chars.next();
                }
                out.push_str(caps.get(n).map_or("", |m| m.as_str()));
            }
            c => out.push(c),
        }
    }
    out
}

/// The subject DN of a DER certificate in RFC 2253 form (`CN=alice,OU=eng,O=acme`); `None` if it does not parse.
pub fn subject_dn(der: &[u8]) -> Option<String> {
    use x509_cert::der::Decode;
    let cert = x509_cert::Certificate::from_der(der).ok()?;
    Some(cert.tbs_certificate().subject().to_string())
}

/// The principal of an SSL connection: `User:<mapped DN>` for a client certificate, else [`ANONYMOUS`]. A DN no
/// rule maps is an error naming it (Kafka fails the authentication).
pub fn ssl_principal(
    mapper: &SslPrincipalMapper,
    cert: Option<&[u8]>,
) -> std::result::Result<String, String> {
    let Some(der) = cert else {
        return Ok(ANONYMOUS.to_string());
    };
    let dn = subject_dn(der).ok_or("the client certificate's subject does not parse")?;
    mapper
        .name(&dn)
        .map(|n| format!("User:{n}"))
        .ok_or_else(|| format!("No rules apply to {dn} (ssl.principal.mapping.rules)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_documented_rules_map_as_kafka_maps_them() {
        let m = SslPrincipalMapper::parse(
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U, DEFAULT",
        )
        .unwrap();
        assert_eq!(
            m.name("CN=Kafka-Server,OU=ServiceUsers,O=Org").as_deref(),
            Some("kafka-server")
        );
        assert_eq!(
            m.name("CN=duke,OU=JavaSoft,O=Sun Microsystems,L=x,ST=y,C=US")
                .as_deref(),
            Some("DUKE@JAVASOFT")
        );
        assert_eq!(m.name("CN=other").as_deref(), Some("CN=other"));
        let only = SslPrincipalMapper::parse("RULE:^CN=(.*)$/$1/").unwrap();
        assert_eq!(only.name("CN=a,O=b").as_deref(), Some("a,O=b"));
        assert_eq!(only.name("O=b"), None);
        // A `$n` past the groups stays literal; `\$` is a dollar.
        let lit = SslPrincipalMapper::parse(r"RULE:^CN=(.*)$/$1-$2-\$/").unwrap();
        assert_eq!(lit.name("CN=x").as_deref(), Some("x-$2-$"));
        assert!(SslPrincipalMapper::parse("RULE:^CN=(.*)$/$1/X").is_err());
        assert_eq!(
            SslPrincipalMapper::default().name("CN=a").as_deref(),
            Some("CN=a")
        );
    }

    #[test]
    fn only_kafkas_default_principal_builder_is_accepted() {
        assert!(check_principal_builder(None).is_ok());
        assert!(check_principal_builder(Some(DEFAULT_PRINCIPAL_BUILDER)).is_ok());
        let e = check_principal_builder(Some("com.acme.Builder")).unwrap_err();
        assert!(e.to_string().contains("principal.builder.class"), "{e}");
    }

    #[test]
    fn a_generated_certificates_subject_reads_as_rfc_2253() {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "acme");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationalUnitName, "eng");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let dn = subject_dn(cert.der()).unwrap();
        assert_eq!(dn, "CN=alice,OU=eng,O=acme");
        let p = ssl_principal(&SslPrincipalMapper::default(), Some(cert.der())).unwrap();
        assert_eq!(p, "User:CN=alice,OU=eng,O=acme");
        assert_eq!(
            ssl_principal(&SslPrincipalMapper::default(), None).unwrap(),
            ANONYMOUS
        );
    }
}
