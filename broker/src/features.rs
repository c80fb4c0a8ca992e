//! Broker features (KIP-584), as a single-node Kafka 4.4 broker advertises them in ApiVersions and Admin's
//! `describeFeatures` / `kafka-features describe` show them — only those strata implements:
//!
//! | feature | supported | finalized | what it turns on |
//! |---|---|---|---|
//! | `transaction.version` | 0-2 | 2 (kept in `finalized-features.json` in the metadata dir; UpdateFeatures / `kafka-features downgrade` changes it) | 2: Kafka's clients use transaction version 2 (KIP-890 part 2: EndTxn v5 bumps the epoch, Produce v12+ and TxnOffsetCommit v5 add partitions). 1 or more: `__transaction_state` values are written in version 1 |
//! | `group.version` | 0-1 | 1 | the consumer group protocol (KIP-848); not changeable here |
//!
//! Kafka's other features (`metadata.version`, `kraft.version`, `eligible.leader.replicas.version`,
//! `share.version`, `streams.version`) describe KRaft, ELR, share groups and streams groups, which strata does not
//! implement, so they are not advertised.
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use crate::error::{Error, Result};

/// `transaction.version`.
pub const TRANSACTION_VERSION: &str = "transaction.version";
/// `group.version`.
pub const GROUP_VERSION: &str = "group.version";

/// (feature, lowest supported level, highest supported level).
pub const SUPPORTED: &[(&str, i16, i16)] = &[(GROUP_VERSION, 0, 1), (TRANSACTION_VERSION, 0, 2)];

const FILE: &str = "finalized-features.json";

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Finalized {
    transaction_version: i16,
    /// Kafka's finalized-features epoch: raised by every update, so clients replace what they cached.
    epoch: i64,
}

/// Why an UpdateFeatures change is refused (Kafka's INVALID_UPDATE_VERSION with these words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureError {
    /// A feature strata does not support.
    #[error("Invalid update version {level} for feature {feature}. Local controller does not support this feature.")]
    Unknown {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
    },
    /// A level outside the supported range.
    #[error("Invalid update version {level} for feature {feature}. Local controller only supports versions {min}-{max}")]
    OutOfRange {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
        /// Lowest supported.
        min: i16,
        /// Highest supported.
        max: i16,
    },
    /// A change strata does not make (group.version).
    #[error(
        "Invalid update version {level} for feature {feature}. strata keeps {feature} at {current}"
    )]
    Fixed {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
        /// The level kept.
        current: i16,
    },
    /// A lower level asked as an upgrade.
    #[error("Invalid update version {level} for feature {feature}. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")]
    DowngradeAsUpgrade {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
    },
    /// A higher level asked as a downgrade.
    #[error(
        "Invalid update version {level} for feature {feature}. Can't downgrade to a newer version."
    )]
    UpgradeAsDowngrade {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
    },
    /// An upgrade type Kafka does not know (1 upgrade, 2 safe downgrade, 3 unsafe downgrade).
    #[error("Invalid update version {level} for feature {feature}. The controller does not support the given upgrade type.")]
    UnknownUpgradeType {
        /// The feature named.
        feature: String,
        /// The level asked for.
        level: i16,
    },
}

/// The finalized feature levels, persisted in the metadata dir.
#[derive(Debug)]
pub struct Features {
    path: Option<PathBuf>,
    finalized: Mutex<Finalized>,
}

