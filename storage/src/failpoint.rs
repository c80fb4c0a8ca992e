//! Crash points: named places between the individual writes of a durable step where a test can stop the process
//! as a power cut would (the crash loop, `tests/crash_loop.rs`; the list and how to run it: docs/TESTING.md).
//!
//! Built only with the `failpoints` cargo feature (the `fail` crate, tikv's fail-rs): without it
//! [`crash_point`] is an empty inline function and the hot paths are unchanged. With it, the binary reads the
//! `FAILPOINTS` environment variable at start (`name=3*off->return`: pass the point three times, abort the
//! process the fourth); the `return` action calls [`std::process::abort`] right there, so no destructor, flush
//! or shutdown hook runs after the write before it (a `panic` could be caught by the async runtime).

/// Every crash point, by the durable step it interrupts. A point is named `<owner>.<step>.<where>`.
pub const CRASH_POINTS: &[&str] = &[
    // Local log (storage).
    "segment.append.before_index",
    "segment.flush.before_offset_index",
    "segment.flush.before_time_index",
    "log.roll.before_flush",
    "log.roll.before_producer_snapshot",
    "log.create.before_sync",
    "log.roll.before_new_segment",
    "log.roll.before_dir_sync",
    "producer.snapshot.before_write",
    "leader_epoch.checkpoint.before_write",
    "log_start.checkpoint.before_write",
    "log.retention.after_rename_deleted",
    "cleaner.swap.cleaned_written",
    "cleaner.swap.swap_renamed",
    "cleaner.swap.first_old_deleted",
    "cleaner.swap.all_old_deleted",
    "cleaner.swap.swapped",
    "fsio.atomic_write.before_rename",
    "fsio.atomic_write.before_dir_sync",
    // Transactions and groups (broker).
    "txn.state.before_append",
    "txn.state.after_append",
    "txn.markers.before_first",
    "txn.markers.after_each",
    "txn.markers.before_complete",
    "group.offsets.before_append",
    "group.offsets.after_append",
    "group.txn_offsets.after_append",
    // Remote log metadata (metadata).
    "rlmm.before_append",
    "rlmm.before_flush",
    // Tiering (tiering).
    "rlm.copy.after_started",
    "rsm.upload.after_object",
    "rlm.copy.before_finished",
    "rlm.copy.after_finished",
    "rlm.delete.after_started",
    "rsm.delete.after_object",
    "rlm.delete.before_finished",
    // Broker stores.
    "registry.before_write",
    "scram.before_write",
    "scram.before_rename",
    "dynamic_config.before_write",
];

/// Stops the process here if the crash point `name` (one of [`CRASH_POINTS`]) is armed (`return` action).
#[inline(always)]
pub fn crash_point(name: &'static str) {
    #[cfg(feature = "failpoints")]
    if fail::eval(name, |_| ()).is_some() {
        eprintln!("strata: crash point {name} reached: aborting");
        std::process::abort();
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}

/// Arms the crash points named in the `FAILPOINTS` environment variable (the binary calls it once at start);
/// does nothing without the `failpoints` feature. The returned guard keeps them armed.
pub fn arm_from_env() -> Option<impl Sized> {
    #[cfg(feature = "failpoints")]
    {
        Some(fail::FailScenario::setup())
    }
    #[cfg(not(feature = "failpoints"))]
    {
        None::<()>
    }
}
