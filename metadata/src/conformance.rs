//! The RLMM conformance suite: one set of behaviours every [`RemoteLogMetadataManager`] must show.
//!
//! Run [`rlmm_conformance`] against a fresh or used manager (each check uses its own random topic id, so
//! checks do not see each other's data). Failures panic with a message naming the check, like
//! `object_store`'s `put_get_delete_list`. Used by this crate's tests for both managers and available to
//! other crates' tests (e.g. a wrapper that injects faults must still pass it).
use std::collections::{BTreeMap, HashSet};

use strata_storage::{TopicIdPartition, TopicPartition};
use uuid::Uuid;

use crate::{
    CustomMetadata, Error, RemoteLogMetadataManager, RemoteLogSegmentId, RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState, RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
};
use RemoteLogSegmentState::*;

const BROKER: i32 = 1;

/// A fresh partition (random topic id) of topic `name`.
pub fn fresh_partition(name: &str, partition: i32) -> TopicIdPartition {
    TopicIdPartition::new(Uuid::new_v4(), TopicPartition::new(name, partition))
}

/// Metadata of a new attempt covering `start..=end`, with `epochs` (epoch → start offset) and size `end-start+1`.
pub fn segment(
    tp: &TopicIdPartition,
    start: i64,
    end: i64,
    epochs: &[(i32, i64)],
) -> RemoteLogSegmentMetadata {
    RemoteLogSegmentMetadata::new(
        RemoteLogSegmentId::generate_new(tp.clone()),
        start,
        end,
        1_700_000_000_000 + end,
        BROKER,
        1_700_000_000_000,
        u64::try_from(end - start + 1).expect("end >= start"),
        epochs.iter().copied().collect::<BTreeMap<_, _>>(),
    )
    .expect("valid test segment")
}

/// An update of `m` to `state`.
pub fn update(
    m: &RemoteLogSegmentMetadata,
    state: RemoteLogSegmentState,
) -> RemoteLogSegmentMetadataUpdate {
    RemoteLogSegmentMetadataUpdate::new(
        m.remote_log_segment_id.clone(),
        1_700_000_000_001,
        state,
        BROKER,
    )
}

fn ids(v: &[RemoteLogSegmentMetadata]) -> Vec<Uuid> {
    v.iter().map(|m| m.remote_log_segment_id.id).collect()
}

/// Runs every check below.
pub async fn rlmm_conformance(rlmm: &dyn RemoteLogMetadataManager) {
    segment_lifecycle(rlmm).await;
    rejected_writes_change_nothing(rlmm).await;
    self_transitions_are_idempotent(rlmm).await;
    lookup_by_epoch_and_offset(rlmm).await;
    later_upload_replaces_earlier_at_same_offset(rlmm).await;
    abandoned_copy_is_cleaned_up(rlmm).await;
    partition_delete_lifecycle(rlmm).await;
    stopped_partitions_refuse_reads(rlmm).await;
    next_segment_with_txn_index(rlmm).await;
    partitions_are_isolated(rlmm).await;
}

