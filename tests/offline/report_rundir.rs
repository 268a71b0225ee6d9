//! `perflab report RUN-DIR` and `perflab analyze` end to end (the binary), on a run directory
//! built from a real k6 fixture plus constructed server samples in the samplers' formats.
use crate::report_support::copy_dir;
use assert_cmd::Command;
use perflab::experiment::{Catalog, CatalogEntry};
use perflab::plan::{self, PlanOptions};
use perflab::rundir::{Manifest, RunDir, RunState, Status};
use predicates::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn fixture(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

fn perflab() -> Command {
    Command::cargo_bin("perflab").unwrap()
}

/// A run directory from `stepped-open` with samples: the 120 rps step (the last 4 s) shows
/// fpm 4/4 busy with a listen queue, the database idle in ClientRead.
fn run_dir(with_samples: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fill_run_dir(d.path(), with_samples);
    d
}

/// [`run_dir`]'s files written into `dir` (made if missing).
fn fill_run_dir(dir: &Path, with_samples: bool) {
    let k6 = dir.join("k6");
    std::fs::create_dir_all(&k6).unwrap();
    std::fs::copy(
        fixture("stepped-open", "csv.gz"),
        k6.join("requests.csv.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("stepped-open", "summary.json"),
        k6.join("summary.json"),
    )
    .unwrap();
    std::fs::copy(fixture("stepped-open", "log"), k6.join("k6.log")).unwrap();
    write_manifest(dir);
    if with_samples {
        write_samples(dir);
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let mut nginx = String::new();
        for i in 0..5 {
            writeln!(nginx, "2026/11/30 00:46:2{i} [error] 29#29: *{} upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.0.0.2, server: _", 100 + i).unwrap();
        }
        std::fs::write(logs.join("nginx.log"), nginx).unwrap();
    }
}

/// The experiment `stepped-open` was recorded with (demo server 4 workers x 40 ms, steps
/// 20..120 rps held 4 s, SLO 200 ms, no abort, 600 VUs, 1 s timeout), its plan from
/// `plan::build`, written by the run's own writer with a 2-CPU layout (the app on cpu 1).
fn write_manifest(dir: &Path) {
    let cat = Catalog::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &cat.get("demo-open").unwrap().entry else {
        panic!()
    };
    let mut e = e.clone();
    let l = &mut e.load;
    (l.steps, l.hold_s, l.slo_p95_ms, l.slo_p99_ms) =
        (vec![20, 40, 60, 80, 100, 120], 4, 200.0, None);
    (l.abort, l.max_vus, l.timeout_s) = (false, 600, 1);
    let demo = e.stack.demo.as_mut().unwrap();
    (demo.workers, demo.service_ms) = (4, 40);
    let run = RunDir {
        path: dir.to_path_buf(),
        experiment_id: e.id.clone(),
        round: 1,
        created: chrono::Utc::now(),
    };
    let layout = plan::layout::auto(&plan::CpuSet::parse("0-1").unwrap()).unwrap();
    let p = plan::build(&e, PlanOptions::default());
    run.write_manifest(&Manifest::new(&run, e, vec![], p, layout))
        .unwrap();
}

fn write_samples(dir: &Path) {
    let data = perflab::rundir::inputs::k6_csv(&perflab::rundir::read::RunFile::at(
        dir,
        "k6/requests.csv.gz",
        perflab::rundir::read::FileKind::K6Csv,
    ))
    .unwrap()
    .0;
    let knee_start = data.steps.last().unwrap().first_start_ms;
    let (a, b) = (
        data.first_ms.unwrap() / 1000 - 2,
        data.last_ms.unwrap() / 1000 + 2,
    );
    let s = dir.join("samples");
    std::fs::create_dir_all(&s).unwrap();
    let (mut cg, mut host, mut fpm, mut pg) =
        (String::new(), String::new(), String::new(), String::new());
    for sec in a..b {
        let t = sec * 1000;
        let knee = t >= knee_start;
        let demo = if knee { 0.97 } else { 0.4 };
        writeln!(cg, r#"{{"t":{t},"role":"demo","container":"perflab-demo","cpu_cores":{demo},"mem_bytes":10485760,"throttled_ms":0.0,"psi_some_avg10":null}}"#).unwrap();
        writeln!(cg, r#"{{"t":{t},"role":"k6","container":"perflab-k6","cpu_cores":0.2,"mem_bytes":104857600,"throttled_ms":0.0,"psi_some_avg10":null}}"#).unwrap();
        writeln!(host, r#"{{"t":{t},"cpu_busy_pct":[22.0,{:.1}],"psi_some_avg10":{},"dockerd_cores":0.02,"perflab_cores":0.004}}"#, demo * 100.0, if knee { 40.0 } else { 5.0 }).unwrap();
        let (idle, lq) = if knee {
            (0, 30 + (sec - a) % 7)
        } else {
            (2, 0)
        };
        writeln!(fpm, r#"{{"t":{t},"status":{{"pool":"www","listen queue":{lq},"max listen queue":40,"listen queue len":511,"idle processes":{idle},"active processes":{},"total processes":4,"accepted conn":{}}}}}"#, 4 - idle, 1000 + (sec - a) * 90).unwrap();
        writeln!(pg, r#"{{"t":{t},"activity":[{{"state":"idle","wait_event_type":"Client","wait_event":"ClientRead","count":4}}],"xact_commit":{}}}"#, (sec - a) * 90).unwrap();
    }
    for (name, text) in [("cgroup", cg), ("host", host), ("fpm", fpm), ("pg", pg)] {
        std::fs::write(s.join(format!("{name}.jsonl")), text).unwrap();
    }
}

#[test]
fn report_renders_a_run_directory_with_samples() {
    let d = run_dir(true);
    perflab()
        .arg("report")
        .arg(d.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("## Steps"));
    for f in [
        "report.txt",
        "report.md",
        "report.json",
        "plot-steps.svg",
        "plot-timeline.svg",
        "report.html",
    ] {
        assert!(d.path().join(f).is_file(), "{f}");
    }
    // report.html carries both plots inline, the same SVGs as the files.
    let page = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    let steps = std::fs::read_to_string(d.path().join("plot-steps.svg")).unwrap();
    assert!(page.contains(steps.trim()), "steps plot inline");
    assert_eq!(page.matches("<svg").count(), 2);
    // No temp files left behind (atomic writes).
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let j = perflab::rundir::read_report(d.path()).unwrap();
    assert_eq!((j.knee, j.last_passing), (Some(120), Some(100)));
    assert_eq!(j.steps.len(), 6);
    assert_eq!(
        j.params.app_cores,
        Some(1.0),
        "the app's CPUs from the manifest's layout"
    );
    let why = j.knee_why.as_deref().unwrap();
    assert!(why.contains("fpm 4/4 busy, listen queue"), "{why}");
    assert!(why.contains("app CPU 97 % of 100 %"), "{why}");
    assert!(
        why.ends_with("pg idle ClientRead -> app CPU bound"),
        "{why}"
    );
    let txt = std::fs::read_to_string(d.path().join("report.txt")).unwrap();
    assert!(
        txt.contains("demo%") && txt.contains("msCPU/ok") && txt.contains("dockerd%"),
        "{txt}"
    );
    assert!(txt.contains("CPU ceiling at step r0100"), "{txt}");
    assert!(txt.contains("nginx: 5 lines, 1 distinct messages"), "{txt}");
    assert!(txt.contains(
        "upstream timed out (N: Connection timed out) while reading response header from upstream"
    ));
    let md = std::fs::read_to_string(d.path().join("report.md")).unwrap();
    assert!(md.contains("![plot-steps.svg](plot-steps.svg)"));
    let svg = std::fs::read_to_string(d.path().join("plot-timeline.svg")).unwrap();
    assert!(svg.contains("CPU per role"));
    // Re-rendering is idempotent.
    perflab().arg("report").arg(d.path()).assert().success();
    assert_eq!(
        std::fs::read_to_string(d.path().join("report.txt")).unwrap(),
        txt
    );
}

#[test]
fn report_works_without_plan_or_samples() {
    let d = run_dir(false);
    std::fs::remove_file(d.path().join("plan.json")).unwrap();
    perflab()
        .arg("report")
        .arg(d.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("knee 120 rps"));
}

#[test]
fn report_rejects_a_bad_sample_line_naming_file_and_line() {
    let d = run_dir(true);
    let p = d.path().join("samples/fpm.jsonl");
    let mut t = std::fs::read_to_string(&p).unwrap();
    t.push_str("{\"t\":1,\"status\":\"oops\"}\n");
    std::fs::write(&p, t).unwrap();
    perflab()
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("fpm.jsonl: line"));
}

#[test]
fn report_on_a_missing_directory_is_invalid_input() {
    perflab()
        .args(["report", "/nonexistent/run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a run directory"));
}

#[test]
fn analyze_json_prints_exactly_the_issue_fields() {
    let out = perflab()
        .arg("analyze")
        .arg(fixture("stepped-open", "csv.gz"))
        .arg("--summary")
        .arg(fixture("stepped-open", "summary.json"))
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let mut top: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    top.sort();
    assert_eq!(top, ["dropped_iterations", "knee", "last_passing", "steps"]);
    let mut keys: Vec<&str> = j["steps"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "failed_rate",
            "max_ms",
            "name",
            "ok_per_s",
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "requests",
            "sent_per_s",
            "target",
            "verdict"
        ]
    );
    assert_eq!(j["steps"][0]["name"], "r0020");
    assert_eq!(j["steps"][0]["target"], 20);
    assert_eq!(j["knee"], 120);
}

#[test]
fn analyze_slo_flag_overrides_and_is_required_without_summary() {
    perflab()
        .arg("analyze")
        .arg(fixture("stepped-open", "csv.gz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--slo-ms"));
    // A looser SLO moves the knee: 120 still fails on errors and goodput.
    perflab()
        .arg("analyze")
        .arg(fixture("stepped-open", "csv.gz"))
        .args(["--slo-ms", "2000", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"knee\": 120"));
    perflab()
        .arg("analyze")
        .arg(fixture("stepped-open", "csv.gz"))
        .args([
            "--slo-ms",
            "2000",
            "--error-budget",
            "0.5",
            "--goodput-tolerance",
            "0.5",
            "--json",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"knee\": null"));
    perflab()
        .arg("analyze")
        .arg(fixture("stepped-open", "csv.gz"))
        .args(["--slo-ms", "-3"])
        .assert()
        .code(2);
}

/// A run killed while a sampler wrote its last line still gets its report, which says so.
#[test]
fn a_torn_last_sampler_line_is_left_out_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("samples");
    std::fs::create_dir_all(&s).unwrap();
    let line = r#"{"t":1764500000000,"role":"fpm","container":"c","cpu_cores":0.5,"mem_bytes":1,"throttled_ms":0.0,"psi_some_avg10":null}"#;
    std::fs::write(s.join("cgroup.jsonl"), format!("{line}\n{}", &line[..50])).unwrap();
    let samples = perflab::rundir::inputs::samples(dir.path(), &mut Vec::new()).unwrap();
    assert_eq!(samples.cgroup.len(), 1);
    assert_eq!(samples.torn, vec!["samples/cgroup.jsonl".to_string()]);
    // A bad line in the middle is still an error naming the file and line.
    std::fs::write(s.join("cgroup.jsonl"), format!("{}\n{line}\n", &line[..50])).unwrap();
    let e = perflab::rundir::inputs::samples(dir.path(), &mut Vec::new()).unwrap_err();
    assert!(format!("{e:#}").contains("cgroup.jsonl: line 1"), "{e:#}");
}

/// The host speed probe's readings head the report, and a host that slowed between the
/// reading before the loads and the one after is a caveat in every rendering.
#[test]
fn host_speed_is_shown_and_a_slowed_host_is_a_caveat() {
    use perflab::host::speed::{CpuSpeed, HostSpeed, SpeedReading};
    let d = run_dir(false);
    let reading = |compute: f64, memory: f64| SpeedReading {
        at: chrono::Utc::now(),
        cpus: (0..2)
            .map(|cpu| CpuSpeed {
                cpu,
                compute_mops: compute,
                memory_msteps: memory,
                compute_spread_pct: 1.2,
                memory_spread_pct: 2.0,
                compute_wall_mops: Some(compute * 0.99),
            })
            .collect(),
        not_measured: vec![],
    };
    let mut m = perflab::rundir::read_manifest(d.path()).unwrap();
    m.measurements.host_speed = Some(HostSpeed {
        before: reading(400.0, 10.0),
        after: Some(reading(280.0, 9.8)),
    });
    let run = RunDir {
        path: d.path().to_path_buf(),
        experiment_id: m.experiment_id.clone(),
        round: 1,
        created: m.created,
    };
    run.write_manifest(&m).unwrap();
    perflab().arg("report").arg(d.path()).assert().success();
    let txt = std::fs::read_to_string(d.path().join("report.txt")).unwrap();
    assert!(
        txt.contains("host speed before the loads: compute 400 Mops/s, memory 10.0 M loads/s (CPU 0: 400/10.0, CPU 1: 400/10.0)"),
        "{txt}"
    );
    assert!(
        txt.contains("host speed after the loads: compute 280 Mops/s"),
        "{txt}"
    );
    let caveat = "the host's CPU speed moved during the run (compute -30 %, after against before";
    assert!(txt.contains(caveat), "{txt}");
    assert!(
        !txt.contains("memory -2 %"),
        "a 2 % change is within the probe's spread"
    );
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    let caveat_html = caveat.replace('\'', "&#39;");
    assert!(html.contains("host speed after the loads") && html.contains(&caveat_html));
    let json = perflab::rundir::read_report(d.path()).unwrap();
    assert_eq!(json.host_speed, m.measurements.host_speed);
    // A run recorded without the probe renders as before: no host speed line, no caveat.
    let plain = run_dir(false);
    perflab().arg("report").arg(plain.path()).assert().success();
    let txt = std::fs::read_to_string(plain.path().join("report.txt")).unwrap();
    assert!(!txt.contains("host speed"), "{txt}");
}

/// A run directory copied elsewhere under another name (a CI artifact, a mailed tarball) and
/// reported from a folder with no catalog gives the same pages: the experiment, its claims and
/// the run's name come from the run's manifest, not from the folders around it.
#[test]
fn a_copied_and_renamed_run_directory_gives_the_same_report() {
    let out = tempfile::tempdir().unwrap();
    let home = out.path().join("demo-open/20261130T004600Z-r1");
    fill_run_dir(&home, true);
    let status = serde_json::to_string(&Status::new(RunState::Complete, None)).unwrap();
    std::fs::write(home.join("status.json"), status).unwrap();
    perflab().arg("report").arg(&home).assert().success();
    let away = tempfile::tempdir().unwrap();
    let copy = away.path().join("from-a-student").join("run");
    copy_dir(&home, &copy);
    for f in ["report.txt", "report.md", "report.html", "report.json"] {
        std::fs::remove_file(copy.join(f)).unwrap();
    }
    perflab()
        .current_dir(away.path())
        .env_remove("PERFLAB_CATALOG")
        .arg("report")
        .arg(&copy)
        .assert()
        .success();
    for f in ["report.txt", "report.md", "report.html", "report.json"] {
        let (a, b) = (
            std::fs::read_to_string(home.join(f)).unwrap(),
            std::fs::read_to_string(copy.join(f)).unwrap(),
        );
        let b = b.replace(&copy.display().to_string(), &home.display().to_string());
        assert_eq!(a, b, "{f} differs once the run directory travelled");
    }
    let page = std::fs::read_to_string(copy.join("report.html")).unwrap();
    assert!(
        page.contains("demo-open · 20261130T004600Z-r1"),
        "the run's own name"
    );
    assert!(
        page.contains("<section id=\"claims\">"),
        "the claims section"
    );
    // verify reads the copy too, whatever its folder is called.
    perflab()
        .current_dir(away.path())
        .args(["verify", "--json"])
        .arg(&copy)
        .assert()
        .stdout(predicate::str::contains("\"demo-open\""));
}
