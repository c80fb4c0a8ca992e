//! The vendored kafka-protocol differs from the published 0.18.0 only where its patch note says: every file hashes
//! as in `UPSTREAM.sha256` (the published crate's files) unless STRATA-PATCH.md lists it as `patched`; files it
//! lists as `removed` are absent; any other file is listed as `added`.
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn vendored_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vendor/kafka-protocol-0.18.0")
}

/// `path → sha256 hex` from `UPSTREAM.sha256` (sha256sum format).
fn upstream_manifest(dir: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(dir.join("UPSTREAM.sha256")).expect("reading UPSTREAM.sha256");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (hash, path) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("malformed manifest line {l:?}"));
            (path.to_string(), hash.to_string())
        })
        .collect()
}

/// The `patched` / `removed` / `added` entries of STRATA-PATCH.md's file list.
#[derive(Default)]
struct PatchNote {
    patched: Vec<String>,
    removed: Vec<String>,
    added: Vec<String>,
}

impl PatchNote {
    fn read(dir: &Path) -> Self {
        let text =
            fs::read_to_string(dir.join("STRATA-PATCH.md")).expect("reading STRATA-PATCH.md");
        let mut note = PatchNote::default();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let (Some(kind), Some(path), None) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            match kind {
                "patched" => note.patched.push(path.to_string()),
                "removed" => note.removed.push(path.to_string()),
                "added" => note.added.push(path.to_string()),
                _ => {}
            }
        }
        assert!(
            !note.patched.is_empty(),
            "STRATA-PATCH.md lists no patched files"
        );
        note
    }
}

/// Whether `path` is `entry` or lies under it (an entry ending in `/` is a directory).
fn covers(entry: &str, path: &str) -> bool {
    match entry.strip_suffix('/') {
        Some(dir) => path.starts_with(dir) && path[dir.len()..].starts_with('/'),
        None => entry == path,
    }
}

fn files_under(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files_under(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).expect("under the root");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn sha256_hex(path: &Path) -> String {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every way the vendored directory departs from the manifest and the patch note.
fn departures(dir: &Path) -> Vec<String> {
    let upstream = upstream_manifest(dir);
    let note = PatchNote::read(dir);
    let listed = |list: &[String], path: &str| list.iter().any(|e| covers(e, path));
    let mut present = Vec::new();
    files_under(dir, dir, &mut present);
    let mut problems = Vec::new();
    for (path, hash) in &upstream {
        let file = dir.join(path);
        let removed = listed(&note.removed, path);
        match (file.is_file(), removed) {
            (true, true) => problems.push(format!("{path}: listed as removed but present")),
            (false, true) => {}
            (false, false) => problems.push(format!("{path}: missing, not listed as removed")),
            (true, false) => {
                let same = sha256_hex(&file) == *hash;
                let patched = listed(&note.patched, path);
                if !same && !patched {
                    problems.push(format!(
                        "{path}: differs from upstream 0.18.0, not listed as patched"
                    ));
                }
                if same && patched {
                    problems.push(format!(
                        "{path}: listed as patched but identical to upstream"
                    ));
                }
            }
        }
    }
    for path in &present {
        if !upstream.contains_key(path) && !listed(&note.added, path) {
            problems.push(format!(
                "{path}: not in upstream 0.18.0, not listed as added"
            ));
        }
    }
    for entry in note.patched.iter().chain(&note.removed) {
        if !upstream.keys().any(|p| covers(entry, p)) {
            problems.push(format!(
                "{entry}: listed in STRATA-PATCH.md but not an upstream file"
            ));
        }
    }
    problems
}

#[test]
fn vendored_kafka_protocol_differs_from_upstream_only_where_the_patch_note_says() {
    let problems = departures(&vendored_dir());
    assert!(
        problems.is_empty(),
        "vendor/kafka-protocol-0.18.0 vs UPSTREAM.sha256 + STRATA-PATCH.md:\n{}",
        problems.join("\n")
    );
}

#[test]
fn an_unlisted_change_to_a_vendored_file_is_reported() {
    // A copy of the vendored directory with one unpatched upstream file edited must fail the check.
    let src = vendored_dir();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    files_under(&src, &src, &mut files);
    for rel in &files {
        let to = tmp.path().join(rel);
        fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        fs::copy(src.join(rel), &to).expect("copy");
    }
    assert!(
        departures(tmp.path()).is_empty(),
        "the unmodified copy passes"
    );
    let lib = tmp.path().join("src/lib.rs");
    let mut text = fs::read_to_string(&lib).expect("read lib.rs");
    text.push_str("\n// an unlisted change\n");
    fs::write(&lib, text).expect("write lib.rs");
    fs::write(tmp.path().join("src/extra.rs"), "").expect("write extra.rs");
    let problems = departures(tmp.path());
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("src/lib.rs: differs")),
        "edit not reported: {problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("src/extra.rs: not in upstream")),
        "{problems:?}"
    );
}
