//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/`) through the fuzz targets'
//! entry functions on the stable toolchain, without libFuzzer: every input that ever crashed,
//! hung or blew up memory stays fixed. Each replay runs under a time limit.
#[path = "../../fuzz/entries.rs"]
mod entries;

use std::path::Path;
use std::time::{Duration, Instant};

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "{}: corpus lost? {} files",
        dir.display(),
        files.len()
    );
    for f in files {
        let data = std::fs::read(&f).unwrap();
        let t = Instant::now();
        entry(&data);
        // debug build, shared CPU: generous, but a quadratic or unbounded input takes far longer
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{} took {:?}",
            f.display(),
            t.elapsed()
        );
    }
}

#[test]
fn experiment_yaml_corpus() {
    replay("experiment_yaml", entries::experiment_yaml);
}

#[test]
fn k6_csv_corpus() {
    replay("k6_csv", entries::k6_csv);
}

#[test]
fn samples_jsonl_corpus() {
    replay("samples_jsonl", entries::samples_jsonl);
}

#[test]
fn run_json_corpus() {
    replay("run_json", entries::run_json);
}

#[test]
fn cli_strings_corpus() {
    replay("cli_strings", entries::cli_strings);
}

#[test]
fn expression_corpus() {
    replay("expression", entries::expression);
}

#[test]
fn catalog_corpus() {
    replay("catalog", entries::catalog);
}

#[test]
fn plan_file_corpus() {
    replay("plan_file", entries::plan_file);
}

#[test]
fn hosts_file_corpus() {
    replay("hosts_file", entries::hosts_file);
}
