//! Shared by the verify tests: the recorded fixture runs.
use perflab::verify::load::{self, LoadedRun};
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded run `tests/fixtures/<set>/<exp>/<run>`.
pub fn fixture(set: &str, exp: &str, run: &str) -> LoadedRun {
    load::load_run(&root().join("tests/fixtures").join(set).join(exp).join(run)).unwrap()
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

/// Experiment `exp` as the repository's catalog declares it (claims, marks and all).
pub fn catalog_experiment(exp: &str) -> perflab::experiment::Experiment {
    let cat = perflab::experiment::Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap_or_else(|d| panic!("{}", perflab::experiment::diag::render(&d)));
    match &cat.get(exp).unwrap_or_else(|| panic!("no {exp}")).entry {
        perflab::experiment::CatalogEntry::Experiment(e) => e.clone(),
        perflab::experiment::CatalogEntry::Group(_) => panic!("{exp} is a group"),
    }
}
