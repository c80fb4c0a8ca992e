//! ApiVersions (key 18): the supported-versions table. Feature fields stay at their defaults so they are not
//! written as tagged fields (librdkafka 2.0 misparses them).

use std::sync::Arc;

use kafka_protocol::messages::api_versions_response::ApiVersion;
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

/// Answers ApiVersions.
pub async fn handle(
    _broker: &Arc<Broker>,
    _header: &RequestHeader,
    _req: ApiVersionsRequest,
) -> ApiVersionsResponse {
    response(None)
}
