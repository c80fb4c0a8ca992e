//! Log-dir ownership: the `.lock` file held for a manager's lifetime, and `meta.properties`.
mod common;

use common::*;
use strata_storage::{Error, LogManager, LogManagerConfig};

fn open(dirs: &[&std::path::Path]) -> strata_storage::Result<LogManager> {
    LogManager::open(LogManagerConfig::new(
        dirs.iter().map(|d| d.to_path_buf()).collect(),
    ))
}

#[test]
fn a_second_manager_on_a_locked_dir_fails_naming_the_dir() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let first = open(&[b.path()]).unwrap();
    assert!(b.path().join(".lock").exists());

    let err = open(&[a.path(), b.path()]).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(&err, Error::Storage { dir, .. } if dir == b.path()),
        "{msg}"
    );
    assert!(
        msg.contains(&b.path().display().to_string()) && msg.contains("lock"),
        "{msg}"
    );
    // The failed open released the lock it took on the first dir.
    drop(open(&[a.path()]).unwrap());

    // Dropping the owner releases the lock.
    drop(first);
    let second = open(&[b.path()]).unwrap();
    assert!(open(&[b.path()]).is_err(), "locked again by the new owner");

    // So does a clean shutdown, even while the manager is still referenced.
    second.shutdown().unwrap();
    let third = open(&[b.path()]).unwrap();
    // The shut-down manager no longer writes checkpoints into the dir it gave up.
    second.flush_dirty_and_checkpoint(0).unwrap();
    second.run_retention(0).unwrap();
    drop(third);
}

#[test]
fn locked_dir_data_is_untouched_by_the_failed_open() {
    let dir = tempfile::tempdir().unwrap();
    let m = open_manager(dir.path());
    let log = log(&m, small_segments());
    log.append_as_leader(batch(3, 0), 0).unwrap();
    assert!(open(&[dir.path()]).is_err());
    log.append_as_leader(batch(2, 0), 0).unwrap();
    m.shutdown().unwrap();
    drop((log, m));
    let m = open_manager(dir.path());
    assert_eq!(m.get_log(&tp()).unwrap().log_end_offset(), 5);
}
