//! The wall clock, as Kafka timestamps read it.

/// Milliseconds since the Unix epoch (0 if the clock reads before the epoch). The one wall clock of every strata
/// crate: storage is the lowest of them, so metadata, tiering and the broker use this one.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
