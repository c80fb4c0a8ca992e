//! Kafka's `meta.properties`: which cluster and node own a log dir. A Java properties file:
//!
//! ```text
//! #
//! #Written by strata
//! version=1
//! cluster.id=<22-char URL-safe base64 UUID>
//! node.id=<non-negative int>
//! directory.id=<22-char URL-safe base64 UUID>
//! ```
//!
//! Version 0 (ZooKeeper mode) has `broker.id` instead of `node.id` and no `directory.id`; both are read.
//! `#`/`!` lines are comments; keys and values are split at the first `=` or `:` and trimmed.
use std::collections::BTreeMap;
use std::path::Path;

use uuid::Uuid;

use crate::checkpoint::{kafka_uuid_string, parse_kafka_uuid};
use crate::error::io_err;
use crate::{fsio, Error, Result};

/// The parsed contents of one dir's `meta.properties`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MetaProperties {
    pub(crate) version: u32,
    pub(crate) cluster_id: Option<String>,
    pub(crate) node_id: i32,
    pub(crate) directory_id: Option<Uuid>,
}

impl MetaProperties {
    /// Reads `path`; `Ok(None)` if it does not exist.
    pub(crate) fn read(path: &Path) -> Result<Option<MetaProperties>> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        Self::parse(&text)
            .map(Some)
            .map_err(|reason| Error::CorruptFile {
                path: path.to_path_buf(),
                reason,
            })
    }

    fn parse(text: &str) -> std::result::Result<MetaProperties, String> {
        let mut props = BTreeMap::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let (k, v) = line
                .split_once(['=', ':'])
                .ok_or_else(|| format!("line without '=': {line:?}"))?;
            props.insert(k.trim().to_string(), v.trim().to_string());
        }
        let version: u32 = props
            .get("version")
            .ok_or("no version")?
            .parse()
            .map_err(|_| format!("bad version {:?}", props["version"]))?;
        let id_key = match version {
            0 => "broker.id",
            1 => "node.id",
            v => return Err(format!("unsupported version {v}")),
        };
        let node_id = props
            .get(id_key)
            .ok_or_else(|| format!("no {id_key}"))?
            .parse::<i32>()
            .map_err(|_| format!("bad {id_key} {:?}", props[id_key]))?;
        let cluster_id = props.get("cluster.id").cloned();
        if version == 1 && cluster_id.is_none() {
            return Err("version 1 without cluster.id".into());
        }
        let directory_id = match props.get("directory.id") {
            Some(s) => Some(parse_kafka_uuid(s).ok_or_else(|| format!("bad directory.id {s:?}"))?),
            None => None,
        };
        Ok(MetaProperties {
            version,
            cluster_id,
            node_id,
            directory_id,
        })
    }

    /// Version 1 for a new dir, with a fresh `directory.id`.
    pub(crate) fn new_v1(cluster_id: &str, node_id: i32) -> MetaProperties {
        MetaProperties {
            version: 1,
            cluster_id: Some(cluster_id.to_string()),
            node_id,
            directory_id: Some(Uuid::new_v4()),
        }
    }

    /// Writes atomically (tmp, fsync, rename, fsync dir).
    pub(crate) fn write(&self, path: &Path) -> Result<()> {
        let mut s = String::from("#\n#Written by strata\n");
        s.push_str(&format!("version={}\n", self.version));
        if let Some(c) = &self.cluster_id {
            s.push_str(&format!("cluster.id={c}\n"));
        }
        let id_key = if self.version == 0 {
            "broker.id"
        } else {
            "node.id"
        };
        s.push_str(&format!("{id_key}={}\n", self.node_id));
        if let Some(d) = self.directory_id {
            s.push_str(&format!("directory.id={}\n", kafka_uuid_string(d)));
        }
        fsio::atomic_write(path, s.as_bytes())
    }
}