/// STARTED → FINISHED → DELETE_STARTED → DELETE_FINISHED, with what each read sees at each step.
pub async fn segment_lifecycle(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("lifecycle", 0);
    let m = segment(&tp, 0, 99, &[(0, 0)]);
    assert!(
        rlmm.list_remote_log_segments(&tp).unwrap().is_empty(),
        "segment_lifecycle: fresh partition is empty"
    );
    assert!(
        rlmm.is_ready(&tp),
        "segment_lifecycle: a fresh partition is ready"
    );

    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .expect("segment_lifecycle: add");
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap(),
        vec![m.clone()],
        "segment_lifecycle: listed after add"
    );
    assert_eq!(
        rlmm.list_remote_log_segments_for_epoch(&tp, 0).unwrap(),
        vec![m.clone()]
    );
    assert_eq!(
        rlmm.remote_log_segment_metadata(&tp, 0, 50).unwrap(),
        None,
        "segment_lifecycle: STARTED not read"
    );
    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0).unwrap(), None);
    assert_eq!(
        rlmm.remote_log_size(&tp, 0).unwrap(),
        100,
        "segment_lifecycle: STARTED counts in size"
    );

    rlmm.update_remote_log_segment_metadata(update(&m, CopySegmentFinished))
        .await
        .expect("segment_lifecycle: finish");
    let finished = rlmm
        .remote_log_segment_metadata(&tp, 0, 50)
        .unwrap()
        .expect("segment_lifecycle: read finished");
    assert_eq!(finished.state, CopySegmentFinished);
    assert_eq!(
        finished.event_timestamp_ms, 1_700_000_000_001,
        "segment_lifecycle: update fields applied"
    );
    assert_eq!((finished.start_offset, finished.end_offset), (0, 99));
    assert_eq!(
        rlmm.remote_log_segment_metadata(&tp, 0, 100).unwrap(),
        None,
        "segment_lifecycle: past end"
    );
    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0).unwrap(), Some(99));

    rlmm.update_remote_log_segment_metadata(update(&m, DeleteSegmentStarted))
        .await
        .expect("segment_lifecycle: del");
    assert_eq!(
        rlmm.remote_log_segment_metadata(&tp, 0, 50).unwrap(),
        None,
        "segment_lifecycle: deleting not read"
    );
    let listed = rlmm.list_remote_log_segments(&tp).unwrap();
    assert_eq!(
        ids(&listed),
        vec![m.remote_log_segment_id.id],
        "segment_lifecycle: deleting still listed"
    );
    assert_eq!(listed[0].state, DeleteSegmentStarted);
    assert_eq!(
        rlmm.highest_offset_for_epoch(&tp, 0).unwrap(),
        Some(99),
        "segment_lifecycle: highest kept"
    );

    rlmm.update_remote_log_segment_metadata(update(&m, DeleteSegmentFinished))
        .await
        .expect("segment_lifecycle: gone");
    assert!(
        rlmm.list_remote_log_segments(&tp).unwrap().is_empty(),
        "segment_lifecycle: finished deletes vanish"
    );
    assert!(rlmm
        .list_remote_log_segments_for_epoch(&tp, 0)
        .unwrap()
        .is_empty());
    assert_eq!(rlmm.remote_log_size(&tp, 0).unwrap(), 0);
    let err = rlmm
        .update_remote_log_segment_metadata(update(&m, DeleteSegmentFinished))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::UnknownSegment { .. }),
        "segment_lifecycle: forgotten segment is unknown: {err}"
    );
}

/// Every kind of rejected write fails with its error and leaves reads unchanged.
pub async fn rejected_writes_change_nothing(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("rejects", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    rlmm.update_remote_log_segment_metadata(update(&m, CopySegmentFinished))
        .await
        .unwrap();
    let before = rlmm.list_remote_log_segments(&tp).unwrap();

    rejected_state_changes(rlmm, &tp, &m).await;
    rejected_invalid_metadata(rlmm, &tp, &m).await;
    rejected_partition_delete_transitions(rlmm, &tp).await;

    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap(),
        before,
        "rejects: nothing changed"
    );
    assert_eq!(rlmm.remote_partition_delete_metadata(&tp).unwrap(), None);
    assert_eq!(
        rlmm.remote_log_segment_metadata(&tp, 0, 5)
            .unwrap()
            .map(|m| m.state),
        Some(CopySegmentFinished)
    );
}

