//! Every end-to-end test of the root package in one test binary (`cargo test --test it`; one module per file
//! of `tests/`, e.g. `cargo test --test it groups_clients::`). One binary instead of one per file: the tests
//! share `common` and the whole broker, so ~70 separate binaries cost ~70 links of 110 MiB each on a 2-core CI
//! machine, and a long test in one file no longer leaves the other test thread idle. `fuzz_smoke` stays its own
//! binary: it counts panics on every thread of its process.

mod common;
/// Raw group requests (classic and KIP-848) several files share.
mod groups {
    pub mod cgh;
    pub mod raw;
}

mod acl_groups;
mod acl_matrix;
mod acl_store;
mod acl_tls;
mod admin_describe;
mod admin_no_authorizer;
mod aiven_config;
mod api_versions_range;
mod bad_input;
mod compaction;
mod compaction_crash;
mod compaction_offsets;
mod console;
mod console_browser;
mod crash_loop;
mod delete_topics_async;
mod describe_producers;
mod differential;
mod differential_kafka;
mod dynamic_broker_configs;
mod dynamic_components;
mod dynamic_remote_quotas;
mod e2e_clients;
mod e2e_process;
mod embedded;
mod faults;
mod group_configs;
mod groups_classic;
mod groups_clients;
mod groups_kip848;
mod groups_kip848_fencing;
mod groups_kip848_state;
mod groups_store_errors;
mod hardening_connections;
mod hardening_ids;
mod hardening_limits;
mod hardening_open_files;
mod hostile_batches;
mod kafka_log_dir;
mod kafka_parity;
mod kafka_setups;
mod legacy_formats;
mod legacy_versions;
mod listeners;
mod long_topic_names;
mod message_timestamps;
mod newest_versions;
mod produce_record_errors;
mod protocol;
mod protocol_admin;
mod remote_fetch_race;
mod sasl_handshake_v0;
mod sasl_oauthbearer;
mod sasl_reauth;
mod tiering_clouds;
mod tiering_e2e;
mod tiering_legacy_json;
mod tiering_metadata_damage;
mod tiering_rules;
mod tiering_s3;
mod tls_sasl;
mod topic_compression;
mod topic_configs;
mod transactions;
mod transactions_clients;
mod transactions_crash;
mod transactions_tiered;
