//! Shared by the verify tests: the recorded fixture runs.
use perflab::verify::load::{self, LoadedRun};
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The newest complete real run of `exp` in `tests/fixtures/verify`.
pub fn real(exp: &str) -> LoadedRun {
    let mut skipped = Vec::new();
    load::newest_complete(
        &root().join("tests/fixtures/verify"),
        exp,
        None,
        &mut skipped,
    )
    .unwrap_or_else(|| panic!("no fixture run of {exp} ({skipped:?})"))
}
