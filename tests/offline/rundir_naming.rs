//! Run directories: naming, never overwritten, `latest`, manifest/status, stale-run detection.
use chrono::{TimeZone, Utc};
use perflab::experiment::{Catalog, CatalogEntry};
use perflab::plan::{self, PlanOptions};
use perflab::rundir::{self, Manifest, RunDir, RunState, Status};
use std::path::Path;

fn when() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 0, 43, 56).unwrap()
}

#[test]
fn name_is_utc_timestamp_and_round() {
    let out = tempfile::tempdir().unwrap();
    let r = RunDir::create_at(out.path(), "exp1", 2, when()).unwrap();
    assert_eq!(r.path, out.path().join("exp1/20261130T004356Z-r2"));
    assert_eq!(r.name(), "20261130T004356Z-r2");
    assert_eq!(r.status().unwrap().state, RunState::Running);
    assert_eq!(r.status().unwrap().pid, std::process::id());
}

/// The names run directories get are the names the pages link; the experiment's folder is a
/// real directory, never a link out of the out/ root.
#[test]
fn names_given_are_names_linked_and_no_link_is_followed() {
    let out = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let r = RunDir::create_at(out.path(), "exp1", 12, when()).unwrap();
        assert!(rundir::valid_run_name(&r.name()), "{}", r.name());
    }
    for bad in [
        "latest",
        "20261130T004356Z",
        "20261130T004356Z-r1-x",
        "x20261130T004356Z-r1",
    ] {
        assert!(!rundir::valid_run_name(bad), "{bad}");
    }
    let away = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(away.path(), out.path().join("1a")).unwrap();
    let e = RunDir::create_at(out.path(), "1a", 1, when()).unwrap_err();
    assert!(format!("{e:#}").contains("1a: a symbolic link"), "{e:#}");
    assert!(std::fs::read_dir(away.path()).unwrap().next().is_none());
}

#[test]
fn clash_gets_a_suffix_and_latest_follows() {
    let out = tempfile::tempdir().unwrap();
    let a = RunDir::create_at(out.path(), "1a", 1, when()).unwrap();
    std::fs::write(a.file("keep.txt"), "first run").unwrap();
    let b = RunDir::create_at(out.path(), "1a", 1, when()).unwrap();
    let c = RunDir::create_at(out.path(), "1a", 1, when()).unwrap();
    assert_eq!(b.name(), "20261130T004356Z-r1-2");
    assert_eq!(c.name(), "20261130T004356Z-r1-3");
    assert_eq!(
        std::fs::read_to_string(a.file("keep.txt")).unwrap(),
        "first run",
        "never overwritten"
    );
    let latest = out.path().join("1a/latest");
    assert_eq!(
        std::fs::read_link(&latest).unwrap(),
        Path::new("20261130T004356Z-r1-3")
    );
    assert!(
        latest.join("status.json").exists(),
        "relative link resolves"
    );
    let later =
        RunDir::create_at(out.path(), "1a", 2, when() + chrono::Duration::seconds(1)).unwrap();
    assert_eq!(
        std::fs::read_link(&latest).unwrap(),
        Path::new(&later.name())
    );
    let runs = rundir::list_runs(out.path(), Some("1a"));
    assert_eq!(runs.len(), 4);
    assert_eq!(runs.last().unwrap().round, 2);
    let reopened = RunDir::open(&b.path).unwrap();
    assert_eq!(
        (
            reopened.experiment_id.as_str(),
            reopened.round,
            reopened.created
        ),
        ("1a", 1, when())
    );
}

#[test]
fn rejects_ids_that_would_escape_out() {
    let out = tempfile::tempdir().unwrap();
    assert!(RunDir::create_at(out.path(), "../x", 1, when()).is_err());
}

#[test]
fn manifest_and_status_are_written_and_read_back() {
    let out = tempfile::tempdir().unwrap();
    let cat = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &cat.get("1c").unwrap().entry else {
        panic!()
    };
    let r = RunDir::create(out.path(), "1c", 1).unwrap();
    let p = plan::build(e, PlanOptions { quick: true });
    let layout = plan::layout::auto(&plan::CpuSet::parse("0-3").unwrap()).unwrap();
    let mut m = Manifest::new(&r, e.clone(), vec!["hold_s=10".into()], p.clone(), layout);
    m.components.insert("postgres".into(), "17.6".into());
    r.write_manifest(&m).unwrap();
    let back = r.read_manifest().unwrap();
    assert_eq!(back, m);
    assert_eq!(back.schema_version, rundir::MANIFEST_SCHEMA_VERSION);
    assert_eq!(back.perflab.version, env!("CARGO_PKG_VERSION"));
    assert!(back.host.online_cpu_count >= 1);
    assert!(back.host.kernel.is_some() && back.host.memory_bytes.is_some());
    assert_eq!(
        r.read_plan().unwrap(),
        p,
        "plan.json is the manifest's plan"
    );
    r.mark(RunState::Complete, None).unwrap();
    assert_eq!(r.status().unwrap().state, RunState::Complete);
    r.mark(RunState::Failed, Some("stack did not become ready"))
        .unwrap();
    let s = r.status().unwrap();
    assert_eq!(
        (s.state, s.reason.as_deref()),
        (RunState::Failed, Some("stack did not become ready"))
    );
    // no temp files left behind by the atomic writes
    let leftovers: Vec<_> = std::fs::read_dir(&r.path)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn git_commit_is_recorded_when_in_a_checkout() {
    let v = perflab::host::PerflabVersion::current();
    let in_git = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert_eq!(
        v.git_commit.is_some(),
        in_git || std::env::var("PERFLAB_GIT_COMMIT").is_ok()
    );
    if let Some(c) = v.git_commit {
        assert!(
            c.len() >= 7 && c.chars().all(|x| x.is_ascii_hexdigit()),
            "{c}"
        );
    }
}

#[test]
fn running_runs_of_dead_processes_are_marked_aborted() {
    let out = tempfile::tempdir().unwrap();
    let dead = RunDir::create_at(out.path(), "exp1", 1, when()).unwrap();
    let alive = RunDir::create_at(out.path(), "1a", 1, when()).unwrap();
    let done = RunDir::create_at(out.path(), "1b", 1, when()).unwrap();
    done.mark(RunState::Complete, None).unwrap();
    // a process that has exited: its pid is not running any more
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let mut s = Status::new(RunState::Running, None);
    s.pid = pid;
    s.pid_start_ticks = Some(1);
    dead.set_status(&s).unwrap();
    let marked = rundir::mark_stale_runs(out.path());
    assert_eq!(
        marked.iter().map(|r| r.path.clone()).collect::<Vec<_>>(),
        vec![dead.path.clone()]
    );
    let st = dead.status().unwrap();
    assert_eq!(st.state, RunState::Aborted);
    assert!(st.reason.unwrap().contains("died"));
    assert_eq!(
        alive.status().unwrap().state,
        RunState::Running,
        "our own run is alive"
    );
    assert_eq!(done.status().unwrap().state, RunState::Complete);
}

#[test]
fn pid_reuse_is_not_mistaken_for_the_owner() {
    let mut s = Status::new(RunState::Running, None);
    assert!(rundir::owner_alive(&s));
    s.pid_start_ticks = s.pid_start_ticks.map(|t| t + 1);
    assert!(
        !rundir::owner_alive(&s),
        "same pid, other start time = another process"
    );
}
