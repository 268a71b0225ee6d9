//! The run directory's layout (`rundir::layout`) against its docs (docs/reports.md, "The run
//! directory") and against recorded run directories: the docs list every path the layout
//! names and no other, every file of a recorded run is one the layout names, and the analysis
//! reads a recorded run through the layout's paths.
use perflab::rundir::contract::{self, Manifest, Plan, RunState};
use perflab::rundir::layout::{self, Layout, SampleFile};
use perflab::rundir::read::{self, FileKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The paths in the first column of the table under `## The run directory` in docs/reports.md.
fn documented_paths() -> Vec<String> {
    let md = std::fs::read_to_string(root().join("docs/reports.md")).unwrap();
    let section = md
        .split("\n## The run directory\n")
        .nth(1)
        .expect("docs/reports.md has a section `## The run directory`");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(p, _)| p.to_string()))
        .collect()
}

/// Does `path` (relative, `/`-separated) match `pattern`, whose `<placeholder>`s stand for a
/// non-empty part of one path segment?
fn matches(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'<') => {
                let rest = &p[p.iter().position(|&c| c == b'>').unwrap() + 1..];
                (1..=s.len())
                    .take_while(|&n| s[n - 1] != b'/')
                    .any(|n| go(rest, &s[n..]))
            }
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn the_docs_list_every_path_the_layout_names_and_no_other() {
    let names = layout::names();
    let docs = documented_paths();
    assert!(docs.len() > 20, "the table was not found: {docs:?}");
    let (n, d): (BTreeSet<&String>, BTreeSet<&String>) =
        (names.iter().collect(), docs.iter().collect());
    let undocumented: Vec<_> = n.difference(&d).collect();
    let unknown: Vec<_> = d.difference(&n).collect();
    assert!(
        undocumented.is_empty(),
        "docs/reports.md does not list {undocumented:?}"
    );
    assert!(
        unknown.is_empty(),
        "docs/reports.md lists {unknown:?}, which the layout does not name"
    );
    assert_eq!(docs.len(), d.len(), "a path is listed twice: {docs:?}");
}

#[test]
fn the_pattern_matcher_keeps_placeholders_within_a_segment() {
    assert!(matches("k6/g<i>/summary.json", "k6/g1/summary.json"));
    assert!(!matches("k6/g<i>/summary.json", "k6/g1/x/summary.json"));
    assert!(!matches("k6/g<i>/summary.json", "k6/g/summary.json"));
    assert!(matches("logs/<name>.log", "logs/php-fpm.log"));
    assert!(!matches("logs/<name>.log", "logs/access/fpm.log"));
    assert!(!matches("report.json", "report.jsonx"));
}

#[test]
fn every_file_of_the_recorded_run_directories_is_one_the_layout_names() {
    let files: Vec<String> = layout::names()
        .into_iter()
        .filter(|n| !n.ends_with('/'))
        .collect();
    for run in [
        "tests/fixtures/rundir-v1/demo-open/20261130T193727Z-r1",
        "tests/fixtures/hostcpu/2a-shared",
    ] {
        let found = files_under(&root().join(run));
        assert!(found.len() >= 4, "{run}: {found:?}");
        for f in found {
            assert!(
                files.iter().any(|p| matches(p, &f)),
                "{run}/{f} is no path of the layout"
            );
        }
    }
}

#[test]
fn a_recorded_run_directory_reads_through_the_layout() {
    let dir = root().join("tests/fixtures/hostcpu/2a-shared");
    let l = Layout::new(&dir);
    // The contract's types, read from the layout's paths by the bounded reader.
    let doc = |p: PathBuf, kind| read::doc(&l.file(p, kind)).unwrap().text;
    let m = Manifest::parse(&doc(l.manifest(), FileKind::Manifest)).unwrap();
    assert_eq!(m, perflab::rundir::read_manifest(&dir).unwrap());
    let plan: Plan = serde_json::from_str(&doc(l.plan(), FileKind::Plan)).unwrap();
    assert_eq!(plan, m.plan);
    let status: contract::Status =
        serde_json::from_str(&doc(l.status(), FileKind::Status)).unwrap();
    assert_eq!(
        status.state,
        perflab::rundir::read_status(&dir).unwrap().state
    );
    assert_ne!(status.state, RunState::Running);
    let cg: (Vec<contract::samples::CgroupSample>, _, _) =
        read::jsonl(&l.file(l.samples(SampleFile::Cgroup), FileKind::Samples)).unwrap();
    assert!(!cg.0.is_empty());
    // The analysis' inputs come from the same paths, and name them as the layout does.
    let inputs = perflab::rundir::inputs::run_dir(&dir).unwrap();
    assert_eq!(inputs.samples.cgroup.len(), cg.0.len());
    assert_eq!(inputs.source.csv, l.rel(&l.k6().requests_csv_gz()));
    assert_eq!(inputs.source.summary, Some(l.rel(&l.k6().summary())));
    assert_eq!(inputs.source.csv, "k6/requests.csv.gz");
    let logs: BTreeSet<String> = inputs.logs.keys().cloned().collect();
    let on_disk: BTreeSet<String> = files_under(&l.logs_dir())
        .into_iter()
        .filter_map(|f| f.strip_suffix(".log").map(str::to_string))
        .collect();
    assert_eq!(logs, on_disk);
    assert!(logs.iter().all(|n| l.log(n).is_file()));
}