/// Part of [`rejected_writes_change_nothing`]: writes that break the segment state machine (`m` is FINISHED).
async fn rejected_state_changes(
    rlmm: &dyn RemoteLogMetadataManager,
    tp: &TopicIdPartition,
    m: &RemoteLogSegmentMetadata,
) {
    // add must be COPY_SEGMENT_STARTED
    let mut finished_add = segment(tp, 10, 19, &[(0, 10)]);
    finished_add.state = CopySegmentFinished;
    let err = rlmm
        .add_remote_log_segment_metadata(finished_add)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidMetadata { .. }),
        "rejects: add in FINISHED: {err}"
    );
    // re-adding a finished segment would move it back to STARTED
    let err = rlmm
        .add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidStateTransition {
                from: Some(CopySegmentFinished),
                to: CopySegmentStarted,
                ..
            }
        ),
        "rejects: re-add of finished: {err}"
    );
    // an update can never set COPY_SEGMENT_STARTED
    let err = rlmm
        .update_remote_log_segment_metadata(update(m, CopySegmentStarted))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidMetadata { .. }),
        "rejects: update to STARTED: {err}"
    );
    // FINISHED → DELETE_FINISHED skips DELETE_STARTED
    let err = rlmm
        .update_remote_log_segment_metadata(update(m, DeleteSegmentFinished))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidStateTransition { .. }),
        "rejects: skip a state: {err}"
    );
    // unknown segment
    let stranger = segment(tp, 20, 29, &[(0, 20)]);
    let err = rlmm
        .update_remote_log_segment_metadata(update(&stranger, CopySegmentFinished))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::UnknownSegment { .. }),
        "rejects: unknown segment: {err}"
    );
    assert!(
        err.to_string()
            .contains(&stranger.remote_log_segment_id.id.to_string()),
        "error names the id: {err}"
    );
}

/// Part of [`rejected_writes_change_nothing`]: metadata breaking an invariant (offsets, epochs, custom size).
async fn rejected_invalid_metadata(
    rlmm: &dyn RemoteLogMetadataManager,
    tp: &TopicIdPartition,
    m: &RemoteLogSegmentMetadata,
) {
    let mut bad = segment(tp, 30, 39, &[(0, 30)]);
    bad.end_offset = 29;
    let err = rlmm.add_remote_log_segment_metadata(bad).await.unwrap_err();
    assert!(
        matches!(err, Error::InvalidMetadata { .. }),
        "rejects: end below start: {err}"
    );
    let mut bad = segment(tp, 30, 39, &[(0, 30)]);
    bad.segment_leader_epochs.clear();
    let err = rlmm.add_remote_log_segment_metadata(bad).await.unwrap_err();
    assert!(
        matches!(err, Error::InvalidMetadata { .. }),
        "rejects: no epochs: {err}"
    );
    let mut big = update(m, DeleteSegmentStarted);
    big.custom_metadata = Some(CustomMetadata(vec![
        7;
        crate::CUSTOM_METADATA_MAX_BYTES + 1
    ]));
    let err = rlmm
        .update_remote_log_segment_metadata(big)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidMetadata { .. }),
        "rejects: oversized custom metadata: {err}"
    );
}

/// Part of [`rejected_writes_change_nothing`]: illegal partition-delete transitions.
async fn rejected_partition_delete_transitions(
    rlmm: &dyn RemoteLogMetadataManager,
    tp: &TopicIdPartition,
) {
    let err = rlmm
        .put_remote_partition_delete_metadata(RemotePartitionDeleteMetadata::new(
            tp.clone(),
            RemotePartitionDeleteState::DeletePartitionStarted,
            1,
            BROKER,
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidPartitionDeleteTransition { from: None, .. }
        ),
        "rejects: STARTED first: {err}"
    );
}

/// Repeating any write (a retry) succeeds and changes nothing but the repeated fields.
pub async fn self_transitions_are_idempotent(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("idempotent", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .expect("idempotent: re-add while STARTED");
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap().len(),
        1,
        "idempotent: one segment after re-add"
    );
    for state in [
        CopySegmentFinished,
        CopySegmentFinished,
        DeleteSegmentStarted,
        DeleteSegmentStarted,
    ] {
        rlmm.update_remote_log_segment_metadata(update(&m, state))
            .await
            .expect("idempotent: repeat update");
        let listed = rlmm.list_remote_log_segments(&tp).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, state);
    }
    let mut with_custom = update(&m, DeleteSegmentStarted);
    with_custom.custom_metadata = Some(CustomMetadata(b"rsm".to_vec()));
    rlmm.update_remote_log_segment_metadata(with_custom)
        .await
        .unwrap();
    let listed = rlmm.list_remote_log_segments(&tp).unwrap();
    assert_eq!(
        listed[0].custom_metadata,
        Some(CustomMetadata(b"rsm".to_vec())),
        "idempotent: custom metadata kept"
    );
}

