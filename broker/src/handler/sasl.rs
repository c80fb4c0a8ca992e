//! SaslHandshake (key 17) and SaslAuthenticate (key 36) where no SASL exchange is going on: on a PLAINTEXT or
//! SSL listener, and on a SASL listener once authenticated (re-authentication, KIP-368, is not implemented).
//! Kafka answers ILLEGAL_SASL_STATE there. The exchange itself is `crate::security::sasl`.

use std::sync::Arc;

use kafka_protocol::messages::{
    RequestHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Answers SaslHandshake outside a SASL exchange.
pub async fn handshake(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: SaslHandshakeRequest,
) -> SaslHandshakeResponse {
    let e = Error::IllegalSaslState(format!(
        "unexpected handshake request with client mechanism {}: no SASL exchange on this connection",
        req.mechanism.as_str()
    ));
    SaslHandshakeResponse::default().with_error_code(error_code::code(&e))
}

/// Answers SaslAuthenticate outside a SASL exchange.
pub async fn authenticate(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    _req: SaslAuthenticateRequest,
) -> SaslAuthenticateResponse {
    let e = Error::IllegalSaslState("no SASL exchange on this connection".into());
    SaslAuthenticateResponse::default()
        .with_error_code(error_code::code(&e))
        .with_error_message(Some(sb(e.to_string())))
}
