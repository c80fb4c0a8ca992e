//! The leader-epoch cache (Kafka's `LeaderEpochFileCache`) behind `leader-epoch-checkpoint`: the first offset
//! written in each leader epoch.
use std::path::PathBuf;

use crate::checkpoint;
use crate::Result;

/// `(epoch, start_offset)` entries with increasing epochs and offsets, persisted on every change.
#[derive(Debug)]
pub(crate) struct LeaderEpochCache {
    path: PathBuf,
    entries: Vec<(i32, i64)>,
}

impl LeaderEpochCache {
    pub(crate) fn load(path: PathBuf) -> Result<Self> {
        let entries = checkpoint::read_leader_epochs(&path)?;
        Ok(Self { path, entries })
    }

    pub(crate) fn empty(path: PathBuf) -> Self {
        Self {
            path,
            entries: Vec::new(),
        }
    }

    pub(crate) fn entries(&self) -> Vec<(i32, i64)> {
        self.entries.clone()
    }

    fn persist(&self) -> Result<()> {
        crate::failpoint::crash_point("leader_epoch.checkpoint.before_write");
        checkpoint::write_leader_epochs(&self.path, &self.entries)
    }

    /// Records that `epoch` starts at `offset` (ignored unless newer than the latest epoch).
    pub(crate) fn assign(&mut self, epoch: i32, offset: i64) -> Result<()> {
        if epoch < 0 || self.entries.last().is_some_and(|&(e, _)| e >= epoch) {
            return Ok(());
        }
        self.entries.retain(|&(_, o)| o < offset);
        self.entries.push((epoch, offset));
        self.persist()
    }

    /// Drops entries starting at or after `end_offset` (log truncated to `end_offset`).
    pub(crate) fn truncate_from_end(&mut self, end_offset: i64) -> Result<()> {
        let before = self.entries.len();
        self.entries.retain(|&(_, o)| o < end_offset);
        if self.entries.len() != before {
            self.persist()?;
        }
        Ok(())
    }

    /// Moves the start to `start_offset`: earlier entries go, except the latest one, which now starts there.
    pub(crate) fn truncate_from_start(&mut self, start_offset: i64) -> Result<()> {
        let below = self
            .entries
            .iter()
            .take_while(|&&(_, o)| o < start_offset)
            .count();
        if below == 0 {
            return Ok(());
        }
        let (epoch, _) = self.entries[below - 1];
        self.entries.drain(..below);
        if self.entries.first().is_none_or(|&(_, o)| o > start_offset) {
            self.entries.insert(0, (epoch, start_offset));
        }
        self.persist()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_are_assigned_truncated_and_persisted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leader-epoch-checkpoint");
        let mut c = LeaderEpochCache::load(path.clone()).unwrap();
        c.assign(0, 0).unwrap();
        c.assign(0, 5).unwrap();
        c.assign(2, 10).unwrap();
        c.assign(3, 20).unwrap();
        assert_eq!(c.entries(), vec![(0, 0), (2, 10), (3, 20)]);
        c.truncate_from_start(15).unwrap();
        assert_eq!(c.entries(), vec![(2, 15), (3, 20)]);
        c.truncate_from_end(20).unwrap();
        assert_eq!(
            LeaderEpochCache::load(path).unwrap().entries(),
            vec![(2, 15)]
        );
    }
}
