//! DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key 51): the SCRAM credentials of
//! `crate::security::scram`, as `kafka-configs.sh --alter --add-config 'SCRAM-SHA-256=[password=...]'` manages
//! them. Strata has no authorizer, so any client may call them (as on a Kafka broker without ACLs).

use std::sync::Arc;

use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse, RequestHeader,
};

use super::{blocking, sb};
use crate::broker::Broker;
use crate::error::Error;
use crate::error_code;
use crate::security::scram::Change;

/// Answers DescribeUserScramCredentials: every user when `users` is null or empty (Kafka's ScramImage; what
/// librdkafka sends for "all users"), else each named one (an unknown user RESOURCE_NOT_FOUND, a user named
/// twice DUPLICATE_RESOURCE).
pub async fn describe(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: DescribeUserScramCredentialsRequest,
) -> DescribeUserScramCredentialsResponse {
    let store = broker.scram();
    let names: Vec<String> = match &req.users {
        Some(u) if !u.is_empty() => u.iter().map(|n| n.name.to_string()).collect(),
        _ => store.users(),
    };
    let results = names
        .iter()
        .enumerate()
        .map(|(i, user)| {
            let result = if names[..i].contains(user) || names[i + 1..].contains(user) {
                Err(Error::DuplicateScramUser(user.clone()))
            } else {
                store.describe(user).ok_or_else(|| {
                    Error::ScramUserNotFound(format!("attempt to describe nonexistent user {user}"))
                })
            };
            let r = DescribeUserScramCredentialsResult::default().with_user(sb(user.clone()));
            match result {
                Ok(infos) => r.with_credential_infos(
                    infos
                        .into_iter()
                        .map(|(m, i)| {
                            CredentialInfo::default()
                                .with_mechanism(m)
                                .with_iterations(i)
                        })
                        .collect(),
                ),
                Err(e) => r
                    .with_error_code(error_code::code(&e))
                    .with_error_message(Some(sb(e.to_string()))),
            }
        })
        .collect();
    DescribeUserScramCredentialsResponse::default().with_results(results)
}

/// Answers AlterUserScramCredentials: the changes applied and persisted, one result per user.
pub async fn alter(
    broker: &Arc<Broker>,
    _h: &RequestHeader,
    req: AlterUserScramCredentialsRequest,
) -> AlterUserScramCredentialsResponse {
    let mut changes: Vec<Change> = req
        .upsertions
        .iter()
        .map(|u| {
            Change::Upsert(
                u.name.to_string(),
                u.mechanism,
                u.iterations,
                u.salt.to_vec(),
                u.salted_password.to_vec(),
            )
        })
        .collect();
    changes.extend(
        req.deletions
            .iter()
            .map(|d| Change::Delete(d.name.to_string(), d.mechanism)),
    );
    let users: Vec<String> = changes
        .iter()
        .map(|c| match c {
            Change::Upsert(u, ..) | Change::Delete(u, _) => u.clone(),
        })
        .collect();
    let store = broker.scram().clone();
    let outcome = blocking(move || store.alter(&changes)).await;
    let results = match outcome {
        Ok(per_user) => per_user
            .into_iter()
            .map(|(user, r)| {
                let res = AlterUserScramCredentialsResult::default().with_user(sb(user));
                match r {
                    Ok(()) => res,
                    Err(e) => res
                        .with_error_code(error_code::code(&e))
                        .with_error_message(Some(sb(e.to_string()))),
                }
            })
            .collect(),
        Err(e) => {
            let mut seen: Vec<String> = Vec::new();
            users
                .into_iter()
                .filter(|u| {
                    let new = !seen.contains(u);
                    seen.push(u.clone());
                    new
                })
                .map(|u| {
                    AlterUserScramCredentialsResult::default()
                        .with_user(sb(u))
                        .with_error_code(error_code::code(&e))
                        .with_error_message(Some(sb(e.to_string())))
                })
                .collect()
        }
    };
    AlterUserScramCredentialsResponse::default().with_results(results)
}