/// Lookups, highest offsets, lists and sizes across two segments and two leader epochs.
pub async fn lookup_by_epoch_and_offset(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("lookup", 3);
    let a = segment(&tp, 0, 99, &[(0, 0), (1, 50)]);
    let b = segment(&tp, 100, 199, &[(1, 100)]);
    let c = segment(&tp, 200, 299, &[(1, 200), (3, 250)]);
    for m in [&c, &a, &b] {
        rlmm.add_remote_log_segment_metadata(m.clone())
            .await
            .unwrap();
    }
    for m in [&a, &b] {
        rlmm.update_remote_log_segment_metadata(update(m, CopySegmentFinished))
            .await
            .unwrap();
    }
    let at = |epoch, offset| {
        rlmm.remote_log_segment_metadata(&tp, epoch, offset)
            .unwrap()
            .map(|m| m.start_offset)
    };
    assert_eq!(at(0, 0), Some(0), "lookup: first offset");
    assert_eq!(at(0, 49), Some(0), "lookup: last offset of epoch 0");
    assert_eq!(at(0, 50), None, "lookup: offset 50 belongs to epoch 1");
    assert_eq!(at(1, 50), Some(0));
    assert_eq!(at(1, 99), Some(0));
    assert_eq!(at(1, 100), Some(100), "lookup: second segment");
    assert_eq!(at(1, 199), Some(100));
    assert_eq!(at(1, 200), None, "lookup: third segment not finished");
    assert_eq!(at(2, 150), None, "lookup: unknown epoch");
    assert_eq!(at(1, -1), None);

    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0).unwrap(), Some(49));
    assert_eq!(
        rlmm.highest_offset_for_epoch(&tp, 1).unwrap(),
        Some(199),
        "lookup: STARTED segment not counted"
    );
    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 3).unwrap(), None);
    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 9).unwrap(), None);

    let all = rlmm.list_remote_log_segments(&tp).unwrap();
    assert_eq!(
        ids(&all),
        ids(&[a.clone(), b.clone(), c.clone()]),
        "lookup: listed in offset order"
    );
    assert_eq!(
        ids(&rlmm.list_remote_log_segments_for_epoch(&tp, 0).unwrap()),
        ids(std::slice::from_ref(&a))
    );
    assert_eq!(
        ids(&rlmm.list_remote_log_segments_for_epoch(&tp, 1).unwrap()),
        ids(&[a, b, c.clone()])
    );
    assert_eq!(
        ids(&rlmm.list_remote_log_segments_for_epoch(&tp, 3).unwrap()),
        ids(&[c])
    );
    assert!(rlmm
        .list_remote_log_segments_for_epoch(&tp, 2)
        .unwrap()
        .is_empty());
    assert_eq!(
        rlmm.remote_log_size(&tp, 1).unwrap(),
        300,
        "lookup: size of epoch 1"
    );
    assert_eq!(rlmm.remote_log_size(&tp, 0).unwrap(), 100);
}

/// A second upload of the same offsets (after a leader change) serves reads; both stay listed.
pub async fn later_upload_replaces_earlier_at_same_offset(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("replace", 0);
    let first = segment(&tp, 0, 99, &[(0, 0)]);
    let second = segment(&tp, 0, 99, &[(0, 0)]);
    for m in [&first, &second] {
        rlmm.add_remote_log_segment_metadata(m.clone())
            .await
            .unwrap();
        rlmm.update_remote_log_segment_metadata(update(m, CopySegmentFinished))
            .await
            .unwrap();
    }
    let hit = rlmm
        .remote_log_segment_metadata(&tp, 0, 10)
        .unwrap()
        .expect("replace: read");
    assert_eq!(
        hit.remote_log_segment_id, second.remote_log_segment_id,
        "replace: latest finished upload wins"
    );
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap().len(),
        2,
        "replace: the replaced one is still listed"
    );
    assert_eq!(
        rlmm.list_remote_log_segments_for_epoch(&tp, 0)
            .unwrap()
            .len(),
        2
    );
    // deleting the replaced one does not unmap the live one
    rlmm.update_remote_log_segment_metadata(update(&first, DeleteSegmentStarted))
        .await
        .unwrap();
    rlmm.update_remote_log_segment_metadata(update(&first, DeleteSegmentFinished))
        .await
        .unwrap();
    let hit = rlmm
        .remote_log_segment_metadata(&tp, 0, 10)
        .unwrap()
        .expect("replace: read after deleting old");
    assert_eq!(hit.remote_log_segment_id, second.remote_log_segment_id);
}

