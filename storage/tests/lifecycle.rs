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

fn props(dir: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    std::fs::read_to_string(dir.join("meta.properties"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn open_as(
    dirs: &[&std::path::Path],
    node_id: i32,
    cluster_id: Option<&str>,
) -> strata_storage::Result<LogManager> {
    let mut c = LogManagerConfig::new(dirs.iter().map(|d| d.to_path_buf()).collect());
    c.node_id = node_id;
    c.cluster_id = cluster_id.map(str::to_string);
    LogManager::open(c)
}

#[test]
fn meta_properties_are_written_on_first_start_and_keep_the_cluster_id() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let m = open(&[a.path(), b.path()]).unwrap();
    let id = m.cluster_id().to_string();
    assert_eq!(m.node_id(), 1);
    assert_eq!(id.len(), 22);
    assert!(strata_storage::parse_kafka_uuid(&id).is_some(), "{id}");
    let (pa, pb) = (props(a.path()), props(b.path()));
    for p in [&pa, &pb] {
        assert_eq!(p["version"], "1");
        assert_eq!(p["node.id"], "1");
        assert_eq!(p["cluster.id"], id);
        assert_eq!(p["directory.id"].len(), 22);
    }
    assert_ne!(
        pa["directory.id"], pb["directory.id"],
        "one directory id per dir"
    );
    m.shutdown().unwrap();
    drop(m);
    // Restart: the same ids, files unchanged.
    let m = open(&[a.path(), b.path()]).unwrap();
    assert_eq!(m.cluster_id(), id);
    assert_eq!(props(a.path()), pa);
    m.shutdown().unwrap();
    drop(m);
    // A new empty dir joins with the existing cluster id.
    let c = tempfile::tempdir().unwrap();
    let m = open(&[a.path(), b.path(), c.path()]).unwrap();
    assert_eq!(props(c.path())["cluster.id"], id);
    drop(m);
}

#[test]
fn a_dir_of_another_node_or_cluster_fails_the_open_clearly() {
    let a = tempfile::tempdir().unwrap();
    let m = open_as(&[a.path()], 3, Some("MkU3OEVBNTcwNTJENDM2Qg")).unwrap();
    assert_eq!(m.cluster_id(), "MkU3OEVBNTcwNTJENDM2Qg");
    assert_eq!(props(a.path())["node.id"], "3");
    drop(m);

    let err = open_as(&[a.path()], 4, None).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(&err, Error::Storage { dir, .. } if dir == a.path()),
        "{msg}"
    );
    assert!(
        msg.contains("node.id 3") && msg.contains("node.id is 4"),
        "{msg}"
    );

    let other = strata_storage::kafka_uuid_string(uuid::Uuid::from_u128(9));
    let err = open_as(&[a.path()], 3, Some(&other))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cluster.id") && err.contains(&other), "{err}");

    // Two dirs from different clusters.
    let b = tempfile::tempdir().unwrap();
    drop(open_as(&[b.path()], 3, Some(&other)).unwrap());
    let err = open_as(&[a.path(), b.path()], 3, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MkU3OEVBNTcwNTJENDM2Qg") && err.contains(&other),
        "{err}"
    );

    // A malformed configured id or node id is a config error; nothing is written.
    let c = tempfile::tempdir().unwrap();
    let err = open_as(&[c.path()], 1, Some("not-a-uuid")).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig { key, .. } if key == "cluster.id"),
        "{err}"
    );
    let err = open_as(&[c.path()], -1, None).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig { key, .. } if key == "node.id"),
        "{err}"
    );
    assert!(!c.path().join("meta.properties").exists());

    // The files on disk were never touched by the failed opens.
    assert_eq!(props(a.path())["node.id"], "3");
    assert_eq!(props(a.path())["cluster.id"], "MkU3OEVBNTcwNTJENDM2Qg");
}
