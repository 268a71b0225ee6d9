//! The run-directory contract: a run directory recorded by the schema-1 writer (a real
//! `perflab run demo-open --quick` on the dev host, 2026-11-30) and the verify fixtures read
//! through `rundir`'s types; what the analysis and the claims take from the plan.
use perflab::experiment::{Catalog, CatalogEntry, Experiment};
use perflab::plan::{self, PlanOptions};
use perflab::rundir::layout::SampleFile;
use perflab::rundir::{self, Manifest, RunDir, RunState};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded schema-1 run (`--quick`: hold 10 s scaled to 5 s).
fn v1_run() -> PathBuf {
    root().join("tests/fixtures/rundir-v1/demo-open/20261130T193727Z-r1")
}

fn experiment(id: &str) -> Experiment {
    let cat = Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &cat.get(id).unwrap().entry else {
        panic!("{id} is not an experiment")
    };
    e.clone()
}

fn k6_fixture(name: &str, ext: &str) -> PathBuf {
    root()
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

/// A run directory written by the real writer (plan from `plan::build`), with a recorded k6
/// run's files in `k6/`.
fn run_dir_with_k6(out: &Path, e: &Experiment, opts: PlanOptions, k6: &str) -> RunDir {
    let r = RunDir::create(out, &e.id, 1).unwrap();
    let p = plan::build(e, opts);
    let layout = plan::layout::auto(&plan::CpuSet::parse("0-3").unwrap()).unwrap();
    r.write_manifest(&Manifest::new(&r, e.clone(), vec![], p, layout))
        .unwrap();
    let dir = r.path.join("k6");
    std::fs::create_dir_all(&dir).unwrap();
    for (src, dst) in [
        ("csv.gz", "requests.csv.gz"),
        ("summary.json", "summary.json"),
        ("log", "k6.log"),
    ] {
        std::fs::copy(k6_fixture(k6, src), dir.join(dst)).unwrap();
    }
    r
}

#[test]
fn a_recorded_schema_1_run_reads_through_the_types() {
    let dir = v1_run();
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(raw["schema_version"], 1, "the fixture is a schema-1 file");
    let m = rundir::read_manifest(&dir).unwrap();
    assert_eq!(m.schema_version, rundir::MANIFEST_SCHEMA_VERSION);
    assert_eq!(m.experiment_id, "demo-open");
    let meas = &m.measurements;
    assert_eq!(meas.stack.suite.as_deref(), Some("trixie"));
    assert_eq!(
        meas.stack.run_id.as_deref(),
        Some("run-demo-open-20261130t193727z-r1")
    );
    let placement = meas.placement.as_ref().unwrap();
    assert_eq!(placement.published_entry.ip, "127.0.0.1");
    assert!(!placement.loadgen_remote);
    let g = meas.generators.as_ref().unwrap();
    assert_eq!(
        (g.count, g.start),
        (1, rundir::measurements::GeneratorStart::Resume)
    );
    assert_eq!(g.instances[0].out.as_deref(), Some("k6"));
    let resume = meas.k6_resume.as_ref().unwrap();
    assert!(resume.answered_at >= resume.sent_at);
    assert!(meas.samplers.as_ref().unwrap().lines(SampleFile::Cgroup) > 0);
    assert_eq!(meas.stack.warmup.as_ref().map(|w| w.requests), Some(0));
    assert_eq!(meas.k6_exit_code, Some(99));
    assert!(meas.stack.containers.as_ref().unwrap().contains_key("app"));
    assert!(meas.sampler_agent_cgroup_lines.is_empty());
    // plan.json is the manifest's plan; status and report read back too.
    assert_eq!(rundir::read_plan(&dir).unwrap(), m.plan);
    assert_eq!(m.plan.hold_s, 5, "--quick");
    assert_eq!(rundir::read_status(&dir).unwrap().state, RunState::Complete);
    let report = rundir::read_report(&dir).unwrap();
    assert_eq!((report.last_passing, report.knee), (Some(400), Some(500)));
}

#[test]
fn every_recorded_verify_fixture_manifest_reads_through_the_types() {
    let mut n = 0;
    for set in ["tests/fixtures/verify", "tests/fixtures/verify-edited"] {
        for exp in std::fs::read_dir(root().join(set)).unwrap().flatten() {
            for run in std::fs::read_dir(exp.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if run.path().join("manifest.json").exists() {
                    let m = rundir::read_manifest(&run.path())
                        .unwrap_or_else(|e| panic!("{}: {e:#}", run.path().display()));
                    assert!(m.measurements.samplers.is_some());
                    rundir::read_report(&run.path()).unwrap();
                    rundir::read_status(&run.path()).unwrap();
                    n += 1;
                }
            }
        }
    }
    assert!(n >= 20, "{n} fixture runs");
}

#[test]
fn a_schema_2_manifest_round_trips_with_its_measurements() {
    let out = tempfile::tempdir().unwrap();
    let v1 = rundir::read_manifest(&v1_run()).unwrap();
    let e = experiment("demo-open");
    let r = RunDir::create(out.path(), &e.id, 1).unwrap();
    let mut m = Manifest::new(
        &r,
        e.clone(),
        vec![],
        plan::build(&e, PlanOptions::default()),
        v1.cpu_layout.clone(),
    );
    m.measurements = v1.measurements.clone();
    m.measurements
        .sampler_agent_cgroup_lines
        .insert("loadgen".into(), 120);
    m.measurements.postgres_slots = Some(rundir::measurements::PgSlots {
        max_connections: 100,
        superuser_reserved: 3,
        reserved: 0,
        harness: 1,
        usable: 96,
    });
    r.write_manifest(&m).unwrap();
    assert_eq!(r.read_manifest().unwrap(), m);
    assert_eq!(r.read_plan().unwrap(), m.plan);
}

/// Bug: the analysis looked for `abort_p95_ms` in plan.json, which holds `abort.p95_ms`: an
/// experiment's own abort threshold was silently replaced by the script's default (2.5 x SLO).
#[test]
fn the_abort_check_uses_the_experiments_abort_threshold_from_the_plan() {
    let out = tempfile::tempdir().unwrap();
    // The recorded k6 run `stepped-abort`: steps 40..160 rps held 5 s, SLO 200 ms, aborted.
    let mut e = experiment("demo-open");
    e.load.steps = vec![40, 80, 120, 160];
    e.load.hold_s = 5;
    e.load.slo_p95_ms = 200.0;
    e.load.slo_p99_ms = None;
    e.load.abort = true;
    e.load.abort_p95_ms = Some(333.0);
    let r = run_dir_with_k6(out.path(), &e, PlanOptions::default(), "stepped-abort");
    let report = perflab::report::render_run_dir(&r.path).unwrap();
    let abort = report.checks.abort.expect("the run aborted");
    assert_eq!(abort.threshold_ms, 333.0, "not the default 2.5 x 200 ms");
}

/// Bug: under `--quick` the claims' `hold_s` was the experiment's unscaled hold while the
/// report used the plan's scaled one.
#[test]
fn claims_see_the_hold_the_run_used_under_quick() {
    let run = perflab::verify::load::load_run(&v1_run()).unwrap();
    assert_eq!(
        run.report.hold_s, 5.0,
        "the report's hold (scaled by --quick)"
    );
    let hold = perflab::verify::quantities::ConfigQ::HoldS
        .read(&run.manifest)
        .unwrap();
    assert_eq!(hold, run.report.hold_s);
}
