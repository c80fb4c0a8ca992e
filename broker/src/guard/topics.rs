//! Topic and config APIs (`KafkaApis.handleTopicMetadataRequest`, `ControllerApis`): Metadata shows only the topics
//! the principal may DESCRIBE (named ones it may not answer TOPIC_AUTHORIZATION_FAILED; auto-creation needs CREATE
//! on the cluster or the topic), CreateTopics CREATE (cluster or topic; the created topic's configs need
//! DESCRIBE_CONFIGS), DeleteTopics DELETE, CreatePartitions ALTER, DescribeConfigs DESCRIBE_CONFIGS and
//! AlterConfigs / IncrementalAlterConfigs ALTER_CONFIGS on the topic, group or cluster the resource names,
//! DescribeTopicPartitions DESCRIBE like Metadata.

use std::collections::HashSet;

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::{cluster_denied, denied, group_denied, split, topic_denied, Check, Guard, Guarded};
use crate::authz::acl::AclOperation::{self, *};
use crate::authz::acl::ResourceType;
use crate::error::Error;

impl Guarded for MetadataRequest {
    type Response = MetadataResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, MetadataResponse> {
        let cx = cx.clone();
        let cluster_ops = self.include_cluster_authorized_operations;
        let topic_ops = self.include_topic_authorized_operations;
        let all = self.topics.is_none()
            || (cx.version == 0 && self.topics.as_ref().is_some_and(|t| t.is_empty()));
        let mut refused = Vec::new();
        let mut shown: Option<HashSet<String>> = None;
        if !all {
            let creating = self.allow_auto_topic_creation
                && cx.broker.config().auto_create_topics_enable
                && !cx.cluster(Create);
            let mut set = HashSet::new();
            let (ok, no) = split(self.topics.take().unwrap_or_default(), |t| {
                let name = t
                    .name
                    .as_ref()
                    .map(|n| n.to_string())
                    .or_else(|| cx.topic_name(t.topic_id));
                // An unknown id is left to the handler (UNKNOWN_TOPIC_ID).
                let Some(n) = name else { return true };
                let ok = cx.topic(Describe, &n)
                    && !(creating
                        && cx.broker.registry().get(&n).is_none()
                        && !cx.topic(Create, &n));
                if ok {
                    set.insert(n);
                }
                ok
            });
            shown = Some(set);
            refused = no;
            self.topics = Some(ok);
        }
        Guard::then(self, move |r: &mut MetadataResponse| {
            r.topics.retain(|t| match (&t.name, &shown) {
                (Some(n), None) => cx.topic(Describe, n),
                (Some(n), Some(set)) => set.contains(n.as_str()) || t.error_code != 0,
                (None, _) => true,
            });
            for t in r
                .topics
                .iter_mut()
                .filter(|t| topic_ops && t.error_code == 0)
            {
                if let Some(n) = &t.name {
                    t.topic_authorized_operations = cx.operations(ResourceType::Topic, n);
                }
            }
            if cluster_ops {
                r.cluster_authorized_operations =
                    cx.operations(ResourceType::Cluster, crate::authz::acl::CLUSTER_NAME);
            }
            r.topics.extend(refused.into_iter().map(|t| {
                metadata_response::MetadataResponseTopic::default()
                    .with_error_code(topic_denied())
                    .with_name(t.name)
                    .with_topic_id(t.topic_id)
                    .with_topic_authorized_operations(i32::MIN)
            }));
        })
    }
}

