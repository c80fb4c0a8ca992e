//! Streaming, bounded decompression of a batch's records (gzip, snappy, lz4, zstd), for the record walker.
//!
//! Every decoder here reads the compressed bytes in place and hands out the decompressed records a buffer at a
//! time, so memory stays bounded whatever the batch declares:
//!
//! | codec | decoder | memory bound |
//! |-------|---------|--------------|
//! | gzip | flate2 `MultiGzDecoder` (concatenated members, as Java's `GZIPInputStream`) | 32 KiB window + buffer |
//! | snappy, xerial framing | chunk by chunk (`\x82SNAPPY\0`, version, compat, then `[len i32][raw block]`*) | one block, at most [`SNAPPY_MAX_EXPANSION`] × its compressed length |
//! | snappy, raw (as librdkafka writes it; xerial's `SnappyInputStream` falls back to it without the magic) | one block | [`SNAPPY_MAX_EXPANSION`] × the batch's records bytes, and the caller's `limit` |
//! | lz4 | lz4 frame (`LZ4F`) | one block, at most 4 MiB by the frame format |
//! | zstd | zstd stream decoder | window at most 2^[`ZSTD_WINDOW_LOG_MAX`] bytes |
//!
//! The total number of decompressed bytes is bounded by the caller (the walker stops at its budget); the only
//! decoder that has to materialise a whole block up front (raw snappy) is checked against that budget before it
//! allocates.
use std::io::{self, BufRead, BufReader, Read};

/// The compression codec in a batch's attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Uncompressed records.
    None,
    /// gzip.
    Gzip,
    /// snappy.
    Snappy,
    /// lz4.
    Lz4,
    /// zstd.
    Zstd,
}

/// Largest zstd window accepted: 2^27 = 128 MiB, zstd's own decoder default and zstd-jni's (Kafka's), so the
/// "ultra" levels 20-22 that a Java producer with `compression.zstd.level` up to 22 streams are accepted. The
/// window's pages are only touched as output is written, and output is bounded by the decompression budget.
pub const ZSTD_WINDOW_LOG_MAX: u32 = 27;

/// The most a snappy block can expand: a 3-byte copy element (2-byte offset) produces at most 64 bytes, so no
/// valid block decompresses to more than 64/3 < 22 times its length. A declared length above that is a lie and is
/// refused before anything is allocated.
pub const SNAPPY_MAX_EXPANSION: usize = 22;

/// xerial snappy-java's stream header: magic, then version and compatible version (big-endian i32 each).
const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;

/// Buffer between a decoder and the record walker: as large as lz4's default block (64 KiB), so the lz4 decoder
/// writes whole blocks straight into it instead of staging them.
const READ_BUFFER: usize = 64 << 10;

/// Opens the decompressed stream of a batch's records. `data` is the batch's bytes after the 61-byte header;
/// `limit` is the most decompressed bytes the caller will read (decoders that must allocate a whole block check
/// it first). Errors mean the payload is not valid for `codec`.
pub(crate) fn decompressed(
    codec: Compression,
    data: &[u8],
    limit: usize,
) -> io::Result<Box<dyn BufRead + '_>> {
    Ok(match codec {
        Compression::None => Box::new(data),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            READ_BUFFER,
            flate2::bufread::MultiGzDecoder::new(data),
        )),
        Compression::Lz4 => Box::new(BufReader::with_capacity(READ_BUFFER, Lz4Frame::new(data)?)),
        Compression::Zstd => {
            let mut d = zstd::stream::read::Decoder::with_buffer(data)?;
            d.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            Box::new(BufReader::with_capacity(READ_BUFFER, d))
        }
        Compression::Snappy if data.len() >= XERIAL_MAGIC.len() && data[..8] == XERIAL_MAGIC => {
            Box::new(XerialSnappy::new(data)?)
        }
        Compression::Snappy => Box::new(io::Cursor::new(snappy_block(data, limit)?)),
    })
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Decompresses one raw snappy block after checking its declared length against the block's size and `limit`.
fn snappy_block(block: &[u8], limit: usize) -> io::Result<Vec<u8>> {
    if block.is_empty() {
        return Ok(Vec::new());
    }
    let declared = snap::raw::decompress_len(block).map_err(|e| invalid(format!("snappy: {e}")))?;
    let most = block.len().saturating_mul(SNAPPY_MAX_EXPANSION);
    if declared > most {
        return Err(invalid(format!(
            "snappy block of {} bytes declares {declared} decompressed bytes (at most {most} are possible)",
            block.len()
        )));
    }
    if declared > limit {
        return Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!(
                "snappy block declares {declared} decompressed bytes, over the bound of {limit}"
            ),
        ));
    }
    let mut out = vec![0; declared];
    let n = snap::raw::Decoder::new()
        .decompress(block, &mut out)
        .map_err(|e| invalid(format!("snappy: {e}")))?;
    out.truncate(n);
    Ok(out)
}

