//! `perflab run --fit` on calibrations recorded on a real host, through the fake engine: each
//! load (the screening calibration, the working point's three readings, 1c's peak probe, the
//! fitted steps) leaves the k6 output and samples the real run left for it
//! (`tests/fixtures/fit/`: `perflab --quiet run 1c --quick --no-align --fit` and `run exp1 ...
//! --set load.steps=120,210,300`, on the 2-CPU development VM, 2026-12-05), the real analysis
//! judges them, and the fit's logic runs as on the host: the working point from the screening,
//! the peak probe's rate, the rules, the stack restarted with a fitted setting. The replay
//! checks each load's plan against the recorded one, so it cannot drift from the recording.
//! These replaced the real 1c and exp1 fits of the `runs` binary (230 s of CI,
//! docs/ci-time.md); the demo's real fit stays there end to end (`fit_e2e`).
use std::path::{Path, PathBuf};

use perflab::analyze::refine::Probe;
use perflab::experiment::Experiment;
use perflab::plan::{self, PlanOptions};
use perflab::rundir::fit::FitRecord;
use perflab::rundir::{self, Manifest, RunDir, RunState};
use perflab::session::Phase;
use perflab::session::fake::{FakeEngine, Op};
use perflab::session::refine::Judge;
use perflab::session::round::RoundSpec;

use crate::session_fit::{experiment, run_fitted};

use crate::fit_support::{assert_scaled, published_steps};

/// The real judge's calibration (the trait's default: the load's analysis); the fitted runs
/// here do not refine, so the steps' and probes' verdicts are never asked.
#[derive(Clone)]
struct Analysed;

impl Judge for Analysed {
    fn steps(&self, dir: &Path) -> anyhow::Result<(Option<u32>, Option<u32>)> {
        anyhow::bail!("no step verdicts expected ({})", dir.display())
    }
    fn probe(&self, _dir: &Path, target: u32) -> anyhow::Result<Probe> {
        anyhow::bail!("no probe expected (target {target})")
    }
}

/// A fitted round of `e` (`overrides` already applied to it, named for the manifest) replayed
/// from the recorded run `fixture`: the engine, the run directory and its out root, and the
/// manifest the real run wrote.
struct Replayed {
    engine: FakeEngine,
    dir: PathBuf,
    _out: tempfile::TempDir,
    recorded: Manifest,
}

fn replay(e: &Experiment, overrides: &[String], fixture: &str) -> Replayed {
    let run = Path::new("tests/fixtures/fit").join(fixture);
    let recorded = rundir::read_manifest(&run).unwrap();
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_recording(run);
    let out = tempfile::tempdir().unwrap();
    let plan = plan::build(e, PlanOptions { quick: true });
    let spec = RoundSpec {
        experiment: e,
        plan: &plan,
        round: 1,
        out_root: out.path(),
        overrides,
        layout: &recorded.cpu_layout,
        quiet: true,
        name: None,
        twin: None,
    };
    let o = run_fitted(&mut engine, &interrupt, &spec, Analysed, false);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    Replayed {
        engine,
        dir: o.dir,
        _out: out,
        recorded,
    }
}

/// The fit record of a complete fitted run: the calibration passed and was kept, every report
/// says the load was fitted with the rules' values, and the replay reached the rules the real
/// run reached (the same loads judged the same way).
fn fitted(r: &Replayed) -> (Manifest, FitRecord) {
    let m = RunDir::open(&r.dir).unwrap().read_manifest().unwrap();
    let f = m.measurements.fit.clone().expect("the fit is recorded");
    assert!(f.calibration.pass, "{:?}", f.calibration);
    assert!(r.dir.join("loads/calibration/k6/requests.csv.gz").exists());
    let text = std::fs::read_to_string(r.dir.join("report.txt")).unwrap();
    let html = std::fs::read_to_string(r.dir.join("report.html")).unwrap();
    for page in [&text, &html] {
        assert!(page.contains("Fitted to this host"));
        assert!(page.contains(&f.rules[0].fitted), "{}", f.rules[0].fitted);
    }
    let host = r.recorded.measurements.fit.as_ref().unwrap();
    let rules = |f: &FitRecord| -> Vec<(String, String)> {
        f.rules
            .iter()
            .map(|r| (r.set.clone(), r.fitted.clone()))
            .collect()
    };
    assert_eq!(rules(&f), rules(host), "the rules the host's run reached");
    assert_eq!(m.experiment.load.steps, r.recorded.experiment.load.steps);
    assert!(r.engine.objects.is_empty(), "{:?}", r.engine.objects);
    (m, f)
}

