//! `perflab run --fit --quick` end to end through the real Docker engine, k6 and labs: the
//! calibration on the warm stack measures this host, the rules fit the published numbers to
//! it, and the run measures the fitted plan. The demo server's capacity is known (16 workers x
//! 40 ms = 400 rps), so its fit is checked against that. The fit's logic on PHP and Node
//! (exp1's steps following the measured app ceiling, 1c's stack restarted with the fitted pool
//! timeout) is checked on their calibrations recorded on a real host, replayed through the
//! fake engine (`tests/offline/session_fit_recorded.rs`; 230 s of CI less, docs/ci-time.md).
use std::path::Path;

use perflab::rundir::{self, Manifest, fit::FitRecord};

use crate::fit_support::{assert_scaled, published_steps};
use crate::run_support;
use run_support::shared;

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
