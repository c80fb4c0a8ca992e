//! The ACL bindings, kept in `acls.json` in the metadata dir (a JSON array of [`AclBinding`], sorted) and indexed in
//! memory for [`super::Authorizer::authorize`]. Every change is written whole with the atomic replace every store
//! uses (`strata_storage::atomic_write`: tmp, fsync, rename, fsync dir) before it is applied in memory and
//! answered: a crash leaves the file as it was before or after the change, never torn, and an answered change is
//! durable. A file that does not parse stops start-up naming it (nothing is silently dropped).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::acl::{AclBinding, AclFilter, PatternType, ResourceType};
use crate::error::{Error, Result};

/// The file name, in the metadata dir.
pub const FILE: &str = "acls.json";

/// The bindings of one resource type, by pattern: literal names (`*` included) and prefixes.
#[derive(Debug, Default)]
pub(crate) struct TypeIndex {
    pub literal: HashMap<String, Vec<AclBinding>>,
    pub prefixed: HashMap<String, Vec<AclBinding>>,
    /// The lengths (bytes) of the prefixes present, so a lookup tries only those.
    pub prefix_lens: BTreeSet<usize>,
}

/// An immutable snapshot: the bindings and their index.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub all: BTreeSet<AclBinding>,
    pub by_type: HashMap<ResourceType, TypeIndex>,
}

impl Snapshot {
    fn new(all: BTreeSet<AclBinding>) -> Snapshot {
        let mut by_type: HashMap<ResourceType, TypeIndex> = HashMap::new();
        for b in &all {
            let t = by_type.entry(b.resource_type).or_default();
            if b.pattern_type == PatternType::Prefixed {
                t.prefix_lens.insert(b.resource_name.len());
                t.prefixed.entry(b.resource_name.clone()).or_default()
            } else {
                t.literal.entry(b.resource_name.clone()).or_default()
            }
            .push(b.clone());
        }
        Snapshot { all, by_type }
    }

    /// Calls `f` on every binding whose pattern applies to `name` (literal, `*`, prefixes) of type `rt`.
    pub fn for_each_applying(
        &self,
        rt: ResourceType,
        name: &str,
        mut f: impl FnMut(&AclBinding) -> bool,
    ) {
        let Some(t) = self.by_type.get(&rt) else {
            return;
        };
        let lists = t
            .literal
            .get(name)
            .into_iter()
            .chain(
                t.prefix_lens
                    .iter()
                    .filter_map(|&n| name.get(..n).and_then(|prefix| t.prefixed.get(prefix))),
            )
            .chain(
                t.literal
                    .get(super::acl::WILDCARD)
                    .filter(|_| name != super::acl::WILDCARD),
            );
        for list in lists {
            for b in list {
                if !f(b) {
                    return;
                }
            }
        }
    }

    /// Every binding of type `rt`.
    pub fn of_type(&self, rt: ResourceType) -> impl Iterator<Item = &AclBinding> {
        self.all.iter().filter(move |b| b.resource_type == rt)
    }
}

/// The durable ACL store. See the [module docs](self).
#[derive(Debug)]
pub struct AclStore {
    path: PathBuf,
    snapshot: RwLock<Arc<Snapshot>>,
    /// Serialises writers: one file write at a time, in the order applied.
    writer: Mutex<()>,
}

impl AclStore {
    /// Opens the store in `dir` (empty when the file does not exist yet).
    pub fn open(dir: &Path) -> Result<AclStore> {
        let path = dir.join(FILE);
        let all: BTreeSet<AclBinding> = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<Vec<AclBinding>>(&bytes)
                .map_err(|e| {
                    Error::io(
                        format!("reading {}", path.display()),
                        std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                    )
                })?
                .into_iter()
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        Ok(AclStore {
            path,
            snapshot: RwLock::new(Arc::new(Snapshot::new(all))),
            writer: Mutex::new(()),
        })
    }

    /// The current bindings and index.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().clone()
    }

    /// How many bindings there are.
    pub fn len(&self) -> usize {
        self.snapshot().all.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bindings `filter` matches, sorted.
    pub fn describe(&self, filter: &AclFilter) -> Vec<AclBinding> {
        let snap = self.snapshot();
        snap.all
            .iter()
            .filter(|b| filter.matches(b))
            .cloned()
            .collect()
    }

    /// Adds `bindings` (already validated; ones already present are kept once, as Kafka does) in one durable
    /// write. Blocking.
    pub fn add(&self, bindings: &[AclBinding]) -> Result<()> {
        self.change(|all| {
            for b in bindings {
                all.insert(b.clone());
            }
        })
        .map(|_| ())
    }

    /// Removes what each filter matches, in one durable write: per filter, the bindings it removed (a binding
    /// matched by two filters is reported by both, as Kafka does). Blocking.
    pub fn remove(&self, filters: &[AclFilter]) -> Result<Vec<Vec<AclBinding>>> {
        let mut per_filter = Vec::new();
        self.change(|all| {
            per_filter = filters
                .iter()
                .map(|f| all.iter().filter(|b| f.matches(b)).cloned().collect())
                .collect();
            all.retain(|b| !filters.iter().any(|f| f.matches(b)));
        })?;
        Ok(per_filter)
    }

    /// Applies `f` to a copy of the bindings; when it changed them, writes the file, then swaps the snapshot.
    fn change(&self, f: impl FnOnce(&mut BTreeSet<AclBinding>)) -> Result<bool> {
        let _writing = self.writer.lock();
        let mut next = self.snapshot().all.clone();
        f(&mut next);
        if next == self.snapshot().all {
            return Ok(false);
        }
        let list: Vec<&AclBinding> = next.iter().collect();
        let bytes = serde_json::to_vec_pretty(&list).expect("serializable");
        strata_storage::atomic_write(&self.path, &bytes)?;
        *self.snapshot.write() = Arc::new(Snapshot::new(next));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::acl::{AclOperation, Permission};
    use super::*;

    fn b(name: &str, pt: PatternType) -> AclBinding {
        AclBinding {
            resource_type: ResourceType::Topic,
            resource_name: name.into(),
            pattern_type: pt,
            principal: "User:a".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission: Permission::Allow,
        }
    }

    #[test]
    fn bindings_survive_reopening_and_removal_reports_per_filter() {
        let dir = tempfile::tempdir().unwrap();
        let s = AclStore::open(dir.path()).unwrap();
        s.add(&[b("t", PatternType::Literal), b("t-", PatternType::Prefixed)])
            .unwrap();
        s.add(&[b("t", PatternType::Literal)]).unwrap();
        assert_eq!(s.len(), 2);
        let s = AclStore::open(dir.path()).unwrap();
        assert_eq!(s.len(), 2);
        let mut seen = Vec::new();
        s.snapshot()
            .for_each_applying(ResourceType::Topic, "t-1", |b| {
                seen.push(b.resource_name.clone());
                true
            });
        assert_eq!(seen, vec!["t-".to_string()]);
        let f = AclFilter {
            resource_type: ResourceType::Any,
            resource_name: None,
            pattern_type: PatternType::Literal,
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission: Permission::Any,
        };
        let removed = s.remove(&[f.clone(), f]).unwrap();
        assert_eq!(removed[0].len(), 1);
        assert_eq!(removed[1].len(), 1);
        assert_eq!(AclStore::open(dir.path()).unwrap().len(), 1);
        assert!(!dir.path().join("acls.json.tmp").exists());
    }

    #[test]
    fn a_file_that_does_not_parse_stops_the_open_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"[{\"resource_type\":").unwrap();
        let e = AclStore::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("acls.json"), "{e}");
    }
}
