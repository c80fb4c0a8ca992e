//! ApiVersions (key 18): the supported-versions table, and from v3 the supported and finalized features
//! (tagged fields, [`crate::features`]) as Kafka answers them.
//!
//! v3+ carries the client's software name and version (KIP-511); each must match Kafka's pattern
//! `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`, else the answer is INVALID_REQUEST, as Kafka's: with the table at
//! v3, without it from v4 (what Kafka 4.4 answers, found by tests/differential_kafka.rs).

use std::sync::Arc;

use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse, RequestHeader};

use crate::broker::Broker;
use crate::codec::versions::SUPPORTED;
use crate::error::Error;
use crate::error_code;

/// The response with the error (if any) and every supported API.
pub fn response(error: Option<&Error>) -> ApiVersionsResponse {
    ApiVersionsResponse::default()
        .with_error_code(error_code::of_error(error))
        .with_api_keys(
            SUPPORTED
                .iter()
                .map(|(k, lo, hi)| {
                    ApiVersion::default()
                        .with_api_key(*k as i16)
                        .with_min_version(*lo)
                        .with_max_version(*hi)
                })
                .collect(),
        )
}

/// Whether `s` matches Kafka's client software name/version pattern `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
fn valid_software_field(s: &str) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    alnum(s.chars().next())
        && alnum(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

/// Answers ApiVersions.
pub async fn handle(
    broker: &Arc<Broker>,
    header: &RequestHeader,
    req: ApiVersionsRequest,
) -> ApiVersionsResponse {
    let version = header.request_api_version;
    let bad = [
        ("client_software_name", &req.client_software_name),
        ("client_software_version", &req.client_software_version),
    ]
    .into_iter()
    .find(|(_, v)| !valid_software_field(v));
    match bad {
        Some((field, value)) if version >= 3 => {
            let e = Error::Protocol {
                api: "ApiVersions".into(),
                message: format!(
                    "{field} {:?} does not match [a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?",
                    value.as_str()
                ),
            };
            tracing::debug!(%e, "ApiVersions refused");
            if version == 3 {
                response(Some(&e))
            } else {
                ApiVersionsResponse::default().with_error_code(error_code::code(&e))
            }
        }
        _ => with_features(broker, response(None)),
    }
}

/// `resp` with the supported and finalized features (written from v3, as tagged fields).
fn with_features(broker: &Broker, resp: ApiVersionsResponse) -> ApiVersionsResponse {
    let (finalized, epoch) = broker.features().finalized();
    resp.with_supported_features(
        crate::features::SUPPORTED
            .iter()
            .map(|(name, min, max)| {
                SupportedFeatureKey::default()
                    .with_name(super::sb(name.to_string()))
                    .with_min_version(*min)
                    .with_max_version(*max)
            })
            .collect(),
    )
    .with_finalized_features_epoch(epoch)
    .with_finalized_features(
        finalized
            .into_iter()
            .map(|(name, level)| {
                FinalizedFeatureKey::default()
                    .with_name(super::sb(name.to_string()))
                    .with_min_version_level(level)
                    .with_max_version_level(level)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::valid_software_field;

    #[test]
    fn software_fields_follow_kafkas_pattern() {
        for ok in ["librdkafka", "2.3.0", "apache-kafka-java", "a", "1-b.c"] {
            assert!(valid_software_field(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a.", "a b", "a_b", "a+b", "ü"] {
            assert!(!valid_software_field(bad), "{bad}");
        }
    }
}