#[test]
fn php_exp1_fit_steps_follow_the_measured_app_ceiling() {
    // Three of exp1's eight published steps (below, near and past the article's ceiling), as
    // recorded: the rule scales each published step, so three check it as well as eight.
    let mut e = experiment("exp1");
    e.load.steps = vec![120, 210, 300];
    let r = replay(&e, &["load.steps=120,210,300".into()], "php-exp1");
    let (m, f) = fitted(&r);
    let app_ms = f.calibration.app_ms.expect("app CPU per request measured");
    assert!(
        (1.0..50.0).contains(&app_ms),
        "app {app_ms} ms CPU per request"
    );
    let ceiling = f.quantities["app_ceiling"];
    let cpus = m.cpu_layout.app.len() as f64;
    assert!((ceiling - cpus * 1000.0 / app_ms).abs() < 1e-6);
    assert_scaled(
        &published_steps(&f),
        &m.experiment.load.steps,
        ceiling / 225.0,
    );
    assert!(!f.restacked);
    // One stack: no rule on a stack setting, so no restart.
    let count = |op| r.engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::Teardown)), (1, 1));
    let report = rundir::read_report(&r.dir).unwrap();
    assert!(
        report.steps.len() >= 2,
        "{} steps measured",
        report.steps.len()
    );
    assert_eq!(report.steps[0].target, m.experiment.load.steps[0]);
}

#[test]
fn node_1c_fit_restarts_the_app_with_the_fitted_pool_timeout() {
    let r = replay(&experiment("1c"), &[], "node-1c");
    let (m, f) = fitted(&r);
    assert!(f.restacked, "a stack rule restarts the stack");
    let timeout = m.experiment.stack.node.as_ref().unwrap().pg_conn_timeout_ms;
    // The stack came back up with the fitted timeout: the engine was handed the fitted
    // experiment after the calibration stack's teardown.
    let handed: Vec<u32> = r
        .engine
        .experiments
        .iter()
        .map(|x| x.stack.node.as_ref().unwrap().pg_conn_timeout_ms)
        .collect();
    assert_eq!(handed, vec![timeout]);
    let calls = &r.engine.calls;
    let teardown = calls.iter().position(|c| *c == Op::Teardown).unwrap();
    assert_eq!(
        &calls[teardown..teardown + 3],
        &[Op::Teardown, Op::StackUp, Op::WarmUp]
    );
    // The peak probe ran over the pool's ceiling with the published 400 VUs: the wait there is
    // L/lambda (400 / what it served), and the timeout is the p95 of the pool's wait there
    // (latency less the service time W), in the wait's tail.
    let peak = f.peak.as_ref().expect("1c declares a peak probe");
    assert!(r.dir.join("loads/peak/k6/requests.csv.gz").exists());
    let probe = rundir::read_plan(&r.dir.join("loads/peak")).unwrap();
    assert_eq!(probe.vus.max_vus, 400);
    assert!(
        f64::from(peak.rate) > 1.3 * f.quantities["pool_rps"],
        "{peak:?}"
    );
    let little_ms = 400.0 * 1000.0 / peak.ok_per_s;
    let p95 = peak.p95_ms;
    assert_eq!(f64::from(timeout), (p95 - f.calibration.w_ms).round());
    assert!(
        p95 > 0.8 * little_ms && peak.w_ms > 0.6 * little_ms,
        "the probe queued at the VU cap: p95 {p95}, mean {} vs L/lambda {little_ms:.0} ms",
        peak.w_ms
    );
    // /dbsleep holds a pool slot for pg_sleep(0.02): W is 20 ms and a little more.
    assert!(
        (20.0..40.0).contains(&f.calibration.w_ms),
        "{:?}",
        f.calibration
    );
    let rule = f
        .rules
        .iter()
        .find(|r| r.set.ends_with("pg_conn_timeout_ms"))
        .unwrap();
    assert_eq!(
        (rule.article.as_str(), rule.fitted.clone()),
        ("1000", timeout.to_string())
    );
    let phases: Vec<(Phase, String)> = m
        .measurements
        .phases
        .iter()
        .map(|p| (p.phase, p.load.clone().unwrap_or_default()))
        .collect();
    assert!(
        phases.contains(&(Phase::StackUp, "fitted".into())),
        "{phases:?}"
    );
    assert!(r.dir.join("report.json").exists());
}
