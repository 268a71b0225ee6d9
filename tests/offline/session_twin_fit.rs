//! `fit.twin` through the fake engine: a fitted round that borrows its twin's calibration runs
//! no calibration load, fits its steps from the lent numbers and records whose they were; the
//! catalog refuses a twin that cannot lend one.
use std::path::Path;

use perflab::analyze::refine::Probe;
use perflab::experiment::{Catalog, CatalogEntry};
use perflab::rundir::fit::Calibration;
use perflab::rundir::{RunDir, RunState};
use perflab::session::fake::Op;
use perflab::session::fit::Lent;
use perflab::session::refine::Judge;

/// A judge for a round that must not calibrate.
#[derive(Clone)]
struct NoCalibration;

impl Judge for NoCalibration {
    fn steps(&self, _dir: &Path) -> anyhow::Result<(Option<u32>, Option<u32>)> {
        Ok((None, None))
    }
    fn probe(&self, _dir: &Path, target: u32) -> anyhow::Result<Probe> {
        anyhow::bail!("no probe expected (target {target})")
    }
    fn calibration(&self, _dir: &Path, rate: u32, _hold_s: u32) -> anyhow::Result<Calibration> {
        panic!("a lent calibration runs none here (asked for {rate} rps)")
    }
}

/// The twin's calibration: demo-open's pool of 16 at W `w_ms`.
fn lent(w_ms: f64) -> Lent {
    Lent {
        run: "demo-open/20261207T090000Z-r1".into(),
        calibration: Calibration {
            rate: 160,
            hold_s: 10,
            ok_per_s: 160.0,
            w_ms,
            p95_ms: w_ms * 1.2,
            p99_ms: Some(w_ms * 1.3),
            app_ms: Some(2.0),
            db_ms: None,
            pass: true,
            why: String::new(),
            failed_attempts: Vec::new(),
            screening: None,
            readings: Vec::new(),
        },
        peak: None,
    }
}

#[test]
fn a_lent_calibration_fits_the_steps_without_a_calibration_load() {
    let e = crate::session_fit::experiment("demo-open");
    // W 40 ms: N/W = 16 / 0.040 = 400 rps, the published steps unchanged (x * pool_rps / 400).
    let (engine, o, _out) =
        crate::session_fit::fitted_round_with(&e, NoCalibration, None, Some(lent(40.0)));
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let count = |op| engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::WaitLoad)), (1, 1));
    assert!(!o.dir.join("loads/calibration").exists());
    let man = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let f = man.measurements.fit.as_ref().expect("the fit is recorded");
    assert_eq!(f.twin_run.as_deref(), Some("demo-open/20261207T090000Z-r1"));
    assert_eq!(f.calibration, lent(40.0).calibration);
    assert!((f.quantities["pool_rps"] - 400.0).abs() < 1e-9);
    assert_eq!(man.experiment.load.steps, e.load.steps);
    let lines = perflab::report::content::fit_record_block(f).lines;
    assert!(
        lines[0].contains("lent by the twin's run demo-open/"),
        "{lines:?}"
    );
    assert!(engine.objects.is_empty());
}

/// The catalog with `diag-unix`'s `fit.twin` replaced by `twin` (none: the line removed).
fn twin_errors(twin: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir("experiments").unwrap() {
        let p = f.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = if p.ends_with("diag-unix.yaml") {
            assert!(
                text.contains("  twin: diag-tcp\n"),
                "diag-unix lends from diag-tcp"
            );
            text.replace("  twin: diag-tcp\n", &format!("  twin: {twin}\n"))
        } else {
            text
        };
        std::fs::write(dir.path().join(p.file_name().unwrap()), text).unwrap();
    }
    match Catalog::load(dir.path(), &perflab::verify::quantities::Quantities) {
        Ok(c) => {
            let Some(CatalogEntry::Experiment(e)) = c.get("diag-unix").map(|f| &f.entry) else {
                panic!("diag-unix is an experiment")
            };
            assert_eq!(e.fit.as_ref().unwrap().twin.as_deref(), Some(twin));
            Vec::new()
        }
        Err(d) => d.iter().map(|x| x.to_string()).collect(),
    }
}

#[test]
fn a_twin_must_be_a_fitted_experiment_of_the_lab_that_calibrates_itself() {
    assert_eq!(twin_errors("diag-tcp"), Vec::<String>::new());
    for (twin, says) in [
        ("diag-tpc", "unknown experiment `diag-tpc`"),
        ("diag-unix", "names this experiment itself"),
        ("2a", "`2a` is a node experiment"),
        ("php", "unknown experiment `php`"),
        ("diag-acc", "`diag-acc` has no `fit:`"),
    ] {
        let errs = twin_errors(twin);
        assert!(
            errs.iter()
                .any(|e| e.contains("fit.twin") && e.contains(says)),
            "{twin}: {errs:?}"
        );
    }
}
