//! `ObjectWriter`: streams one object to the store in parts of `storage.s3.multipart.upload.part.size` with at
//! most `upload.concurrency` parts buffered or in flight, so an upload holds at most `part size x concurrency`
//! bytes. Small objects (one part or less) take a single PUT. A writer dropped before `finish` aborts its
//! multipart upload in the background.
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload};
use tokio::task::JoinSet;
use tokio_util::task::TaskTracker;

use crate::error::{Error, Result};

pub(crate) struct ObjectWriter {
    store: Arc<dyn ObjectStore>,
    key: Path,
    part_size: usize,
    concurrency: usize,
    buffer: Vec<Bytes>,
    buffered: usize,
    upload: Option<Box<dyn MultipartUpload>>,
    parts: JoinSet<Result<(), object_store::Error>>,
    written: u64,
    /// Where the abort of a dropped upload runs (the RSM's tracker).
    tasks: TaskTracker,
}

impl ObjectWriter {
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        key: Path,
        part_size: usize,
        concurrency: usize,
        tasks: TaskTracker,
    ) -> Self {
        Self {
            tasks,
            store,
            key,
            part_size: part_size.max(1),
            concurrency: concurrency.max(1),
            buffer: Vec::new(),
            buffered: 0,
            upload: None,
            parts: JoinSet::new(),
            written: 0,
        }
    }

    /// Appends `data`; waits while `upload.concurrency` parts are buffered or in flight.
    pub(crate) async fn write(&mut self, mut data: Bytes) -> Result<()> {
        while !data.is_empty() {
            if self.buffered == 0 {
                // A new part starts: make room so buffered + in-flight parts stay within the concurrency.
                self.wait_for_parts(self.concurrency - 1).await?;
            }
            let take = (self.part_size - self.buffered).min(data.len());
            self.buffer.push(data.split_to(take));
            self.buffered += take;
            if self.buffered == self.part_size {
                self.send_part().await?;
            }
        }
        Ok(())
    }

    async fn send_part(&mut self) -> Result<()> {
        if self.upload.is_none() {
            let upload = self
                .store
                .put_multipart(&self.key)
                .await
                .map_err(|e| Error::store("create_multipart", &self.key, e))?;
            self.upload = Some(upload);
        }
        let payload: PutPayload = std::mem::take(&mut self.buffer).into_iter().collect();
        self.written += self.buffered as u64;
        self.buffered = 0;
        if let Some(upload) = self.upload.as_mut() {
            self.parts.spawn(upload.put_part(payload));
        }
        Ok(())
    }

    async fn wait_for_parts(&mut self, max_in_flight: usize) -> Result<()> {
        while self.parts.len() > max_in_flight {
            match self.parts.join_next().await {
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => return Err(Error::store("put_part", &self.key, e)),
                Some(Err(join)) => {
                    return Err(Error::task(format!("upload part of {}", self.key), join));
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Completes the object and returns its size.
    pub(crate) async fn finish(&mut self) -> Result<u64> {
        if self.upload.is_none() {
            let payload: PutPayload = std::mem::take(&mut self.buffer).into_iter().collect();
            let size = self.buffered as u64;
            self.buffered = 0;
            self.store
                .put(&self.key, payload)
                .await
                .map_err(|e| Error::store("put", &self.key, e))?;
            return Ok(size);
        }
        if self.buffered > 0 {
            self.send_part().await?;
        }
        self.wait_for_parts(0).await?;
        let mut upload = self.upload.take().expect("multipart upload started");
        match upload.complete().await {
            Ok(_) => Ok(self.written),
            Err(e) => {
                let _ = upload.abort().await;
                Err(Error::store("complete_multipart", &self.key, e))
            }
        }
    }

    /// Stops in-flight parts and aborts the multipart upload, if one was started.
    pub(crate) async fn abort(&mut self) {
        self.parts.abort_all();
        while self.parts.join_next().await.is_some() {}
        if let Some(mut upload) = self.upload.take() {
            if let Err(e) = upload.abort().await {
                tracing::warn!(key = %self.key, error = %e, "aborting multipart upload failed");
            }
        }
    }
}

impl Drop for ObjectWriter {
    fn drop(&mut self) {
        self.parts.abort_all();
        if let Some(mut upload) = self.upload.take() {
            let key = self.key.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                // Not cancelled at shutdown (an unfinished multipart upload would stay in the bucket): shutdown
                // waits for it within its deadline.
                self.tasks.spawn_on(
                    async move {
                        if let Err(e) = upload.abort().await {
                            tracing::warn!(key = %key, error = %e, "aborting a dropped multipart upload failed");
                        }
                    },
                    &handle,
                );
            }
        }
    }
}
