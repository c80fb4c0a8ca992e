//! The conformance suite against the in-memory manager.
use strata_metadata::conformance::rlmm_conformance;
use strata_metadata::InMemoryRemoteLogMetadataManager;

#[tokio::test]
async fn in_memory_manager_passes_conformance() {
    let rlmm = InMemoryRemoteLogMetadataManager::new();
    rlmm_conformance(&rlmm).await;
}
