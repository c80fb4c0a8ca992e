//! Property tests: random sequences of legal and illegal writes against a simple model of Kafka's rules.
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use strata_metadata::{
    Error, InMemoryRemoteLogMetadataManager, RemoteLogMetadataManager, RemoteLogSegmentId,
    RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState,
    RemotePartitionDeleteMetadata, RemotePartitionDeleteState, TopicIdPartition, TopicPartition,
};
use uuid::Uuid;

const PARTITIONS: u8 = 2;
const SLOTS: u8 = 3;
const ATTEMPTS: u8 = 2;

type Key = (u8, u8, u8); // (partition, slot, attempt)

#[derive(Clone, Debug)]
enum Op {
    Add(Key),
    Update(Key, RemoteLogSegmentState),
    PartitionDelete(u8, RemotePartitionDeleteState),
}

fn op() -> impl Strategy<Value = Op> {
    let key = (0..PARTITIONS, 0..SLOTS, 0..ATTEMPTS);
    let seg_state = prop::sample::select(RemoteLogSegmentState::ALL.to_vec());
    let del_state = prop::sample::select(RemotePartitionDeleteState::ALL.to_vec());
    prop_oneof![
        4 => key.clone().prop_map(Op::Add),
        8 => (key, seg_state).prop_map(|(k, s)| Op::Update(k, s)),
        1 => (0..PARTITIONS, del_state).prop_map(|(p, s)| Op::PartitionDelete(p, s)),
    ]
}

fn tp(p: u8) -> TopicIdPartition {
    TopicIdPartition::new(
        Uuid::from_u128(0x5eed),
        TopicPartition::new("props", i32::from(p)),
    )
}

/// Slot `s` covers offsets `100s..=100s+99`; even slots hold epochs 0 and 1 (1 from +50), odd slots epoch 1.
fn epochs(slot: u8) -> BTreeMap<i32, i64> {
    let start = i64::from(slot) * 100;
    if slot & 1 == 0 {
        BTreeMap::from([(0, start), (1, start + 50)])
    } else {
        BTreeMap::from([(1, start)])
    }
}

fn seg_uuid((p, s, a): Key) -> Uuid {
    Uuid::from_u128(u128::from(p) << 16 | u128::from(s) << 8 | u128::from(a))
}

fn metadata(k: Key) -> RemoteLogSegmentMetadata {
    let start = i64::from(k.1) * 100;
    RemoteLogSegmentMetadata::new(
        RemoteLogSegmentId::new(tp(k.0), seg_uuid(k)),
        start,
        start + 99,
        0,
        0,
        0,
        100,
        epochs(k.1),
    )
    .unwrap()
}

fn epoch_end(slot: u8, epoch: i32) -> i64 {
    let e = epochs(slot);
    match e.range(epoch + 1..).next() {
        Some((_, &next)) => next - 1,
        None => i64::from(slot) * 100 + 99,
    }
}

#[derive(Default, Debug)]
struct Model {
    segs: BTreeMap<Key, RemoteLogSegmentState>,
    /// (partition, epoch, epoch start offset) → the finished segment serving it.
    map: BTreeMap<(u8, i32, i64), Key>,
    highest: BTreeMap<(u8, i32), i64>,
    deletes: BTreeMap<u8, RemotePartitionDeleteState>,
}

impl Model {
    /// Applies `op`; returns whether it is legal.
    fn apply(&mut self, op: &Op) -> bool {
        use RemoteLogSegmentState::*;
        match *op {
            Op::Add(k) => {
                let legal = matches!(self.segs.get(&k), None | Some(CopySegmentStarted));
                if legal {
                    self.segs.insert(k, CopySegmentStarted);
                }
                legal
            }
            Op::Update(k, to) => {
                let Some(&from) = self.segs.get(&k) else {
                    return false;
                };
                if to == CopySegmentStarted
                    || !RemoteLogSegmentState::is_valid_transition(Some(from), to)
                {
                    return false;
                }
                if from != to {
                    for (&e, &es) in &epochs(k.1) {
                        match to {
                            CopySegmentFinished => {
                                self.map.insert((k.0, e, es), k);
                                let end = epoch_end(k.1, e);
                                let h = self.highest.entry((k.0, e)).or_insert(end);
                                *h = (*h).max(end);
                            }
                            DeleteSegmentStarted if self.map.get(&(k.0, e, es)) == Some(&k) => {
                                self.map.remove(&(k.0, e, es));
                            }
                            _ => {}
                        }
                    }
                }
                if to == DeleteSegmentFinished {
                    self.segs.remove(&k);
                } else {
                    self.segs.insert(k, to);
                }
                self.drop_unreferenced_epochs();
                true
            }
            Op::PartitionDelete(p, to) => {
                if !RemotePartitionDeleteState::is_valid_transition(
                    self.deletes.get(&p).copied(),
                    to,
                ) {
                    return false;
                }
                if to == RemotePartitionDeleteState::DeletePartitionFinished {
                    self.segs.retain(|k, _| k.0 != p);
                    self.map.retain(|k, _| k.0 != p);
                    self.highest.retain(|k, _| k.0 != p);
                    self.deletes.remove(&p);
                } else {
                    self.deletes.insert(p, to);
                }
                true
            }
        }
    }

