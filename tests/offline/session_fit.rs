//! `perflab run --fit` driven through the fake engine, without Docker: the calibration load on
//! the warm stack, the fitted plan and experiment in the manifest beside the published ones, a
//! stack rule restarting the stack with the fitted setting, and interrupts or a failed
//! calibration leaving nothing behind with the phase named.
use std::path::Path;

use perflab::analyze::refine::Probe;
use perflab::experiment::fit::FitRule;
use perflab::experiment::{Catalog, CatalogEntry, Experiment};
use perflab::plan::{self, CpuSet, Plan, PlanOptions};
use perflab::rundir::fit::Calibration;
use perflab::rundir::{RunDir, RunState};
use perflab::session::fake::{FakeEngine, Fault, Op};
use perflab::session::fit::{Fitted, Lent};
use perflab::session::refine::Judge;
use perflab::session::round::{RoundOutcome, RoundSpec};
use perflab::session::{Phase, run_round};

/// The catalog's experiment `id`.
pub(crate) fn experiment(id: &str) -> Experiment {
    let c = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &c.get(id).unwrap().entry else {
        panic!("{id} is an experiment")
    };
    e.clone()
}

fn demo_open() -> Experiment {
    experiment("demo-open")
}

/// The fitted round of `spec` through `engine`, judged by `judge` (quick, no `--refine`).
pub(crate) fn run_fitted<J: Judge + Clone>(
    engine: &mut FakeEngine,
    interrupt: &perflab::session::signals::Interrupt,
    spec: &RoundSpec,
    judge: J,
    align: bool,
) -> RoundOutcome {
    run_fitted_lent(engine, interrupt, spec, judge, (align, None))
}

/// [`run_fitted`] with a twin's calibration lent (`fit.twin`), when given.
pub(crate) fn run_fitted_lent<J: Judge + Clone>(
    engine: &mut FakeEngine,
    interrupt: &perflab::session::signals::Interrupt,
    spec: &RoundSpec,
    judge: J,
    (align, lent): (bool, Option<Lent>),
) -> RoundOutcome {
    let mut m = Fitted {
        experiment: spec.experiment.clone(),
        align,
        quick: true,
        refine: false,
        judge,
        lent,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run_round(engine, spec, &mut m, interrupt))
        .unwrap()
}

