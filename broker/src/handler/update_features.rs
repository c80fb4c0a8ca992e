//! UpdateFeatures (key 57): `kafka-features upgrade|downgrade` and Admin's `updateFeatures` change a finalized
//! feature level ([`crate::features`]: `transaction.version` 0-2; `group.version` stays at 1). As Kafka's
//! controller: every update is checked first and one bad update fails them all (INVALID_UPDATE_VERSION with
//! Kafka's words); `validate_only` (v1+) checks without changing; a lower level needs a downgrade (v0's
//! `allow_downgrade`, v1+'s `upgrade_type` 2 safe or 3 unsafe); answers below v2 repeat the outcome per feature.

use std::sync::Arc;

use kafka_protocol::messages::update_features_response::UpdatableFeatureResult;
use kafka_protocol::messages::{RequestHeader, UpdateFeaturesRequest, UpdateFeaturesResponse};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error_code;
use crate::features::{FeatureError, TRANSACTION_VERSION};

/// INVALID_UPDATE_VERSION.
const INVALID_UPDATE_VERSION: i16 = 95;

/// Answers UpdateFeatures.
pub async fn handle(
    broker: &Arc<Broker>,
    h: &RequestHeader,
    req: UpdateFeaturesRequest,
) -> UpdateFeaturesResponse {
    let version = h.request_api_version;
    let names: Vec<String> = req
        .feature_updates
        .iter()
        .map(|u| u.feature.to_string())
        .collect();
    let features = broker.features().clone();
    let checked: Result<Vec<(String, i16)>, FeatureError> = req
        .feature_updates
        .iter()
        .map(|u| {
            let (feature, level) = (u.feature.to_string(), u.max_version_level);
            let downgrade = match (version, u.upgrade_type) {
                (0, _) => u.allow_downgrade,
                (_, 1) => false,
                (_, 2 | 3) => true,
                _ => return Err(FeatureError::UnknownUpgradeType { feature, level }),
            };
            features.check(&feature, level, downgrade)?;
            Ok((feature, level))
        })
        .collect();
    let (code, message) = match checked {
        Err(e) => (
            INVALID_UPDATE_VERSION,
            Some(format!(
                "The update failed for all features since the following feature had an error: {e}"
            )),
        ),
        Ok(_) if req.validate_only => (error_code::NONE, None),
        Ok(updates) => {
            let applied = blocking(move || {
                for (feature, level) in updates {
                    if feature == TRANSACTION_VERSION {
                        features.set_transaction_version(level)?;
                        tracing::info!(level, "transaction.version finalized");
                    }
                }
                Ok(())
            })
            .await;
            match applied {
                Ok(()) => (error_code::NONE, None),
                Err(e) => (error_code::code(&e), Some(error_code::message(&e))),
            }
        }
    };
    let results = if version < 2 {
        names
            .into_iter()
            .map(|n| {
                UpdatableFeatureResult::default()
                    .with_feature(sb(n))
                    .with_error_code(code)
                    .with_error_message(message.clone().map(sb))
            })
            .collect()
    } else {
        Vec::new()
    };
    UpdateFeaturesResponse::default()
        .with_error_code(code)
        .with_error_message(message.map(sb))
        .with_results(results)
}