/// A failed copy: STARTED → DELETE_STARTED → DELETE_FINISHED, never readable.
pub async fn abandoned_copy_is_cleaned_up(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("abandoned", 0);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    rlmm.update_remote_log_segment_metadata(update(&m, DeleteSegmentStarted))
        .await
        .expect("abandoned: STARTED→DEL");
    assert_eq!(rlmm.remote_log_segment_metadata(&tp, 0, 5).unwrap(), None);
    assert_eq!(
        rlmm.highest_offset_for_epoch(&tp, 0).unwrap(),
        None,
        "abandoned: never counted as copied"
    );
    rlmm.update_remote_log_segment_metadata(update(&m, DeleteSegmentFinished))
        .await
        .unwrap();
    assert!(rlmm.list_remote_log_segments(&tp).unwrap().is_empty());
    // a fresh attempt (new UUID) for the same offsets works
    let retry = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(retry.clone())
        .await
        .unwrap();
    rlmm.update_remote_log_segment_metadata(update(&retry, CopySegmentFinished))
        .await
        .unwrap();
    assert_eq!(rlmm.highest_offset_for_epoch(&tp, 0).unwrap(), Some(9));
}

/// MARKED → STARTED → FINISHED; FINISHED forgets the partition's segments and delete state.
pub async fn partition_delete_lifecycle(rlmm: &dyn RemoteLogMetadataManager) {
    use RemotePartitionDeleteState::*;
    let tp = fresh_partition("partition-delete", 1);
    let other = fresh_partition("partition-delete", 2);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    let kept = segment(&other, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    rlmm.add_remote_log_segment_metadata(kept.clone())
        .await
        .unwrap();
    let put =
        |state| RemotePartitionDeleteMetadata::new(tp.clone(), state, 1_700_000_000_002, BROKER);

    rlmm.put_remote_partition_delete_metadata(put(DeletePartitionMarked))
        .await
        .expect("partition-delete: mark");
    assert_eq!(
        rlmm.remote_partition_delete_metadata(&tp)
            .unwrap()
            .map(|d| d.state),
        Some(DeletePartitionMarked)
    );
    let err = rlmm
        .put_remote_partition_delete_metadata(put(DeletePartitionFinished))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidPartitionDeleteTransition { .. }),
        "partition-delete: skip: {err}"
    );
    rlmm.put_remote_partition_delete_metadata(put(DeletePartitionMarked))
        .await
        .expect("partition-delete: re-mark");
    rlmm.put_remote_partition_delete_metadata(put(DeletePartitionStarted))
        .await
        .expect("partition-delete: start");
    let err = rlmm
        .put_remote_partition_delete_metadata(put(DeletePartitionMarked))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidPartitionDeleteTransition { .. }),
        "partition-delete: backwards: {err}"
    );
    assert_eq!(
        rlmm.list_remote_log_segments(&tp).unwrap().len(),
        1,
        "partition-delete: segments until FINISHED"
    );
    rlmm.update_remote_log_segment_metadata(update(&m, DeleteSegmentStarted))
        .await
        .unwrap();
    rlmm.put_remote_partition_delete_metadata(put(DeletePartitionFinished))
        .await
        .expect("partition-delete: finish");
    assert!(
        rlmm.list_remote_log_segments(&tp).unwrap().is_empty(),
        "partition-delete: segments forgotten"
    );
    assert_eq!(
        rlmm.remote_partition_delete_metadata(&tp).unwrap(),
        None,
        "partition-delete: state forgotten"
    );
    assert_eq!(
        rlmm.list_remote_log_segments(&other).unwrap().len(),
        1,
        "partition-delete: other partition kept"
    );
    rlmm.put_remote_partition_delete_metadata(put(DeletePartitionMarked))
        .await
        .expect("partition-delete: again");
}