/// xerial snappy-java framing, decoded one chunk at a time. As snappy-java, a magic header may appear again
/// where a chunk length is expected (concatenated streams); it is skipped.
struct XerialSnappy<'a> {
    rest: &'a [u8],
    block: Vec<u8>,
    pos: usize,
}

impl<'a> XerialSnappy<'a> {
    fn new(data: &'a [u8]) -> io::Result<Self> {
        if data.len() < XERIAL_HEADER_LEN {
            return Err(invalid(format!(
                "snappy stream header is cut short ({} of {XERIAL_HEADER_LEN} bytes)",
                data.len()
            )));
        }
        Ok(Self {
            rest: &data[XERIAL_HEADER_LEN..],
            block: Vec::new(),
            pos: 0,
        })
    }

    /// Decodes the next chunk into `block`; false at the end of the stream.
    fn next_chunk(&mut self) -> io::Result<bool> {
        loop {
            if self.rest.is_empty() {
                return Ok(false);
            }
            if self.rest.len() >= XERIAL_MAGIC.len() && self.rest[..8] == XERIAL_MAGIC {
                if self.rest.len() < XERIAL_HEADER_LEN {
                    return Err(invalid("snappy stream header is cut short".into()));
                }
                self.rest = &self.rest[XERIAL_HEADER_LEN..];
                continue;
            }
            if self.rest.len() < 4 {
                return Err(invalid(format!(
                    "snappy chunk length is cut short ({} of 4 bytes)",
                    self.rest.len()
                )));
            }
            let len = i32::from_be_bytes(self.rest[..4].try_into().expect("4 bytes"));
            let body = &self.rest[4..];
            if len < 0 || len as usize > body.len() {
                return Err(invalid(format!(
                    "snappy chunk length {len} is negative or past the {} bytes left",
                    body.len()
                )));
            }
            let (chunk, rest) = body.split_at(len as usize);
            self.rest = rest;
            // A chunk is bounded by its own length (× the largest expansion), so `usize::MAX` as the limit here
            // still bounds memory by the batch's real size.
            self.block = snappy_block(chunk, usize::MAX)?;
            self.pos = 0;
            if !self.block.is_empty() {
                return Ok(true);
            }
        }
    }
}

impl Read for XerialSnappy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let mut avail = self.fill_buf()?;
            avail.read(buf)?
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for XerialSnappy<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.block.len() && !self.next_chunk()? {
            return Ok(&[]);
        }
        Ok(&self.block[self.pos..])
    }
    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.block.len());
    }
}

/// An lz4 frame; bytes after the frame's end mark are an error (the lz4 decoder alone would ignore them).
struct Lz4Frame<'a> {
    decoder: lz4::Decoder<&'a [u8]>,
    done: bool,
}

impl<'a> Lz4Frame<'a> {
    fn new(data: &'a [u8]) -> io::Result<Self> {
        Ok(Self {
            decoder: lz4::Decoder::new(data)?,
            done: false,
        })
    }
}

impl Read for Lz4Frame<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        let n = self.decoder.read(buf)?;
        if n == 0 {
            self.done = true;
            let left = self.decoder.reader().len();
            if left > 0 {
                return Err(invalid(format!(
                    "lz4 frame ends with {left} compressed bytes unread"
                )));
            }
        }
        Ok(n)
    }
}

/// Compresses `data` (a batch's records) with `codec`, appending to `out`, in the framing Kafka's Java client
/// writes (so every client reads it): gzip at the default level, snappy in xerial-snappy framing (32 KiB blocks,
/// as snappy-java's `SnappyOutputStream`), lz4 as a frame of independent 64 KiB blocks without checksums (Kafka's
/// `Lz4BlockOutputStream`), zstd at level 3 (Kafka's default). Used by the log cleaner when it re-encodes a batch
/// it dropped records from: the batch keeps its codec.
pub(crate) fn compress(codec: Compression, data: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    compress_at(codec, None, data, out)
}

