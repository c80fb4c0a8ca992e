//! Property tests: random segments, chunk sizes and byte ranges read back equal to the original, with
//! compression and encryption on and off.
use proptest::prelude::*;
use strata_tiering::testing::{segment_bytes, segment_metadata, write_segment_files};
use strata_tiering::{IndexType, ObjectStoreRsm, RemoteStorageManager, RemoteStorageManagerExt};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_ranges_read_back_equal(
        len in 0usize..150_000,
        seed in any::<u64>(),
        compressible in any::<bool>(),
        chunk_size in prop_oneof![Just(1024u64), Just(4096), 100u64..20_000, Just(65_536)],
        compression in any::<bool>(),
        encryption in any::<bool>(),
        cache in any::<bool>(),
        ranges in proptest::collection::vec((any::<u64>(), proptest::option::of(any::<u64>())), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("kek");
        std::fs::write(&key, [0x42u8; 32]).unwrap();
        let key = key.display().to_string();
        let chunk = chunk_size.to_string();
        let mut props = vec![
            ("storage.backend", "memory"),
            ("chunk.size", chunk.as_str()),
            ("compression.enabled", if compression { "true" } else { "false" }),
            ("encryption.enabled", if encryption { "true" } else { "false" }),
            ("encryption.key.file", key.as_str()),
        ];
        if !cache {
            props.push(("fetch.chunk.cache.size", "0"));
        }
        let rsm = ObjectStoreRsm::from_props(props).unwrap();
        let log = segment_bytes(len, seed, compressible);
        let files = write_segment_files(dir.path(), 0, log.clone(), seed % 2 == 0);
        let meta = segment_metadata("prop", 0, 0, len as u64);
        runtime().block_on(async {
            rsm.copy_log_segment_data(&meta, files.data.clone()).await.unwrap();
            prop_assert_eq!(rsm.fetch_log_segment_bytes(&meta, 0, None).await.unwrap(), log.clone());
            for (s, e) in ranges {
                if len == 0 {
                    break;
                }
                let start = s % len as u64;
                let end = e.map(|e| start + e % (len as u64 + 10));
                let got = rsm.fetch_log_segment_bytes(&meta, start, end).await.unwrap();
                let last = end.map_or(len as u64 - 1, |e| e.min(len as u64 - 1));
                prop_assert_eq!(got, log.slice(start as usize..=last as usize), "range [{}, {:?}]", start, end);
            }
            prop_assert_eq!(rsm.fetch_index(&meta, IndexType::Offset).await.unwrap(), files.offset_index.clone());
            match &files.transaction_index {
                Some(t) => prop_assert_eq!(&rsm.fetch_index(&meta, IndexType::Transaction).await.unwrap(), t),
                None => prop_assert!(rsm.fetch_index(&meta, IndexType::Transaction).await.unwrap_err().is_not_found()),
            }
            Ok(())
        })?;
    }
}
