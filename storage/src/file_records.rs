//! [`FileRecords`]: a segment's `.log` file — batches appended verbatim, read back with one `pread`.
//!
//! The file descriptor is opened on first use and may be closed by the log's [`HandleCache`] sweep while the
//! segment is idle (see `crate::handles`); the next append or read reopens it.
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::error::io_err;
use crate::handles::{HandleCache, HandleToken};
use crate::record::{batch_size_from_header, RecordBatch, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
use crate::{fsio, Error, Result};

/// An open `.log` descriptor and the unit of the open-files cap it holds.
#[derive(Debug)]
pub(crate) struct OpenFile {
    file: File,
    _token: HandleToken,
}

/// The `.log` file of a segment: concatenated record batches, byte-identical to what producers sent (with the
/// broker-assigned offsets and leader epoch).
#[derive(Debug)]
pub struct FileRecords {
    path: PathBuf,
    /// Opened on first use; shared with reads in flight outside the log's lock (see
    /// [`FileRecords::read_handle`]), which keep it open after [`FileRecords::release`].
    file: OnceLock<Arc<OpenFile>>,
    handles: Arc<HandleCache>,
    size: u64,
}

impl FileRecords {
    /// Opens (creating if absent) the file; the size is the file's length.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_in(path, HandleCache::unbounded())
    }

    /// [`FileRecords::open`] with the descriptor counted in `handles`; it stays open until released.
    pub(crate) fn open_in(path: &Path, handles: Arc<HandleCache>) -> Result<Self> {
        let token = handles.acquire();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_err(path))?;
        let size = file.metadata().map_err(io_err(path))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file: OnceLock::from(Arc::new(OpenFile {
                file,
                _token: token,
            })),
            handles,
            size,
        })
    }

    /// The open descriptor, reopened (never created) if it was released.
    #[inline]
    fn file(&self) -> Result<&Arc<OpenFile>> {
        if let Some(f) = self.file.get() {
            return Ok(f);
        }
        self.reopen()
    }

    #[cold]
    fn reopen(&self) -> Result<&Arc<OpenFile>> {
        let token = self.handles.acquire();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(io_err(&self.path))?;
        // A concurrent reader may have won the race; its handle is kept and this one closed.
        let _ = self.file.set(Arc::new(OpenFile {
            file,
            _token: token,
        }));
        Ok(self.file.get().expect("set above"))
    }

    /// Closes the descriptor (reads in flight keep theirs); the next use reopens it.
    pub(crate) fn release(&mut self) {
        self.file.take();
    }

    /// Whether the descriptor is open.
    pub(crate) fn is_open(&self) -> bool {
        self.file.get().is_some()
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes in the file.
    pub fn size_in_bytes(&self) -> u64 {
        self.size
    }

    /// Appends `bytes` at the end (one `pwrite`), returning the position they start at.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let pos = self.size;
        self.file()?
            .file
            .write_all_at(bytes, pos)
            .map_err(io_err(&self.path))?;
        self.size += bytes.len() as u64;
        Ok(pos)
    }

    /// Reads `len` bytes at `pos` into one buffer (one `pread`), clamped to the file's size.
    pub fn read(&self, pos: u64, len: usize) -> Result<Bytes> {
        self.read_handle(pos, len)?.read()
    }

    /// A read of `len` bytes at `pos` (clamped to the current size) that can run after the caller drops its lock:
    /// the bytes below the size never change (the file only grows while the log is open), and the shared handle
    /// keeps the file readable even after retention renames and removes it.
    pub(crate) fn read_handle(&self, pos: u64, len: usize) -> Result<PendingRead> {
        let end = pos.saturating_add(len as u64).min(self.size);
        let len = end.saturating_sub(pos) as usize;
        Ok(PendingRead {
            file: if len == 0 {
                None
            } else {
                Some(Arc::clone(self.file()?))
            },
            path: self.path.clone(),
            pos,
            len,
        })
    }

    /// Reads the 61-byte batch header at `pos`; None when fewer than 61 bytes remain.
    pub(crate) fn read_header(&self, pos: u64) -> Result<Option<[u8; RECORD_BATCH_OVERHEAD]>> {
        if pos + RECORD_BATCH_OVERHEAD as u64 > self.size {
            return Ok(None);
        }
        let mut h = [0u8; RECORD_BATCH_OVERHEAD];
        self.file()?
            .file
            .read_exact_at(&mut h, pos)
            .map_err(io_err(&self.path))?;
        Ok(Some(h))
    }

    /// Fsyncs the file.
    pub fn flush(&self) -> Result<()> {
        fsio::sync_file(&self.file()?.file, &self.path)
    }

    /// Truncates to `size` bytes (no-op if already smaller); returns the bytes removed.
    pub fn truncate_to(&mut self, size: u64) -> Result<u64> {
        if size >= self.size {
            return Ok(0);
        }
        self.file()?
            .file
            .set_len(size)
            .map_err(io_err(&self.path))?;
        let removed = self.size - size;
        self.size = size;
        Ok(removed)
    }

    /// Renames the file (keeping the open handle, if any; a later reopen uses the new name).
    pub fn rename_to(&mut self, path: PathBuf) -> Result<()> {
        std::fs::rename(&self.path, &path).map_err(io_err(&self.path))?;
        self.path = path;
        Ok(())
    }

    /// Iterates the batches from byte `pos`, reading the file in large chunks. With `validate_crc` each batch's
    /// CRC is checked. The iterator yields `(position, batch)`; on a truncated or invalid batch it yields one
    /// [`BatchScanError`] carrying the position and stops.
    pub fn batches_from(&self, pos: u64, validate_crc: bool) -> FileBatchIter<'_> {
        FileBatchIter {
            records: self,
            pos,
            buf: Bytes::new(),
            buf_start: pos,
            validate_crc,
            done: false,
        }
    }
}

