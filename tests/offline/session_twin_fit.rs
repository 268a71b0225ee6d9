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
        ("fail-unix", "`fail-unix` has no `fit:`"),
    ] {
        let errs = twin_errors(twin);
        assert!(
            errs.iter()
                .any(|e| e.contains("fit.twin") && e.contains(says)),
            "{twin}: {errs:?}"
        );
    }
}

/// exp1-open's calibration with a peak probe that served `peak_ok` ok/s.
fn lent_by_exp1_open(peak_ok: f64) -> Lent {
    let mut l = lent(7.7);
    l.run = "exp1-open/20261207T120711Z-r1".into();
    l.calibration.rate = 74;
    l.calibration.ok_per_s = 73.9;
    l.calibration.app_ms = Some(5.8);
    let mut peak = l.calibration.clone();
    (peak.rate, peak.ok_per_s, peak.w_ms, peak.p95_ms) = (276, peak_ok, 2224.0, 4082.0);
    l.peak = Some(peak);
    l
}

/// exp1-shed borrows exp1-open's calibration and peak probe: its steps are 0.5x, 1x and 1.5x
/// what the peak probe served (75, 150, 225 x 172 / 150), and its limit 140 / 225 of it.
#[test]
fn exp1_shed_runs_exp1_opens_steps_from_its_peak_probe() {
    let e = crate::session_fit::experiment("exp1-shed");
    let (_engine, o, _out) = crate::session_fit::fitted_round_with(
        &e,
        NoCalibration,
        None,
        Some(lent_by_exp1_open(172.0)),
    );
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let man = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert_eq!(man.experiment.load.steps, vec![86, 172, 258]);
    let php = man.experiment.stack.php.as_ref().expect("a php stack");
    assert_eq!(php.limit_req_rps, Some(107));
    let f = man.measurements.fit.as_ref().expect("the fit is recorded");
    assert_eq!(f.twin_run.as_deref(), Some("exp1-open/20261207T120711Z-r1"));
}

/// A twin exists so that the two run the same steps: every borrower's published steps and
/// `load.steps` rule are its lender's.
#[test]
fn every_twin_runs_its_lenders_steps() {
    let c = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let steps_rule = |e: &perflab::experiment::Experiment| {
        let f = e.fit.as_ref().unwrap();
        f.rules
            .iter()
            .find(|r| r.set == "load.steps")
            .map(|r| r.to.clone())
    };
    let mut pairs = Vec::new();
    for (id, f) in &c.files {
        let CatalogEntry::Experiment(e) = &f.entry else {
            continue;
        };
        let Some(twin) = e.fit.as_ref().and_then(|f| f.twin.clone()) else {
            continue;
        };
        let lender = crate::session_fit::experiment(&twin);
        assert_eq!(
            e.load.steps, lender.load.steps,
            "{id} and its twin {twin}: published steps"
        );
        assert_eq!(
            steps_rule(e),
            steps_rule(&lender),
            "{id} and its twin {twin}: load.steps rule"
        );
        pairs.push(format!("{id}<-{twin}"));
    }
    pairs.sort();
    assert_eq!(
        pairs,
        [
            "diag-acc-stall<-diag-acc",
            "diag-unix<-diag-tcp",
            "exp1-shed<-exp1-open"
        ]
    );
}
