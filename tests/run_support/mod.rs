//! Shared by the end-to-end tests that run the `perflab` binary: the command from the crate's
//! root, a quick unaligned run of one experiment into an out directory, JSON files read with
//! the path in the panic. Each test file uses only some of these.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub mod bounds;
pub mod shared;

/// `perflab` (this build) with the crate's root as its working directory (the catalog).
pub fn perflab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// `perflab --quiet run ID --quick --no-align --out OUT EXTRA...`, which must succeed; the run
/// directory it made (`OUT/ID/latest`, resolved).
pub fn run_quick_into(out: &Path, id: &str, extra: &[&str]) -> PathBuf {
    let st = perflab()
        .args(["--quiet", "run", id, "--quick", "--no-align", "--out"])
        .arg(out)
        .args(extra)
        .status()
        .unwrap();
    assert!(st.success(), "perflab run {id} {extra:?} exited with {st}");
    let dir = out.join(id).join("latest").canonicalize().unwrap();
    bounds::assert_run_within_bounds(&dir);
    dir
}

/// [`run_quick_into`] a fresh temporary out directory, kept alive by the caller.
pub fn run_quick(id: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let dir = run_quick_into(out.path(), id, extra);
    (out, dir)
}

/// A JSON file, or a panic naming it.
pub fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