/// A host whose calibration measures a service time of `w_ms` (the demo's N/W = 16000 / w_ms).
#[derive(Clone)]
struct Host {
    w_ms: f64,
    /// The calibration passes at this rate and below (the host breaks above it).
    passes_up_to: u32,
    /// W at 20 rps and below (an idle box answers slower), else `w_ms`.
    idle_w_ms: Option<f64>,
    /// Goodput never exceeds this (the server's real capacity), requests/s.
    serves_up_to: f64,
    /// W of the successive readings above 20 rps (a noisy host), else `w_ms`.
    readings_w_ms: Vec<f64>,
    /// Calibrations above 20 rps made so far.
    above_20: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

fn host(w_ms: f64, passes_up_to: u32) -> Host {
    Host {
        w_ms,
        passes_up_to,
        idle_w_ms: None,
        serves_up_to: f64::INFINITY,
        readings_w_ms: Vec::new(),
        above_20: Default::default(),
    }
}

impl Judge for Host {
    fn steps(&self, _dir: &Path) -> anyhow::Result<(Option<u32>, Option<u32>)> {
        Ok((None, None))
    }
    fn probe(&self, _dir: &Path, target: u32) -> anyhow::Result<Probe> {
        anyhow::bail!("no probe expected (target {target})")
    }
    fn calibration(&self, dir: &Path, rate: u32, hold_s: u32) -> anyhow::Result<Calibration> {
        // The calibration's own plan was written where the analysis reads it: one step at rate.
        let plan: Plan = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json"))?)?;
        let holds: Vec<u32> = plan.measured_windows().map(|w| w.target).collect();
        assert_eq!(holds, vec![rate]);
        // A probe over the capacity: its wait grows with the queue the VUs allow.
        let over = f64::from(rate) > self.serves_up_to;
        let served = f64::from(rate).min(self.serves_up_to);
        let queued_ms = if over {
            f64::from(plan.vus.max_vus) * 1000.0 / served
        } else {
            0.0
        };
        let w_ms = match self.idle_w_ms {
            Some(w) if rate <= 20 => w,
            _ if rate > 20 => {
                let n = self
                    .above_20
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                self.readings_w_ms.get(n).copied().unwrap_or(self.w_ms)
            }
            _ => self.w_ms,
        };
        let w_ms = w_ms + queued_ms;
        Ok(Calibration {
            rate,
            hold_s,
            ok_per_s: served,
            w_ms,
            p95_ms: w_ms * 1.2,
            p99_ms: Some(w_ms * 1.3),
            app_ms: Some(2.0),
            db_ms: None,
            pass: rate <= self.passes_up_to,
            why: if rate <= self.passes_up_to {
                String::new()
            } else {
                "p95 over the SLO".into()
            },
            failed_attempts: Vec::new(),
            screening: None,
            readings: Vec::new(),
        })
    }
}

fn fitted_round(
    e: &Experiment,
    host: Host,
    fault: Option<Fault>,
) -> (FakeEngine, RoundOutcome, tempfile::TempDir) {
    fitted_round_with(e, host, fault, None)
}

/// One quick fitted round of `e` judged by `judge` on the fake engine (a twin's calibration
/// lent when given), with the recorded stepped k6 CSV.
pub(crate) fn fitted_round_with<J: Judge + Clone>(
    e: &Experiment,
    judge: J,
    fault: Option<Fault>,
    lent: Option<Lent>,
) -> (FakeEngine, RoundOutcome, tempfile::TempDir) {
    let (engine, interrupt) = FakeEngine::new(fault);
    let mut engine =
        engine.with_k6_csv(Path::new("tests/fixtures/k6/stepped-open.csv.gz").to_path_buf());
    let out = tempfile::tempdir().unwrap();
    let plan = plan::build(e, PlanOptions { quick: true });
    let layout = plan::layout::resolve(&CpuSet::parse("0-1").unwrap(), None, false).unwrap();
    let spec = RoundSpec {
        experiment: e,
        plan: &plan,
        round: 1,
        out_root: out.path(),
        overrides: &[],
        layout: &layout,
        quiet: true,
        name: None,
        twin: None,
    };
    let o = run_fitted_lent(&mut engine, &interrupt, &spec, judge, (true, lent));
    (engine, o, out)
}

fn labelled_phases(o: &RoundOutcome) -> Vec<(Phase, String)> {
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    m.measurements
        .phases
        .iter()
        .map(|p| (p.phase, p.load.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn the_calibration_fits_the_steps_and_the_manifest_keeps_both_plans() {
    let e = demo_open();
    // W = 50 ms: N/W = 16 / 0.050 = 320 rps, so the steps are 0.8x the published ones.
    let (engine, o, _out) = fitted_round(&e, host(50.0, 1000), None);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let f = m.measurements.fit.as_ref().expect("the fit is recorded");
    assert_eq!(m.experiment.load.steps, vec![80, 160, 240, 320, 400, 480]);
    let fitted_holds: Vec<u32> = m.plan.measured_windows().map(|w| w.target).collect();
    assert_eq!(fitted_holds, m.experiment.load.steps);
    let article: Vec<u32> = f
        .article_plan
        .measured_windows()
        .map(|w| w.target)
        .collect();
    assert_eq!(article, e.load.steps);
    assert_eq!(f.rules.len(), 1);
    assert_eq!(f.rules[0].article, "[100, 200, 300, 400, 500, 600]");
    assert_eq!(f.rules[0].fitted, "[80, 160, 240, 320, 400, 480]");
    assert!((f.quantities["pool_rps"] - 320.0).abs() < 1e-9);
    assert!(!f.restacked);
    // plan.json is the fitted plan (the analysis reads it).
    let on_disk = RunDir::open(&o.dir).unwrap().read_plan().unwrap();
    assert_eq!(
        on_disk
            .measured_windows()
            .map(|w| w.target)
            .collect::<Vec<_>>(),
        fitted_holds
    );
    // One stack, five loads: the screening calibration at 20 rps, the working point at half
    // the lowest ceiling (N/W 320 < the app's 500: 160 rps) read three times, a recovery, the
    // fitted steps.
    let count = |op| engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::WaitLoad)), (1, 5));
    assert_eq!(f.calibration.readings.len(), 3);
    assert!(o.dir.join("loads/working-point-3/plan.json").exists());
    assert_eq!(f.calibration.rate, 160);
    assert_eq!(f.calibration.screening.as_ref().map(|c| c.rate), Some(20));
    let phases = labelled_phases(&o);
    let at = |p: Phase, l: &str| {
        phases
            .iter()
            .position(|x| *x == (p, l.to_string()))
            .unwrap_or_else(|| panic!("{p:?} {l} in {phases:?}"))
    };
    assert!(at(Phase::Measure, "calibration") < at(Phase::Recover, "before the working point"));
    assert!(at(Phase::Recover, "before the working point") < at(Phase::Measure, "working point"));
    assert!(at(Phase::Measure, "working point") < at(Phase::Recover, "after the calibration"));
    assert!(at(Phase::Recover, "after the calibration") < at(Phase::Measure, "measured"));
    assert!(o.dir.join("loads/calibration/k6/requests.csv.gz").exists());
    assert!(o.dir.join("loads/working-point/plan.json").exists());
    assert!(engine.objects.is_empty());
}

#[test]
fn the_rules_read_the_working_point_not_the_idle_box() {
    // At 20 rps the idle box answers in 62.5 ms (N/W 256); under load W is 50 ms (N/W 320).
    let h = Host {
        idle_w_ms: Some(62.5),
        ..host(50.0, 1000)
    };
    let (_engine, o, _out) = fitted_round(&demo_open(), h, None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let f = m.measurements.fit.as_ref().unwrap();
    // Screened: N/W 256 -> working point 128 rps, where W is 50 ms: steps 0.8x, not 0.64x.
    let low = f.calibration.screening.as_ref().expect("screening kept");
    assert_eq!((low.rate, low.w_ms), (20, 62.5));
    assert_eq!((f.calibration.rate, f.calibration.w_ms), (128, 50.0));
    assert_eq!(m.experiment.load.steps, vec![80, 160, 240, 320, 400, 480]);
    let lines = perflab::report::content::fit_record_block(f).lines;
    assert!(
        lines[0].starts_with("screening calibration: 20 rps"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("calibration: 128 rps"), "{lines:?}");
}

#[test]
fn a_peak_probe_measures_where_the_ceiling_binds_with_the_published_vus() {
    // The demo's N/W says 320 rps (W 50 ms), but the server serves 300: the probe at 1.5x the
    // N/W is over it, queued to the published 2,000 VUs, and the rules read what it served.
    let mut e = demo_open();
    let fit = e.fit.as_mut().unwrap();
    fit.calibrate.peak = Some("1.5 * pool_rps".into());
    fit.rules[0].to = "x * peak_ok_per_s / 400".into();
    let h = Host {
        serves_up_to: 300.0,
        ..host(50.0, 1000)
    };
    let (engine, o, _out) = fitted_round(&e, h, None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let f = m.measurements.fit.as_ref().unwrap();
    let p = f.peak.as_ref().expect("the probe is recorded");
    assert_eq!((p.rate, p.ok_per_s), (480, 300.0));
    // 2,000 VUs / 300 rps = 6.67 s of queue, + W
    assert!((f.quantities["peak_w_ms"] - 6716.7).abs() < 0.1, "{f:?}");
    assert_eq!(f.quantities["peak_ok_per_s"], 300.0);
    assert_eq!(m.experiment.load.steps, vec![75, 150, 225, 300, 375, 450]);
    let probe: Plan =
        serde_json::from_str(&std::fs::read_to_string(o.dir.join("loads/peak/plan.json")).unwrap())
            .unwrap();
    assert_eq!(probe.vus.max_vus, e.load.max_vus);
    // working point, then the probe, a drain, then the steps; one stack
    let phases = labelled_phases(&o);
    let at = |p: Phase, l: &str| phases.iter().position(|x| *x == (p, l.to_string()));
    let order = [
        at(Phase::Measure, "working point"),
        at(Phase::Recover, "before the peak probe"),
        at(Phase::Measure, "peak"),
        at(Phase::Recover, "after the peak probe"),
        at(Phase::Measure, "measured"),
    ];
    assert!(order.iter().all(Option::is_some), "{phases:?}");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{phases:?}");
    let count = |op| engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::WaitLoad)), (1, 6));
    let lines = perflab::report::content::fit_record_block(f).lines;
    assert!(
        lines.iter().any(|l| l.starts_with("peak probe: 480 rps")),
        "{lines:?}"
    );
    assert!(engine.objects.is_empty());
}

#[test]
fn a_peak_rate_that_does_not_evaluate_fails_the_fit_phase_and_leaves_nothing() {
    let mut e = demo_open();
    e.fit.as_mut().unwrap().calibrate.peak = Some("0 * pool_rps".into());
    let (engine, o, _out) = fitted_round(&e, host(50.0, 1000), None);
    assert_eq!(o.state, RunState::Failed);
    assert_eq!(o.phase, Some(Phase::Fit));
    let why = o.reason.clone().unwrap_or_default();
    assert!(why.contains("fit.calibrate.peak"), "{why}");
    assert!(engine.objects.is_empty());
}

#[test]
fn the_working_point_is_half_the_lowest_ceiling_when_well_above_the_low_rate() {
    use perflab::session::fit::working_rate;
    let q = |pairs: &[(&str, f64)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<perflab::plan::fit::Quantities>()
    };
    let all = q(&[
        ("app_ceiling", 184.0),
        ("db_ceiling", 18239.0),
        ("pool_rps", 1965.0),
    ]);
    assert_eq!(working_rate(&all, 20), Some(92));
    // Half of 44.6 is under 1.5x 20: the low rate already works near the pool's ceiling.
    assert_eq!(working_rate(&q(&[("pool_rps", 44.6)]), 20), None);
    assert_eq!(working_rate(&q(&[("pool_rps", 60.0)]), 20), Some(30));
    assert_eq!(working_rate(&q(&[]), 20), None);
    assert_eq!(
        working_rate(&q(&[("app_ceiling", f64::INFINITY)]), 20),
        None
    );
    assert_eq!(working_rate(&q(&[("pool_rps", 1e9)]), 20), Some(5000));
}

fn with_worker_rule(mut e: Experiment) -> Experiment {
    let fit = e.fit.as_mut().unwrap();
    fit.rules = vec![FitRule {
        set: "stack.demo.workers".into(),
        to: "x * 2".into(),
        why: "test: a stack rule".into(),
    }];
    e
}

#[test]
fn a_rule_on_a_stack_setting_restarts_the_stack_with_it() {
    let e = with_worker_rule(demo_open());
    let (engine, o, _out) = fitted_round(&e, host(40.0, 1000), None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let workers: Vec<u32> = engine
        .experiments
        .iter()
        .map(|x| x.stack.demo.as_ref().unwrap().workers)
        .collect();
    assert_eq!(workers, vec![32]);
    // The calibrations' stack is torn down (after the working point's load) before the fitted
    // one starts.
    let calls = &engine.calls;
    let teardown = calls.iter().position(|c| *c == Op::Teardown).unwrap();
    assert_eq!(
        calls.iter().filter(|c| **c == Op::CollectLoad).count(),
        5,
        "screening, working point x3, steps"
    );
    assert_eq!(
        &calls[teardown - 1..teardown + 3],
        &[Op::CollectLoad, Op::Teardown, Op::StackUp, Op::WarmUp]
    );
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert!(m.measurements.fit.as_ref().unwrap().restacked);
    assert_eq!(m.experiment.stack.demo.as_ref().unwrap().workers, 32);
    let phases = labelled_phases(&o);
    assert!(
        phases.contains(&(Phase::StackUp, "fitted".into())),
        "{phases:?}"
    );
    assert!(
        phases.contains(&(Phase::WarmUp, "fitted".into())),
        "{phases:?}"
    );
    assert!(engine.objects.is_empty());
}

#[test]
fn interrupts_during_the_calibration_or_the_restart_leave_nothing_and_name_the_phase() {
    let e = with_worker_rule(demo_open());
    for (fault, phase) in [
        (Fault::Interrupt(Op::WaitLoad, 1), Phase::Measure),
        (Fault::Interrupt(Op::StackUp, 2), Phase::StackUp),
        (Fault::Interrupt(Op::WarmUp, 2), Phase::WarmUp),
    ] {
        let (engine, o, _out) = fitted_round(&e, host(40.0, 1000), Some(fault));
        assert_eq!(o.state, RunState::Aborted, "{fault:?}: {:?}", o.reason);
        assert_eq!(o.phase, Some(phase), "{fault:?}: {:?}", engine.calls);
        assert!(engine.objects.is_empty(), "{fault:?}: {:?}", engine.objects);
        assert_eq!(engine.calls.last(), Some(&Op::Teardown));
        let st = RunDir::open(&o.dir).unwrap().status().unwrap();
        assert_eq!(st.phase.as_deref(), Some(phase.as_str()));
    }
}

#[test]
fn the_working_point_is_read_three_times_and_the_rules_read_the_medians() {
    // A noisy host: the working point's W reads 50, 80 and 52 ms (N/W 320, 200, 308 rps).
    let h = Host {
        readings_w_ms: vec![50.0, 80.0, 52.0],
        ..host(50.0, 1000)
    };
    let (_engine, o, _out) = fitted_round(&demo_open(), h, None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let f = m.measurements.fit.as_ref().unwrap();
    let c = &f.calibration;
    let w: Vec<f64> = c.readings.iter().map(|r| r.w_ms).collect();
    assert_eq!(w, vec![50.0, 80.0, 52.0], "every reading is kept");
    assert_eq!(
        c.w_ms, 52.0,
        "the median, not the first (50) nor the outlier (80)"
    );
    assert!((f.quantities["pool_rps"] - 16_000.0 / 52.0).abs() < 1e-9);
    let spread = c.spread();
    let w = spread.iter().find(|s| s.name == "W ms").unwrap();
    assert!((w.pct - 30.0 / 52.0 * 100.0).abs() < 1e-9, "{w:?}");
    let lines = perflab::report::content::fit_record_block(f).lines;
    assert!(
        lines.iter().any(|l| l
            .starts_with("working point read 3 times, the rules read the medians")
            && l.contains("W ms 50.00-80.00 (spread 58 %)")),
        "{lines:?}"
    );
}

#[test]
fn a_calibration_over_the_knee_is_retried_at_half_the_rate() {
    // The host breaks above 10 rps: 20 fails, 10 passes and is the calibration.
    let (engine, o, _out) = fitted_round(&demo_open(), host(40.0, 10), None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let c = &m.measurements.fit.as_ref().unwrap().calibration;
    assert_eq!(c.rate, 10);
    // The working point (half of N/W 400) breaks too: the 10 rps numbers stay.
    assert_eq!(
        c.failed_attempts,
        vec![
            "20 rps: p95 over the SLO".to_string(),
            "200 rps (working point): p95 over the SLO".to_string()
        ]
    );
    assert!(c.screening.is_none());
    assert!(o.dir.join("loads/calibration-2/plan.json").exists());
    assert!(o.dir.join("loads/working-point/plan.json").exists());
    // Three calibrations and the steps, a recovery after each failed calibration.
    assert_eq!(
        engine.calls.iter().filter(|c| **c == Op::WaitLoad).count(),
        4
    );
    let phases = labelled_phases(&o);
    assert!(
        phases.contains(&(Phase::Recover, "after a failed calibration".into())),
        "{phases:?}"
    );
    assert!(
        phases.contains(&(Phase::Fit, "calibration 2".into())),
        "{phases:?}"
    );
}

#[test]
fn a_host_that_breaks_below_the_lowest_calibration_fails_in_the_fit_phase() {
    let (engine, o, _out) = fitted_round(&demo_open(), host(40.0, 0), None);
    assert_eq!(o.state, RunState::Failed);
    assert_eq!(o.phase, Some(Phase::Fit));
    let reason = o.reason.unwrap_or_default();
    assert!(
        reason.contains("no calibration passed")
            && reason.contains("20 rps: p95 over the SLO; 10 rps: p95 over the SLO; 5 rps"),
        "{reason}"
    );
    // 20, 10 and 5 rps were tried; nothing was measured with an unfitted plan.
    assert_eq!(
        engine.calls.iter().filter(|c| **c == Op::WaitLoad).count(),
        3
    );
    assert!(engine.objects.is_empty());
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert!(m.measurements.fit.is_none());
}