/// DescribeTopicPartitions (`DescribeTopicPartitionsRequestHandler`): named topics the principal may not DESCRIBE
/// are answered TOPIC_AUTHORIZATION_FAILED (nil id, no partitions), after the others; when listing every topic the
/// handler leaves them out itself ([`super::topic_filter`]), so they do not count against the partition limit.
impl Guarded for DescribeTopicPartitionsRequest {
    type Response = DescribeTopicPartitionsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DescribeTopicPartitionsResponse> {
        use describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic as Topic;
        let cx = cx.clone();
        let cursor = self.cursor.as_ref().map(|c| c.topic_name.0.to_string());
        let from = cursor.clone().unwrap_or_default();
        // A cursor whose topic is not named or whose partition is negative is the handler's INVALID_REQUEST,
        // which names only what was named.
        let valid_cursor = self.cursor.as_ref().is_none_or(|c| {
            c.partition_index >= 0 && self.topics.iter().any(|t| t.name == c.topic_name)
        });
        let mut refused = Vec::new();
        if !self.topics.is_empty() && valid_cursor {
            // Names before the cursor's are never answered, and each name once.
            let mut seen = HashSet::new();
            let named: Vec<_> = std::mem::take(&mut self.topics)
                .into_iter()
                .filter(|t| t.name.0.as_str() >= from.as_str() && seen.insert(t.name.clone()))
                .collect();
            let (ok, no) = split(named, |t| cx.topic(Describe, &t.name));
            refused = no;
            if cursor.is_some_and(|c| !ok.iter().any(|t| t.name.0.as_str() == c)) {
                // The cursor's topic is denied: the others start at partition 0, as on Kafka.
                self.cursor = None;
            }
            self.topics = ok;
        }
        let denied: Vec<Topic> = refused
            .into_iter()
            .map(|t| {
                Topic::default()
                    .with_error_code(topic_denied())
                    .with_name(Some(t.name))
            })
            .collect();
        if self.topics.is_empty() && !denied.is_empty() {
            // Nothing left to describe (an empty list would mean every topic).
            return Guard::Answer(DescribeTopicPartitionsResponse::default().with_topics(denied));
        }
        Guard::then(self, move |r: &mut DescribeTopicPartitionsResponse| {
            // The entries the handler gave operations to (not its INVALID_REQUEST answer) get the principal's.
            for t in r
                .topics
                .iter_mut()
                .filter(|t| t.topic_authorized_operations != i32::MIN)
            {
                if let Some(n) = &t.name {
                    t.topic_authorized_operations = cx.operations(ResourceType::Topic, n);
                }
            }
            r.topics.extend(denied);
        })
    }
}

impl Guarded for CreateTopicsRequest {
    type Response = CreateTopicsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, CreateTopicsResponse> {
        let cx = cx.clone();
        let cluster = cx.cluster(Create);
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cluster || cx.topic(Create, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut CreateTopicsResponse| {
            for t in r.topics.iter_mut().filter(|t| t.error_code == 0) {
                if !cx.topic(DescribeConfigs, &t.name) {
                    t.topic_config_error_code = topic_denied();
                    t.configs = None;
                }
            }
            r.topics.extend(no.into_iter().map(|t| {
                create_topics_response::CreatableTopicResult::default()
                    .with_name(t.name)
                    .with_error_code(topic_denied())
                    .with_error_message(
                        (cx.version >= 1)
                            .then(|| StrBytes::from_static_str("Authorization failed.")),
                    )
                    .with_num_partitions(-1)
                    .with_replication_factor(-1)
            }));
        })
    }
}

impl Guarded for DeleteTopicsRequest {
    type Response = DeleteTopicsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DeleteTopicsResponse> {
        use delete_topics_response::DeletableTopicResult;
        let cluster = cx.cluster(Delete);
        let may = |name: &str| cluster || cx.topic(Delete, name);
        // v0-5 name topics in `topic_names`, v6+ in `topics` (by name or id).
        let (names, denied_names) = split(std::mem::take(&mut self.topic_names), |n| may(n));
        self.topic_names = names;
        let mut out: Vec<DeletableTopicResult> = denied_names
            .into_iter()
            .map(|n| DeletableTopicResult::default().with_name(Some(n)))
            .collect();
        let (states, denied_states) = split(std::mem::take(&mut self.topics), |t| {
            match t
                .name
                .as_ref()
                .map(|n| n.to_string())
                .or_else(|| cx.topic_name(t.topic_id))
            {
                Some(n) => may(&n),
                None => true,
            }
        });
        self.topics = states;
        out.extend(denied_states.into_iter().map(|t| {
            // A topic named by id is named in the answer only to whom may describe it.
            let name = t.name.or_else(|| {
                cx.topic_name(t.topic_id)
                    .filter(|n| cx.topic(Describe, n))
                    .map(|n| StrBytes::from_string(n).into())
            });
            DeletableTopicResult::default()
                .with_name(name)
                .with_topic_id(t.topic_id)
        }));
        for r in out.iter_mut() {
            r.error_code = topic_denied();
        }
        if out.is_empty() {
            return Guard::run(self);
        }
        Guard::then(self, move |r: &mut DeleteTopicsResponse| {
            r.responses.extend(out)
        })
    }
}