impl Features {
    /// The levels kept in `dir` (Kafka's defaults for a new cluster when none were written).
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join(FILE);
        let finalized = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    format!("reading {}", path.display()),
                    std::io::Error::other(e),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Finalized::default(),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        Ok(Self {
            path: Some(path),
            finalized: Mutex::new(finalized),
        })
    }

    /// Kafka's defaults, not persisted (tests).
    pub fn in_memory() -> Self {
        Self {
            path: None,
            finalized: Mutex::new(Finalized::default()),
        }
    }

    /// The finalized `transaction.version`.
    pub fn transaction_version(&self) -> i16 {
        self.finalized.lock().transaction_version
    }

    /// The finalized levels, by name (a feature at level 0 is not finalized, as in Kafka), and their epoch.
    pub fn finalized(&self) -> (Vec<(&'static str, i16)>, i64) {
        let f = *self.finalized.lock();
        let levels = [
            (GROUP_VERSION, 1),
            (TRANSACTION_VERSION, f.transaction_version),
        ];
        (
            levels.into_iter().filter(|(_, l)| *l > 0).collect(),
            f.epoch,
        )
    }

    /// Checks one UpdateFeatures change (`downgrade`: a safe or unsafe downgrade was asked, else an upgrade).
    pub fn check(&self, feature: &str, level: i16, downgrade: bool) -> Result<(), FeatureError> {
        let Some((_, min, max)) = SUPPORTED.iter().find(|(n, _, _)| *n == feature) else {
            return Err(FeatureError::Unknown {
                feature: feature.to_string(),
                level,
            });
        };
        if level < 0 {
            return Err(FeatureError::OutOfRange {
                feature: feature.to_string(),
                level,
                min: *min,
                max: *max,
            });
        }
        if !(*min..=*max).contains(&level) {
            return Err(FeatureError::OutOfRange {
                feature: feature.to_string(),
                level,
                min: *min,
                max: *max,
            });
        }
        let current = self
            .finalized()
            .0
            .iter()
            .find(|(n, _)| *n == feature)
            .map_or(0, |(_, l)| *l);
        if feature == GROUP_VERSION && level != current {
            return Err(FeatureError::Fixed {
                feature: feature.to_string(),
                level,
                current,
            });
        }
        let feature = feature.to_string();
        match (downgrade, level.cmp(&current)) {
            (false, std::cmp::Ordering::Less) => {
                Err(FeatureError::DowngradeAsUpgrade { feature, level })
            }
            (true, std::cmp::Ordering::Greater) => {
                Err(FeatureError::UpgradeAsDowngrade { feature, level })
            }
            _ => Ok(()),
        }
    }

    /// Sets `transaction.version` (checked by [`Self::check`] first) and persists it; the epoch is raised.
    pub fn set_transaction_version(&self, level: i16) -> Result<()> {
        let mut f = self.finalized.lock();
        let next = Finalized {
            transaction_version: level,
            epoch: f.epoch + 1,
        };
        if let Some(path) = &self.path {
            let json = serde_json::to_vec(&next).map_err(|e| {
                Error::io(
                    format!("encoding {}", path.display()),
                    std::io::Error::other(e),
                )
            })?;
            strata_storage::atomic_write(path, &json)?;
        }
        *f = next;
        Ok(())
    }
}

impl Default for Finalized {
    fn default() -> Self {
        Self {
            transaction_version: 2,
            epoch: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's checks and words: unknown feature, level out of range, wrong direction; group.version stays.
    #[test]
    fn updates_are_checked_as_kafka_checks_them() {
        let f = Features::in_memory();
        assert_eq!(f.transaction_version(), 2);
        assert!(f.check(TRANSACTION_VERSION, 1, true).is_ok());
        assert!(f.check(TRANSACTION_VERSION, 2, false).is_ok());
        let e = f.check(TRANSACTION_VERSION, 3, true).unwrap_err();
        assert!(e.to_string().contains("only supports versions 0-2"), "{e}");
        assert!(matches!(
            f.check(TRANSACTION_VERSION, 1, false),
            Err(FeatureError::DowngradeAsUpgrade { .. })
        ));
        assert!(matches!(
            f.check(TRANSACTION_VERSION, -1, true),
            Err(FeatureError::OutOfRange { .. })
        ));
        f.set_transaction_version(1).unwrap();
        assert!(matches!(
            f.check(TRANSACTION_VERSION, 2, true),
            Err(FeatureError::UpgradeAsDowngrade { .. })
        ));
        assert!(matches!(
            f.check("foo.version", 1, false),
            Err(FeatureError::Unknown { .. })
        ));
        assert!(matches!(
            f.check(GROUP_VERSION, 0, true),
            Err(FeatureError::Fixed { .. })
        ));
    }

    /// A downgrade is kept across a restart and raises the epoch.
    #[test]
    fn transaction_version_persists() {
        let dir = tempfile::tempdir().unwrap();
        let f = Features::open(dir.path()).unwrap();
        assert_eq!(f.finalized().1, 0);
        f.set_transaction_version(1).unwrap();
        let f = Features::open(dir.path()).unwrap();
        assert_eq!(f.transaction_version(), 1);
        assert_eq!(
            f.finalized(),
            (vec![(GROUP_VERSION, 1), (TRANSACTION_VERSION, 1)], 1)
        );
    }
}
