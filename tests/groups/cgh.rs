#![allow(dead_code)]
//! A raw KIP-848 member (ConsumerGroupHeartbeat v1) and ConsumerGroupDescribe, for tests that check Kafka's exact
//! epochs, assignments and error codes.

use std::collections::BTreeSet;

use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::{
    ApiKey, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, GroupId, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::common::raw::{connect, request};

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

/// One raw KIP-848 member.
pub struct Cgh {
    pub conn: tokio::net::TcpStream,
    pub group: String,
    pub id: String,
    pub epoch: i32,
    pub rebalance_timeout_ms: i32,
    pub owned: BTreeSet<(uuid::Uuid, i32)>,
}

impl Cgh {
    pub async fn new(addr: std::net::SocketAddr, group: &str) -> Cgh {
        Cgh {
            conn: connect(addr).await,
            group: group.into(),
            id: uuid::Uuid::new_v4().simple().to_string(),
            epoch: 0,
            rebalance_timeout_ms: 30_000,
            owned: BTreeSet::new(),
        }
    }

    pub async fn send(
        &mut self,
        req: ConsumerGroupHeartbeatRequest,
    ) -> ConsumerGroupHeartbeatResponse {
        let r: ConsumerGroupHeartbeatResponse =
            request(&mut self.conn, ApiKey::ConsumerGroupHeartbeat, 1, &req)
                .await
                .expect("heartbeat response");
        if r.error_code == 0 {
            self.epoch = r.member_epoch;
            if let Some(a) = &r.assignment {
                self.owned = a
                    .topic_partitions
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, *p)))
                    .collect();
            }
        }
        r
    }

    pub fn base(&self) -> ConsumerGroupHeartbeatRequest {
        ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s(&self.group)))
            .with_member_id(s(&self.id))
            .with_member_epoch(self.epoch)
            .with_rebalance_timeout_ms(-1)
    }

    pub async fn join(
        &mut self,
        topics: &[&str],
        regex: Option<&str>,
        assignor: Option<&str>,
    ) -> ConsumerGroupHeartbeatResponse {
        let req = self
            .base()
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(self.rebalance_timeout_ms)
            .with_subscribed_topic_names(Some(topics.iter().map(|t| TopicName(s(t))).collect()))
            .with_subscribed_topic_regex(regex.map(s))
            .with_server_assignor(assignor.map(s))
            .with_topic_partitions(Some(vec![]));
        self.send(req).await
    }

    /// A heartbeat reporting what the member owns.
    pub async fn beat(&mut self) -> ConsumerGroupHeartbeatResponse {
        let mut by_topic: std::collections::BTreeMap<uuid::Uuid, Vec<i32>> = Default::default();
        for (t, p) in &self.owned {
            by_topic.entry(*t).or_default().push(*p);
        }
        let owned = by_topic
            .into_iter()
            .map(|(t, ps)| {
                TopicPartitions::default()
                    .with_topic_id(t)
                    .with_partitions(ps)
            })
            .collect();
        let req = self.base().with_topic_partitions(Some(owned));
        self.send(req).await
    }
}

pub async fn describe(addr: std::net::SocketAddr, group: &str) -> ConsumerGroupDescribeResponse {
    let mut c = connect(addr).await;
    let req = ConsumerGroupDescribeRequest::default().with_group_ids(vec![GroupId(s(group))]);
    request(&mut c, ApiKey::ConsumerGroupDescribe, 0, &req)
        .await
        .expect("describe response")
}