/// [`compress`] at `level` (Kafka's `compression.gzip.level` -1 or 1..=9, `compression.lz4.level` 1..=17,
/// `compression.zstd.level`); `None` or gzip's -1 is the codec's default. Snappy has no level.
pub(crate) fn compress_at(
    codec: Compression,
    level: Option<i32>,
    data: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    use std::io::Write;
    match codec {
        Compression::None => out.extend_from_slice(data),
        Compression::Gzip => {
            let level = match level {
                Some(l @ 1..=9) => flate2::Compression::new(l as u32),
                _ => flate2::Compression::default(),
            };
            let mut e = flate2::write::GzEncoder::new(out, level);
            e.write_all(data)?;
            e.finish()?;
        }
        Compression::Snappy => {
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&1i32.to_be_bytes()); // version
            out.extend_from_slice(&1i32.to_be_bytes()); // compatible version
            let mut enc = snap::raw::Encoder::new();
            for chunk in data.chunks(32 << 10) {
                let block = enc
                    .compress_vec(chunk)
                    .map_err(|e| invalid(format!("snappy: {e}")))?;
                out.extend_from_slice(&(block.len() as i32).to_be_bytes());
                out.extend_from_slice(&block);
            }
        }
        Compression::Lz4 => {
            let mut e = lz4::EncoderBuilder::new()
                .block_size(lz4::BlockSize::Max64KB)
                .block_mode(lz4::BlockMode::Independent)
                .block_checksum(lz4::liblz4::BlockChecksum::NoBlockChecksum)
                .checksum(lz4::ContentChecksum::NoChecksum)
                .level(level.map_or(0, |l| l.clamp(1, 17) as u32))
                .build(out)?;
            e.write_all(data)?;
            let (_, res) = e.finish();
            res?;
        }
        Compression::Zstd => {
            let mut e = zstd::stream::write::Encoder::new(out, level.unwrap_or(3))?;
            e.write_all(data)?;
            e.finish()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(codec: Compression, data: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decompressed(codec, data, 1 << 20)?.read_to_end(&mut out)?;
        Ok(out)
    }

    fn xerial(chunks: &[&[u8]]) -> Vec<u8> {
        let mut out = XERIAL_MAGIC.to_vec();
        out.extend_from_slice(&1i32.to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
        for c in chunks {
            let block = snap::raw::Encoder::new().compress_vec(c).unwrap();
            out.extend_from_slice(&(block.len() as i32).to_be_bytes());
            out.extend_from_slice(&block);
        }
        out
    }

    #[test]
    fn what_compress_writes_every_codec_reads_back() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut out = Vec::new();
            compress(codec, &data, &mut out).unwrap();
            assert_eq!(read_all_big(codec, &out).unwrap(), data, "{codec:?}");
        }
    }

    fn read_all_big(codec: Compression, data: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decompressed(codec, data, 1 << 24)?.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn every_codec_round_trips() {
        let plain = b"hello records, hello records, hello records".repeat(50);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&plain).unwrap();
        let gz = gz.finish().unwrap();
        let zs = zstd::encode_all(&plain[..], 3).unwrap();
        let mut lz = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
        lz.write_all(&plain).unwrap();
        let (lz, r) = lz.finish();
        r.unwrap();
        let raw_snappy = snap::raw::Encoder::new().compress_vec(&plain).unwrap();
        let (a, b) = plain.split_at(700);
        for (codec, data) in [
            (Compression::Gzip, gz),
            (Compression::Zstd, zs),
            (Compression::Lz4, lz),
            (Compression::Snappy, raw_snappy),
            (Compression::Snappy, xerial(&[a, b])),
        ] {
            assert_eq!(read_all(codec, &data).unwrap(), plain, "{codec:?}");
        }
    }

    #[test]
    fn payloads_that_are_not_of_their_codec_are_errors() {
        let junk = b"this is not compressed at all, just text".to_vec();
        for codec in [
            Compression::Gzip,
            Compression::Zstd,
            Compression::Lz4,
            Compression::Snappy,
        ] {
            assert!(read_all(codec, &junk).is_err(), "{codec:?}");
        }
    }

    #[test]
    fn snappy_block_declaring_more_than_it_can_hold_is_refused_before_allocating() {
        // Preamble varint 0xffff_ffff-ish: 4 GiB declared by a 6-byte block.
        let block = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
        let err = read_all(Compression::Snappy, &block).unwrap_err();
        assert!(err.to_string().contains("at most"), "{err}");
    }

    #[test]
    fn raw_snappy_over_the_limit_is_refused() {
        let plain = vec![0u8; 4 << 20];
        let block = snap::raw::Encoder::new().compress_vec(&plain).unwrap();
        let err = decompressed(Compression::Snappy, &block, 1 << 20)
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
    }

    #[test]
    fn zstd_window_above_the_bound_is_refused() {
        let plain = vec![7u8; 1 << 16];
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.set_parameter(zstd::zstd_safe::CParameter::WindowLog(
            ZSTD_WINDOW_LOG_MAX + 2,
        ))
        .unwrap();
        enc.write_all(&plain).unwrap();
        let data = enc.finish().unwrap();
        assert!(read_all(Compression::Zstd, &data).is_err());
    }

    #[test]
    fn lz4_bytes_after_the_frame_are_refused() {
        let mut lz = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
        lz.write_all(b"abc").unwrap();
        let (mut lz, r) = lz.finish();
        r.unwrap();
        lz.extend_from_slice(b"trailing");
        assert!(read_all(Compression::Lz4, &lz).is_err());
    }
}