/// A batch that could not be read during a scan, at `position`.
#[derive(Debug)]
pub struct BatchScanError {
    /// Byte position of the bad batch.
    pub position: u64,
    /// What was wrong.
    pub error: Error,
}

const SCAN_CHUNK: usize = 1 << 20;

/// See [`FileRecords::batches_from`].
pub struct FileBatchIter<'a> {
    records: &'a FileRecords,
    pos: u64,
    buf: Bytes,
    buf_start: u64,
    validate_crc: bool,
    done: bool,
}

impl FileBatchIter<'_> {
    /// Ensures bytes `[pos, pos+len)` are buffered (or as many as the file has); returns how many are.
    fn fill(&mut self, len: usize) -> Result<usize> {
        let have_end = self.buf_start + self.buf.len() as u64;
        if self.pos >= self.buf_start && self.pos + len as u64 <= have_end {
            return Ok(len);
        }
        self.buf = self.records.read(self.pos, len.max(SCAN_CHUNK))?;
        self.buf_start = self.pos;
        Ok(self.buf.len().min(len))
    }

    fn next_inner(&mut self) -> Result<Option<(u64, RecordBatch)>, Error> {
        let remaining = self.records.size - self.pos;
        if remaining == 0 {
            return Ok(None);
        }
        let have = self.fill(LOG_OVERHEAD + 5)?;
        let at = (self.pos - self.buf_start) as usize;
        let size = batch_size_from_header(&self.buf[at..at + have])?;
        if size as u64 > remaining {
            return Err(Error::CorruptRecord {
                reason: format!(
                    "batch at byte {} needs {size} bytes but only {remaining} remain",
                    self.pos
                ),
            });
        }
        self.fill(size)?;
        let at = (self.pos - self.buf_start) as usize;
        let bytes = self.buf.slice(at..at + size);
        let batch = if self.validate_crc {
            RecordBatch::new(bytes)?
        } else {
            RecordBatch::new_unchecked_crc(bytes)?
        };
        let pos = self.pos;
        self.pos += size as u64;
        Ok(Some((pos, batch)))
    }
}

impl Iterator for FileBatchIter<'_> {
    type Item = Result<(u64, RecordBatch), BatchScanError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_inner() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(error) => {
                self.done = true;
                Some(Err(BatchScanError {
                    position: self.pos,
                    error,
                }))
            }
        }
    }
}

/// A planned `pread` of a `FileRecords` (see [`FileRecords::read_handle`]).
#[derive(Debug)]
pub(crate) struct PendingRead {
    /// None for an empty read.
    file: Option<Arc<OpenFile>>,
    path: PathBuf,
    pos: u64,
    len: usize,
}

impl PendingRead {
    /// Performs the `pread`.
    pub(crate) fn read(self) -> Result<Bytes> {
        let Some(file) = self.file.filter(|_| self.len > 0) else {
            return Ok(Bytes::new());
        };
        pread_pooled(&file, &self.path, self.pos, self.len)
    }

    /// The bytes this read would return, cut to `len` (<= its length), as a region of the file to be sent from
    /// where it is; None for an empty read.
    pub(crate) fn into_region(self, len: usize) -> Option<FileRegion> {
        let file = self.file.filter(|_| len > 0)?;
        Some(FileRegion {
            file,
            path: self.path,
            pos: self.pos,
            len: len.min(self.len),
        })
    }
}

/// `len` bytes at `pos` into a pooled buffer (see [`crate::buffers::reads`]).
fn pread_pooled(file: &OpenFile, path: &Path, pos: u64, len: usize) -> Result<Bytes> {
    let pool = crate::buffers::reads();
    let mut buf = pool.take_len(len);
    if let Err(e) = file.file.read_exact_at(&mut buf, pos) {
        pool.give_back(buf);
        return Err(io_err(path)(e));
    }
    Ok(pool.into_bytes(buf))
}

/// Whole batches of a segment's `.log`, left where they are: a fetch hands them to the socket with `sendfile`
/// (Kafka's `FileRecords.writeTo`), so they are not copied through the broker's memory. The bytes never change
/// (a segment's bytes below its size are never rewritten while the log is open) and the shared descriptor keeps
/// them readable after retention removes the file.
#[derive(Debug, Clone)]
pub struct FileRegion {
    file: Arc<OpenFile>,
    path: PathBuf,
    pos: u64,
    len: usize,
}

impl FileRegion {
    /// The region's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty (never, as made by the log).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The region's bytes, read into memory (one `pread`), for a stream `sendfile` cannot write to.
    pub fn read(&self) -> Result<Bytes> {
        if self.len == 0 {
            return Ok(Bytes::new());
        }
        pread_pooled(&self.file, &self.path, self.pos, self.len)
    }

    /// One `sendfile` of the region's bytes from `done` on to `out` (a socket): the bytes it took, as the
    /// system call returns them (`WouldBlock` when a non-blocking socket is full). A region whose file was cut
    /// short under it returns `UnexpectedEof` rather than 0, so a caller never waits on it forever.
    pub fn send_to(&self, out: std::os::fd::BorrowedFd<'_>, done: usize) -> std::io::Result<usize> {
        let left = self.len.saturating_sub(done);
        if left == 0 {
            return Ok(0);
        }
        let mut at = self.pos + done as u64;
        let n = rustix::fs::sendfile(out, &self.file.file, Some(&mut at), left)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{} ends before the {} bytes at {} being sent",
                    self.path.display(),
                    self.len,
                    self.pos
                ),
            ));
        }
        Ok(n)
    }
}