    fn drop_unreferenced_epochs(&mut self) {
        let live: BTreeSet<(u8, i32)> = self
            .segs
            .keys()
            .flat_map(|k| epochs(k.1).into_keys().map(move |e| (k.0, e)))
            .collect();
        self.highest.retain(|k, _| live.contains(k));
    }

    fn lookup(&self, p: u8, epoch: i32, offset: i64) -> Option<Key> {
        let (_, &k) = self
            .map
            .range((p, epoch, i64::MIN)..=(p, epoch, offset))
            .next_back()?;
        (epoch_end(k.1, epoch) >= offset).then_some(k)
    }
}

async fn apply(rlmm: &dyn RemoteLogMetadataManager, op: &Op) -> Result<(), Error> {
    match *op {
        Op::Add(k) => rlmm.add_remote_log_segment_metadata(metadata(k)).await,
        Op::Update(k, s) => {
            let u = RemoteLogSegmentMetadataUpdate::new(
                RemoteLogSegmentId::new(tp(k.0), seg_uuid(k)),
                1,
                s,
                0,
            );
            rlmm.update_remote_log_segment_metadata(u).await
        }
        Op::PartitionDelete(p, s) => {
            rlmm.put_remote_partition_delete_metadata(RemotePartitionDeleteMetadata::new(
                tp(p),
                s,
                1,
                0,
            ))
            .await
        }
    }
}

fn check_against_model(
    rlmm: &dyn RemoteLogMetadataManager,
    model: &Model,
) -> Result<(), TestCaseError> {
    for p in 0..PARTITIONS {
        let listed = rlmm.list_remote_log_segments(&tp(p)).unwrap();
        prop_assert!(
            listed
                .windows(2)
                .all(|w| w[0].start_offset <= w[1].start_offset),
            "list sorted"
        );
        let got: BTreeSet<(Uuid, RemoteLogSegmentState)> = listed
            .iter()
            .map(|m| (m.remote_log_segment_id.id, m.state))
            .collect();
        let want: BTreeSet<(Uuid, RemoteLogSegmentState)> = model
            .segs
            .iter()
            .filter(|(k, _)| k.0 == p)
            .map(|(&k, &s)| (seg_uuid(k), s))
            .collect();
        prop_assert_eq!(got, want, "segments of partition {}", p);
        for epoch in [0, 1] {
            prop_assert_eq!(
                rlmm.highest_offset_for_epoch(&tp(p), epoch).unwrap(),
                model.highest.get(&(p, epoch)).copied(),
                "highest offset of partition {} epoch {}",
                p,
                epoch
            );
            for slot in 0..SLOTS {
                let base = i64::from(slot) * 100;
                for offset in [base, base + 49, base + 50, base + 99] {
                    let got = rlmm
                        .remote_log_segment_metadata(&tp(p), epoch, offset)
                        .unwrap();
                    if let Some(m) = &got {
                        prop_assert_eq!(m.state, RemoteLogSegmentState::CopySegmentFinished);
                    }
                    prop_assert_eq!(
                        got.map(|m| m.remote_log_segment_id.id),
                        model.lookup(p, epoch, offset).map(seg_uuid),
                        "lookup p{} e{} o{}",
                        p,
                        epoch,
                        offset
                    );
                }
            }
        }
        prop_assert_eq!(
            rlmm.remote_partition_delete_metadata(&tp(p))
                .unwrap()
                .map(|d| d.state),
            model.deletes.get(&p).copied()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn in_memory_manager_follows_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let rlmm = InMemoryRemoteLogMetadataManager::new();
        let mut model = Model::default();
        let mut legal_seen = 0;
        for op in &ops {
            let result = rt.block_on(apply(&rlmm, op));
            let legal = model.apply(op);
            prop_assert_eq!(result.is_ok(), legal, "{:?} -> {:?}", op, result);
            legal_seen += usize::from(legal);
            check_against_model(&rlmm, &model)?;
        }
        prop_assert!(legal_seen >= 1 || !matches!(ops[0], Op::Add(_)), "the first add is always legal");
    }
}
