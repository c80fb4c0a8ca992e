//! DescribeClientQuotas (key 48): strata keeps no client quotas (AlterClientQuotas is not served, since nothing
//! would enforce them), so every valid filter matches nothing — what Kafka answers when no quota is set. It is
//! served because `kafka-configs.sh --entity-type users --describe` asks it before describing SCRAM credentials.
//! A filter Kafka refuses (unknown match type, a name missing for an exact match, an entity type twice, `ip`
//! together with `user` or `client-id`) is INVALID_REQUEST with Kafka's reason.

use std::sync::Arc;

use kafka_protocol::messages::describe_client_quotas_request::ComponentData;
use kafka_protocol::messages::{
    DescribeClientQuotasRequest, DescribeClientQuotasResponse, RequestHeader,
};

use super::sb;
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;

/// Kafka's `ClientQuotaFilterComponent` match types: exact name, the default entity, any entity.
const MATCH_EXACT: i8 = 0;
const MATCH_ANY: i8 = 2;

/// Why Kafka refuses the filter, if it does (`ClientQuotasImage.describe`'s checks).
fn invalid_filter(components: &[ComponentData]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for c in components {
        let entity = c.entity_type.as_str();
        if seen.contains(&entity) {
            return Some(format!(
                "entity type {entity} cannot appear more than once in the filter"
            ));
        }
        seen.push(entity);
        if !(MATCH_EXACT..=MATCH_ANY).contains(&c.match_type) {
            return Some(format!("unknown match type {}", c.match_type));
        }
        if c.match_type == MATCH_EXACT && c._match.is_none() {
            return Some(format!("an exact match of {entity} needs a name"));
        }
    }
    if seen.contains(&"ip") && (seen.contains(&"user") || seen.contains(&"client-id")) {
        return Some("ip cannot be combined with user or client-id in a filter".into());
    }
    None
}

/// Answers DescribeClientQuotas: no entries, or INVALID_REQUEST for a filter Kafka refuses.
pub async fn handle(
    _broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeClientQuotasRequest,
) -> DescribeClientQuotasResponse {
    let resp = DescribeClientQuotasResponse::default();
    match invalid_filter(&req.components) {
        None => resp.with_entries(Some(Vec::new())),
        Some(reason) => {
            let e = Error::Protocol {
                api: "DescribeClientQuotas".into(),
                message: reason,
            };
            resp.with_error_code(error_code::code(&e))
                .with_error_message(Some(sb(e.to_string())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(entity: &str, match_type: i8, name: Option<&str>) -> ComponentData {
        ComponentData::default()
            .with_entity_type(sb(entity))
            .with_match_type(match_type)
            .with_match(name.map(sb))
    }

    #[test]
    fn filters_kafka_accepts_match_nothing_and_the_others_are_refused_with_a_reason() {
        assert_eq!(invalid_filter(&[]), None, "no components: every entity");
        assert_eq!(invalid_filter(&[component("user", 0, Some("alice"))]), None);
        assert_eq!(
            invalid_filter(&[component("user", 1, None), component("client-id", 2, None)]),
            None
        );
        let refused = [
            vec![component("user", 0, None)],
            vec![component("user", 3, None)],
            vec![component("user", 2, None), component("user", 1, None)],
            vec![component("ip", 2, None), component("user", 2, None)],
        ];
        for f in refused {
            assert!(invalid_filter(&f).is_some(), "{f:?}");
        }
    }
}
