//! File-system helpers: fsync of files and directories, atomic replace (tmp, fsync, rename, fsync dir), and a
//! test-only fail point that makes the next fsyncs fail.
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use crate::error::io_err;
use crate::Result;

#[cfg(test)]
thread_local! {
    /// Test fail point: while set, every fsync on this thread fails.
    pub(crate) static FAIL_FSYNC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `fsync` of a file's data and size.
pub(crate) fn sync_file(file: &File, path: &Path) -> Result<()> {
    #[cfg(test)]
    if FAIL_FSYNC.with(|f| f.get()) {
        return Err(io_err(path)(std::io::Error::other(
            "injected fsync failure",
        )));
    }
    file.sync_data().map_err(io_err(path))
}

/// `fsync` of a directory, making renames and creations in it durable (or of a file, opened read-only by path).
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    let f = File::open(dir).map_err(io_err(dir))?;
    sync_file(&f, dir)
}

/// fsyncs every path (files or directories), up to `threads` at a time (concurrent fsyncs share the file
/// system's journal commits). On failures, the index (in `paths`) and error of one of them; every path is
/// synced or tried either way.
pub(crate) fn sync_paths<'a>(
    paths: impl Iterator<Item = &'a Path>,
    threads: usize,
) -> Result<(), (usize, crate::Error)> {
    let paths: Vec<&Path> = paths.collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = parking_lot::Mutex::new(None);
    #[cfg(test)]
    let fail = FAIL_FSYNC.with(|f| f.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, paths.len().max(1)) {
            scope.spawn(|| {
                #[cfg(test)]
                FAIL_FSYNC.with(|f| f.set(fail));
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(path) = paths.get(i) else { break };
                    if let Err(e) = sync_dir(path) {
                        failed.lock().get_or_insert((i, e));
                    }
                }
            });
        }
    });
    match failed.into_inner() {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// Replaces `path` atomically with `contents`: write `path.tmp`, fsync, rename over `path`, fsync the directory.
/// On failure the temporary file is removed (best effort) and `path` is left as it was. Callers serialise writes
/// to one `path` (they share the temporary file). The one atomic-replace of every strata crate (the topic
/// registry, the remote log metadata snapshot and storage's own checkpoints use it).
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    let tmp = path.with_extension(match path.extension() {
        Some(ext) => format!("{}.tmp", ext.to_string_lossy()),
        None => "tmp".to_string(),
    });
    let replaced = (|| {
        let mut f = File::create(&tmp).map_err(io_err(&tmp))?;
        f.write_all(contents).map_err(io_err(&tmp))?;
        sync_file(&f, &tmp)?;
        drop(f);
        crate::failpoint::crash_point("fsio.atomic_write.before_rename");
        fs::rename(&tmp, path).map_err(io_err(path))
    })();
    if replaced.is_err() {
        let _ = fs::remove_file(&tmp); // best effort: the error returned is what matters
    }
    replaced?;
    crate::failpoint::crash_point("fsio.atomic_write.before_dir_sync");
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}