impl Guarded for CreatePartitionsRequest {
    type Response = CreatePartitionsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, CreatePartitionsResponse> {
        let (ok, no) = split(std::mem::take(&mut self.topics), |t| {
            cx.topic(Alter, &t.name)
        });
        self.topics = ok;
        Guard::then(self, move |r: &mut CreatePartitionsResponse| {
            r.results.extend(no.into_iter().map(|t| {
                let (code, message) = denied(Error::TopicAuthorizationFailed(t.name.to_string()));
                create_partitions_response::CreatePartitionsTopicResult::default()
                    .with_name(t.name)
                    .with_error_code(code)
                    .with_error_message(message)
            }))
        })
    }
}

/// Config resource types (`ConfigResource.Type`).
const TOPIC: i8 = 2;
const GROUP: i8 = 32;

/// Whether the principal may do `op` on a config resource, and the code when not.
fn config_access(
    cx: &Check,
    op: AclOperation,
    resource_type: i8,
    name: &str,
) -> Result<(), (i16, Error)> {
    match resource_type {
        TOPIC if !cx.topic(op, name) => {
            Err((topic_denied(), Error::TopicAuthorizationFailed(name.into())))
        }
        GROUP if !cx.group(op, name) => {
            Err((group_denied(), Error::GroupAuthorizationFailed(name.into())))
        }
        TOPIC | GROUP => Ok(()),
        // BROKER, BROKER_LOGGER, CLIENT_METRICS: the cluster's.
        _ if !cx.cluster(op) => Err((
            cluster_denied(),
            Error::ClusterAuthorizationFailed(op.to_string()),
        )),
        _ => Ok(()),
    }
}

/// (resource type, name, code, message) of each refused resource.
type Refused = Vec<(i8, StrBytes, i16, Option<StrBytes>)>;

fn refuse<T>(
    items: Vec<T>,
    cx: &Check,
    op: AclOperation,
    key: impl Fn(&T) -> (i8, StrBytes),
) -> (Vec<T>, Refused) {
    let mut refused = Vec::new();
    let ok = items
        .into_iter()
        .filter(|item| {
            let (rt, name) = key(item);
            match config_access(cx, op, rt, &name) {
                Ok(()) => true,
                Err((code, e)) => {
                    refused.push((rt, name, code, denied(e).1));
                    false
                }
            }
        })
        .collect();
    (ok, refused)
}

impl Guarded for DescribeConfigsRequest {
    type Response = DescribeConfigsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, DescribeConfigsResponse> {
        let (ok, no) = refuse(
            std::mem::take(&mut self.resources),
            cx,
            DescribeConfigs,
            |r| (r.resource_type, r.resource_name.clone()),
        );
        self.resources = ok;
        Guard::then(self, move |r: &mut DescribeConfigsResponse| {
            r.results
                .extend(no.into_iter().map(|(rt, name, code, message)| {
                    describe_configs_response::DescribeConfigsResult::default()
                        .with_resource_type(rt)
                        .with_resource_name(name)
                        .with_error_code(code)
                        .with_error_message(message)
                }))
        })
    }
}

impl Guarded for AlterConfigsRequest {
    type Response = AlterConfigsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, AlterConfigsResponse> {
        let (ok, no) = refuse(std::mem::take(&mut self.resources), cx, AlterConfigs, |r| {
            (r.resource_type, r.resource_name.clone())
        });
        self.resources = ok;
        Guard::then(self, move |r: &mut AlterConfigsResponse| {
            r.responses
                .extend(no.into_iter().map(|(rt, name, code, message)| {
                    alter_configs_response::AlterConfigsResourceResponse::default()
                        .with_resource_type(rt)
                        .with_resource_name(name)
                        .with_error_code(code)
                        .with_error_message(message)
                }))
        })
    }
}

impl Guarded for IncrementalAlterConfigsRequest {
    type Response = IncrementalAlterConfigsResponse;
    fn guard(mut self, cx: &Check) -> Guard<Self, IncrementalAlterConfigsResponse> {
        let (ok, no) = refuse(std::mem::take(&mut self.resources), cx, AlterConfigs, |r| {
            (r.resource_type, r.resource_name.clone())
        });
        self.resources = ok;
        Guard::then(self, move |r: &mut IncrementalAlterConfigsResponse| {
            r.responses
                .extend(no.into_iter().map(|(rt, name, code, message)| {
                    incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                        .with_resource_type(rt)
                        .with_resource_name(name)
                        .with_error_code(code)
                        .with_error_message(message)
                }))
        })
    }
}
