//! `perflab run --fit --quick` end to end through the real Docker engine, k6 and labs: the
//! calibration on the warm stack measures this host, the rules fit the published numbers to
//! it, and the run measures the fitted plan. The demo server's capacity is known (16 workers x
//! 40 ms = 400 rps), so its fit is checked against that; the PHP and Node runs check that the
//! fitted numbers follow the measured quantities by the experiment's own rules.
use std::path::{Path, PathBuf};

use perflab::rundir::{self, Manifest, fit::FitRecord};

use crate::run_support;
use run_support::{run_quick, shared};

/// `perflab run ID --fit --quick EXTRA...`, checked by [`fitted`].
fn run_fit(id: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Manifest, FitRecord) {
    let args: Vec<&str> = ["--fit"].iter().chain(extra).copied().collect();
    let (out, dir) = run_quick(id, &args);
    let (m, f) = fitted(&dir);
    (out, dir, m, f)
}

/// A complete fitted run: the calibration passed and was kept, and every report says the load
/// was fitted, with the rules' published and fitted values.
fn fitted(dir: &Path) -> (Manifest, FitRecord) {
    let m = rundir::read_manifest(dir).unwrap();
    assert_eq!(
        rundir::read_status(dir).unwrap().state,
        rundir::RunState::Complete
    );
    let f = m.measurements.fit.clone().expect("the fit is recorded");
    assert!(f.calibration.pass, "{:?}", f.calibration);
    assert!(dir.join("loads/calibration/k6/requests.csv.gz").exists());
    // Every report says the load was fitted, with the rules' published and fitted values.
    let text = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for page in [&text, &html] {
        assert!(page.contains("Fitted to this host"));
        assert!(page.contains(&f.rules[0].fitted), "{}", f.rules[0].fitted);
    }
    (m, f)
}

/// The fitted steps are the published ones times `factor`, rounded.
fn assert_scaled(published: &[u32], fitted: &[u32], factor: f64) {
    assert_eq!(published.len(), fitted.len());
    for (a, b) in published.iter().zip(fitted) {
        let want = f64::from(*a) * factor;
        assert!(
            (f64::from(*b) - want).abs() <= 1.01,
            "{a} x {factor} = {want}, got {b}"
        );
    }
}

fn published_steps(f: &FitRecord) -> Vec<u32> {
    f.article_plan
        .measured_windows()
        .map(|w| w.target)
        .collect()
}

#[test]
fn demo_open_fit_measures_the_servers_capacity() {
    let _serial = crate::serial();
    // the fitted run `verify --run-missing --fit` made (shared with verify_e2e)
    let dir = &shared::demo_open_fitted_by_verify().dir;
    let (m, f) = fitted(dir);
    // W at 20 rps is the server's 40 ms plus the network: N/W within 15 % under 400.
    let w = f.calibration.w_ms;
    assert!((39.0..47.0).contains(&w), "W = {w} ms");
    let pool_rps = f.quantities["pool_rps"];
    assert!((16_000.0 / w - pool_rps).abs() < 1e-6);
    assert_scaled(
        &published_steps(&f),
        &m.experiment.load.steps,
        pool_rps / 400.0,
    );
    // The fitted plan is what was measured: the report's steps are the fitted ones.
    let r = rundir::read_report(dir).unwrap();
    let measured: Vec<u32> = r.steps.iter().map(|s| s.target).collect();
    assert_eq!(measured, m.experiment.load.steps);
    // The knee is still where the capacity is: past N/W, not before it.
    let knee = r.knee.expect("a knee within the fitted steps");
    assert!(
        f64::from(knee) > 0.95 * pool_rps,
        "knee {knee} vs N/W {pool_rps}"
    );
}

#[test]
fn php_exp1_fit_steps_follow_the_measured_app_ceiling() {
    let _serial = crate::serial();
    // Three of exp1's eight published steps (below, near and past the article's ceiling): the
    // rule scales each published step, so three check it as well as eight, and the fitted run
    // (abort: true) stops after its first failing step instead of measuring seven.
    let (_out, dir, m, f) = run_fit("exp1", &["--set", "load.steps=120,210,300"]);
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
    let r = rundir::read_report(&dir).unwrap();
    assert!(r.steps.len() >= 2, "{} steps measured", r.steps.len());
    assert_eq!(r.steps[0].target, m.experiment.load.steps[0]);
}

#[test]
fn node_1c_fit_restarts_the_app_with_the_fitted_pool_timeout() {
    let _serial = crate::serial();
    let (_out, dir, m, f) = run_fit("1c", &[]);
    assert!(f.restacked, "a stack rule restarts the stack");
    let timeout = m.experiment.stack.node.as_ref().unwrap().pg_conn_timeout_ms;
    // The peak probe ran over the pool's ceiling with the published 400 VUs: the wait there is
    // L/lambda (400 / what it served), and the timeout is the p95 of the pool's wait there
    // (latency less the service time W), in the wait's tail.
    let peak = f.peak.as_ref().expect("1c declares a peak probe");
    assert!(dir.join("loads/peak/k6/requests.csv.gz").exists());
    let probe = rundir::read_plan(&dir.join("loads/peak")).unwrap();
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
    let phases: Vec<String> = m
        .measurements
        .phases
        .iter()
        .map(|p| {
            format!(
                "{}:{}",
                p.phase.as_str(),
                p.load.clone().unwrap_or_default()
            )
        })
        .collect();
    assert!(
        phases.contains(&"stack-up:fitted".to_string()),
        "{phases:?}"
    );
    assert!(Path::new(&dir.join("report.json")).exists());
}