/// `on_stop_partitions` refuses reads of those partitions until a leadership change names them again.
pub async fn stopped_partitions_refuse_reads(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("stopped", 0);
    let other = fresh_partition("stopped", 1);
    let m = segment(&tp, 0, 9, &[(0, 0)]);
    rlmm.add_remote_log_segment_metadata(m.clone())
        .await
        .unwrap();
    rlmm.on_stop_partitions(&HashSet::from([tp.clone()]));
    assert!(!rlmm.is_ready(&tp), "stopped: not ready");
    assert!(
        rlmm.is_ready(&other),
        "stopped: other partitions unaffected"
    );
    let err = rlmm.list_remote_log_segments(&tp).unwrap_err();
    assert!(
        matches!(err, Error::PartitionStopped { .. }),
        "stopped: list refused: {err}"
    );
    assert!(matches!(
        rlmm.remote_log_segment_metadata(&tp, 0, 1),
        Err(Error::PartitionStopped { .. })
    ));
    assert!(matches!(
        rlmm.highest_offset_for_epoch(&tp, 0),
        Err(Error::PartitionStopped { .. })
    ));
    rlmm.update_remote_log_segment_metadata(update(&m, CopySegmentFinished))
        .await
        .expect("stopped: writes accepted");
    rlmm.on_partition_leadership_changes(&HashSet::from([tp.clone()]), &HashSet::new());
    assert!(rlmm.is_ready(&tp), "stopped: resumed");
    assert_eq!(
        rlmm.highest_offset_for_epoch(&tp, 0).unwrap(),
        Some(9),
        "stopped: write made while stopped is seen"
    );
}

/// KIP-1058: skip finished segments whose transaction index is empty.
pub async fn next_segment_with_txn_index(rlmm: &dyn RemoteLogMetadataManager) {
    let tp = fresh_partition("txn", 0);
    let mut a = segment(&tp, 0, 9, &[(0, 0)]);
    a.txn_idx_empty = true;
    let mut b = segment(&tp, 10, 19, &[(0, 10)]);
    b.txn_idx_empty = true;
    let c = segment(&tp, 20, 29, &[(0, 20)]);
    for m in [&a, &b, &c] {
        rlmm.add_remote_log_segment_metadata(m.clone())
            .await
            .unwrap();
        rlmm.update_remote_log_segment_metadata(update(m, CopySegmentFinished))
            .await
            .unwrap();
    }
    let next = rlmm
        .next_segment_with_txn_index(&tp, 0, 3)
        .unwrap()
        .map(|m| m.start_offset);
    assert_eq!(next, Some(20), "txn: skips empty transaction indexes");
    assert_eq!(
        rlmm.next_segment_with_txn_index(&tp, 0, 25)
            .unwrap()
            .map(|m| m.start_offset),
        Some(20)
    );
    assert_eq!(
        rlmm.next_segment_with_txn_index(&tp, 0, 30).unwrap(),
        None,
        "txn: nothing past the end"
    );
}

/// Same segment offsets in two partitions of the same topic do not mix.
pub async fn partitions_are_isolated(rlmm: &dyn RemoteLogMetadataManager) {
    let p0 = fresh_partition("isolated", 0);
    let p1 = TopicIdPartition::new(p0.topic_id, TopicPartition::new("isolated", 1));
    let a = segment(&p0, 0, 9, &[(0, 0)]);
    let b = segment(&p1, 0, 19, &[(0, 0)]);
    for m in [&a, &b] {
        rlmm.add_remote_log_segment_metadata(m.clone())
            .await
            .unwrap();
        rlmm.update_remote_log_segment_metadata(update(m, CopySegmentFinished))
            .await
            .unwrap();
    }
    assert_eq!(
        rlmm.highest_offset_for_epoch(&p0, 0).unwrap(),
        Some(9),
        "isolated: partition 0"
    );
    assert_eq!(
        rlmm.highest_offset_for_epoch(&p1, 0).unwrap(),
        Some(19),
        "isolated: partition 1"
    );
    assert_eq!(ids(&rlmm.list_remote_log_segments(&p1).unwrap()), ids(&[b]));
}
