//! Per-group configs (Kafka 4.0's `GroupConfig`, KIP-848 / KIP-932): the overrides set by IncrementalAlterConfigs /
//! AlterConfigs on a GROUP resource, by group id. Kept in the metadata dir (`strata-group-configs.json`, written
//! atomically before the change is visible), as Kafka keeps them in its metadata log, and loaded at start. A group's
//! configs exist apart from the group: they may be set before it has members, and stay when it empties. Which keys
//! exist and how their values are checked is the handler's table (`handler/group_configs.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};

/// File name of the group configs inside the metadata dir.
pub const GROUP_CONFIG_FILE: &str = "strata-group-configs.json";

/// Group id -> (key -> value), the overrides only.
type Overrides = BTreeMap<String, BTreeMap<String, String>>;

/// The per-group overrides, kept in a file (or in memory only, for tests of the coordinator).
#[derive(Debug, Default)]
pub struct GroupConfigs {
    /// The file, `None` in memory.
    path: Option<PathBuf>,
    values: RwLock<Overrides>,
    /// Serializes writers: the file is written before the new values are visible.
    write: Mutex<()>,
}

impl GroupConfigs {
    /// The overrides kept in `dir` (none when the file is absent).
    pub fn open(dir: &Path) -> Result<GroupConfigs> {
        let path = dir.join(GROUP_CONFIG_FILE);
        let values = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::config(
                    "(group configs)".into(),
                    path.display().to_string(),
                    format!("not a group config file: {e}"),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Overrides::new(),
            Err(e) => return Err(Error::io("reading the group configs", e)),
        };
        Ok(GroupConfigs {
            path: Some(path),
            values: RwLock::new(values),
            write: Mutex::new(()),
        })
    }

    /// The overrides of `group` (empty when none).
    pub fn of(&self, group: &str) -> BTreeMap<String, String> {
        self.values.read().get(group).cloned().unwrap_or_default()
    }

    /// The override of `key` for `group`, parsed as a number.
    pub fn int(&self, group: &str, key: &str) -> Option<i32> {
        self.values.read().get(group)?.get(key)?.parse().ok()
    }

    /// Replaces the overrides of `group` with `values` (none removes the group's entry): written to the file, then
    /// visible. Blocking.
    pub fn set(&self, group: &str, values: BTreeMap<String, String>) -> Result<()> {
        let _one_writer = self.write.lock();
        let mut next = self.values.read().clone();
        match values.is_empty() {
            true => next.remove(group),
            false => next.insert(group.to_string(), values),
        };
        if let Some(path) = &self.path {
            let bytes = serde_json::to_vec_pretty(&next)
                .map_err(|e| Error::io("encoding the group configs", e.into()))?;
            strata_storage::atomic_write(path, &bytes)?;
        }
        *self.values.write() = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_survive_reopen_and_an_empty_set_removes_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let c = GroupConfigs::open(dir.path()).unwrap();
        assert!(c.of("g").is_empty());
        let v: BTreeMap<String, String> = [(
            "consumer.session.timeout.ms".to_string(),
            "50000".to_string(),
        )]
        .into();
        c.set("g", v.clone()).unwrap();
        let reopened = GroupConfigs::open(dir.path()).unwrap();
        assert_eq!(reopened.of("g"), v);
        assert_eq!(
            reopened.int("g", "consumer.session.timeout.ms"),
            Some(50000)
        );
        reopened.set("g", BTreeMap::new()).unwrap();
        assert!(GroupConfigs::open(dir.path()).unwrap().of("g").is_empty());
    }
}