/// Checks (or, on first start, writes) every dir's `meta.properties` against the configured node id and cluster
/// id; returns the cluster id: the one on disk, else the configured one, else a new random one.
pub(crate) fn check_and_write(
    dirs: &[std::path::PathBuf],
    node_id: i32,
    configured_cluster_id: Option<&str>,
) -> Result<String> {
    let mut found: Vec<(&Path, Option<MetaProperties>)> = Vec::new();
    for dir in dirs {
        found.push((
            dir,
            MetaProperties::read(&dir.join(crate::names::META_PROPERTIES))?,
        ));
    }
    let mut cluster: Option<(&Path, String)> = None;
    for (dir, meta) in &found {
        let Some(meta) = meta else { continue };
        if meta.node_id != node_id {
            return Err(Error::Storage {
                dir: dir.to_path_buf(),
                reason: format!(
                    "meta.properties has node.id {} but this broker's node.id is {node_id}; the dir belongs to \
                     another node",
                    meta.node_id
                ),
            });
        }
        let Some(id) = &meta.cluster_id else { continue };
        match &cluster {
            Some((first_dir, first)) if first != id => {
                return Err(Error::Storage {
                    dir: dir.to_path_buf(),
                    reason: format!(
                        "meta.properties has cluster.id {id} but {} has cluster.id {first}",
                        first_dir.display()
                    ),
                })
            }
            Some(_) => {}
            None => cluster = Some((dir, id.clone())),
        }
    }
    if let (Some((dir, on_disk)), Some(configured)) = (&cluster, configured_cluster_id) {
        if on_disk != configured {
            return Err(Error::Storage {
                dir: dir.to_path_buf(),
                reason: format!(
                    "meta.properties has cluster.id {on_disk} but the configured cluster id is {configured}"
                ),
            });
        }
    }
    let cluster_id = match cluster {
        Some((_, id)) => id,
        None => configured_cluster_id
            .map(str::to_string)
            .unwrap_or_else(|| kafka_uuid_string(Uuid::new_v4())),
    };
    let mut present: Vec<(Uuid, &Path)> = Vec::new();
    for (dir, meta) in &found {
        let id = match meta {
            Some(m) => m.directory_id,
            None => {
                let m = MetaProperties::new_v1(&cluster_id, node_id);
                m.write(&dir.join(crate::names::META_PROPERTIES))?;
                m.directory_id
            }
        };
        present.extend(id.map(|id| (id, *dir)));
    }
    check_known_dirs(dirs, &present)?;
    Ok(cluster_id)
}

/// The log dirs (by `directory.id`) this broker started with last time, kept in each dir's
/// [`crate::names::KNOWN_LOG_DIRS`] file: a dir among them missing from `log.dirs` now is an error naming it —
/// its partitions would otherwise be served empty from another dir (and be in two dirs once it is back), as
/// Kafka (KIP-858) keeps the replicas of a missing dir offline instead of re-creating them. Then the file in
/// every dir is rewritten to the dirs of this start.
fn check_known_dirs(dirs: &[std::path::PathBuf], present: &[(Uuid, &Path)]) -> Result<()> {
    let file = crate::names::KNOWN_LOG_DIRS;
    let mut known: BTreeMap<Uuid, String> = BTreeMap::new();
    let mut written: Vec<(&Path, String)> = Vec::new();
    for dir in dirs {
        let path = dir.join(file);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, at) = line.split_once(' ').unwrap_or((line, ""));
            let id = parse_kafka_uuid(id).ok_or_else(|| Error::CorruptFile {
                path: path.clone(),
                reason: format!("bad directory.id in line {line:?}"),
            })?;
            known.entry(id).or_insert_with(|| at.trim().to_string());
        }
        written.push((dir, text));
    }
    let missing: Vec<(Uuid, String)> = known
        .into_iter()
        .filter(|(id, _)| !present.iter().any(|(p, _)| p == id))
        .collect();
    if let Some((id, at)) = missing.first() {
        let configured: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(Error::Storage {
            dir: std::path::PathBuf::from(at),
            reason: format!(
                "this log dir (directory.id {}) was in log.dirs at the last start but is not now (log.dirs={}){}: \
                 add it back to log.dirs — started without it, its partitions would be served empty. If it is \
                 lost for good, delete the file {file} in each log dir to start without it (its partitions are \
                 then re-created empty)",
                kafka_uuid_string(*id),
                configured.join(","),
                if missing.len() > 1 {
                    format!(" (and {} more missing dirs)", missing.len() - 1)
                } else {
                    String::new()
                }
            ),
        });
    }
    let mut now = String::from(
        "# The log dirs (directory.id and path) of this broker's last start; see log.dirs.\n",
    );
    for (id, dir) in present {
        now.push_str(&format!("{} {}\n", kafka_uuid_string(*id), dir.display()));
    }
    for (dir, was) in written {
        if was != now {
            fsio::atomic_write(&dir.join(file), now.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafka_written_files_of_both_versions() {
        let v1 =
            "#\n#Tue Dec 02 17:00:00 UTC 2026\nnode.id=3\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\n\
                  version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n";
        let m = MetaProperties::parse(v1).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.node_id, 3);
        assert_eq!(m.cluster_id.as_deref(), Some("MkU3OEVBNTcwNTJENDM2Qg"));
        assert!(m.directory_id.is_some());
        let v0 = "version=0\nbroker.id=7\ncluster.id=abc\n";
        assert_eq!(MetaProperties::parse(v0).unwrap().node_id, 7);
        for bad in [
            "node.id=1\n",
            "version=2\nnode.id=1\n",
            "version=1\nnode.id=1\n",
            "version=1\nnode.id=x\ncluster.id=a\n",
        ] {
            assert!(MetaProperties::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn written_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("meta.properties");
        let m = MetaProperties::new_v1("MkU3OEVBNTcwNTJENDM2Qg", 5);
        m.write(&p).unwrap();
        assert_eq!(MetaProperties::read(&p).unwrap(), Some(m));
        assert_eq!(
            MetaProperties::read(&dir.path().join("none")).unwrap(),
            None
        );
    }
}
