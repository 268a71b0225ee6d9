//! The measurement session driven through the fake engine, without Docker: the order of the
//! phases, and for an interrupt or a failure at every phase the teardown, the final status
//! with its phase and reason, and what the run directory keeps.
use std::path::{Path, PathBuf};

use perflab::experiment::{Catalog, CatalogEntry, Experiment};
use perflab::plan::{self, CpuLayout, CpuSet, Plan, PlanOptions};
use perflab::rundir::{RunDir, RunState};
use perflab::session::Stop;
use perflab::session::engine::{Engine, LoadSpec};
use perflab::session::fake::{FakeEngine, Fault, Op};
use perflab::session::load_phase::Stage;
use perflab::session::measurement::{Measurement, Stepped};
use perflab::session::round::{RoundOutcome, RoundSpec};
use perflab::session::{Phase, run_round};

fn demo() -> (Experiment, Plan, CpuLayout) {
    let c = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &c.get("demo-open").unwrap().entry else {
        panic!("demo-open is an experiment")
    };
    let plan = plan::build(e, PlanOptions { quick: true });
    let online = CpuSet::parse("0-1").unwrap();
    let layout = plan::layout::resolve(&online, None, false).unwrap();
    (e.clone(), plan, layout)
}

fn k6_csv() -> PathBuf {
    Path::new("tests/fixtures/k6/stepped-open.csv.gz").to_path_buf()
}

/// Run one round of the published steps on the fake engine in a fresh out root.
fn round(
    engine: &mut FakeEngine,
    interrupt: &perflab::session::signals::Interrupt,
) -> (RoundOutcome, tempfile::TempDir) {
    let (_, plan, _) = demo();
    let mut steps = Stepped { plan, align: true };
    round_with(engine, interrupt, &mut steps)
}

const ALL_CALLS: [Op; 11] = [
    Op::Begin,
    Op::StackUp,
    Op::WarmUp,
    Op::GeneratorsReady,
    Op::Arm,
    Op::SleepUntil,
    Op::StartLoad,
    Op::WaitLoad,
    Op::CollectLoad,
    Op::CollectLogs,
    Op::Teardown,
];

/// The session phase an engine operation belongs to.
fn phase_of(op: Op) -> Phase {
    match op {
        Op::Begin => Phase::RunDir,
        Op::StackUp => Phase::StackUp,
        Op::WarmUp => Phase::WarmUp,
        Op::GeneratorsReady => Phase::GeneratorsReady,
        Op::Arm | Op::SleepUntil | Op::StartLoad => Phase::AlignedStart,
        Op::WaitLoad => Phase::Measure,
        Op::CollectLoad | Op::CollectLogs => Phase::Collect,
        Op::Teardown => Phase::Teardown,
    }
}

/// After any round: teardown ran once and last, nothing is left, the manifest and status
/// exist, and the manifest records the phases the round went through.
fn check_cleaned(engine: &FakeEngine, o: &RoundOutcome) {
    assert_eq!(
        engine.calls.last(),
        Some(&Op::Teardown),
        "{:?}",
        engine.calls
    );
    assert_eq!(
        engine.calls.iter().filter(|c| **c == Op::Teardown).count(),
        1
    );
    assert!(
        engine.objects.is_empty(),
        "left behind: {:?}",
        engine.objects
    );
    let dir = RunDir::open(&o.dir).unwrap();
    let m = dir.read_manifest().unwrap();
    let last = m.measurements.phases.last().expect("phases recorded");
    assert_eq!(last.phase, Phase::Teardown);
    assert_eq!(dir.status().unwrap().state, o.state);
}

#[test]
fn a_clean_round_goes_through_every_phase_in_order_and_writes_a_report() {
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(engine.calls, ALL_CALLS.to_vec());
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    assert_eq!(o.phase, None);
    assert!(o.verdict.is_some(), "a report was written");
    assert!(o.dir.join("report.json").exists());
    assert!(o.dir.join("k6/requests.csv.gz").exists());
    check_cleaned(&engine, &o);
    let status = RunDir::open(&o.dir).unwrap().status().unwrap();
    assert_eq!(status.phase, None);
}

/// The engine's records reach the manifest through the session: those of a clean round, and
/// what an interrupted phase recorded before it stopped.
#[test]
fn the_engines_records_reach_the_manifest_even_from_an_interrupted_phase() {
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert_eq!(
        m.components.get("fake-engine").map(String::as_str),
        Some("1")
    );
    assert_eq!(m.measurements.stack.suite.as_deref(), Some("fake"));
    assert_eq!(m.measurements.stack.stack_start_s, Some(0.5));
    assert_eq!(m.measurements.stack.warmup.as_ref().unwrap().requests, 1);
    assert!(m.measurements.k6_resume.is_some());
    // the fake records its components, then hangs in the interrupted begin
    let (engine, interrupt) = FakeEngine::new(Some(Fault::Interrupt(Op::Begin, 1)));
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(o.state, RunState::Aborted);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert_eq!(
        m.components.get("fake-engine").map(String::as_str),
        Some("1")
    );
    assert_eq!(m.measurements.stack.stack_start_s, None, "no stack was up");
}

#[test]
fn an_interrupt_in_any_phase_aborts_names_the_phase_and_tears_down() {
    for op in &ALL_CALLS[..9] {
        let (engine, interrupt) = FakeEngine::new(Some(Fault::Interrupt(*op, 1)));
        let mut engine = engine.with_k6_csv(k6_csv());
        let (o, _out) = round(&mut engine, &interrupt);
        let phase = phase_of(*op);
        assert_eq!(o.state, RunState::Aborted, "{op:?}: {:?}", o.reason);
        assert_eq!(o.phase, Some(phase), "{op:?}");
        let reason = o.reason.clone().unwrap();
        assert!(
            reason.contains(&format!("interrupted by SIGINT during {phase}")),
            "{op:?}: {reason}"
        );
        check_cleaned(&engine, &o);
        let status = RunDir::open(&o.dir).unwrap().status().unwrap();
        assert_eq!(status.phase.as_deref(), Some(phase.as_str()));
        // The stack's logs are collected whenever the stack was being started.
        let logs = engine.calls.contains(&Op::CollectLogs);
        assert_eq!(logs, *op >= Op::StackUp, "{op:?}: {:?}", engine.calls);
        // Nothing after the interrupted operation but the wind-down.
        let i = engine.calls.iter().position(|c| c == op).unwrap();
        let after: Vec<Op> = engine.calls[i + 1..]
            .iter()
            .copied()
            .filter(|c| !matches!(c, Op::CollectLoad | Op::CollectLogs | Op::Teardown))
            .collect();
        assert!(
            after.is_empty(),
            "{op:?}: ran {after:?} after the interrupt"
        );
        // Partial data is kept: what the load left, and a report on it.
        if *op >= Op::WaitLoad {
            assert!(o.dir.join("k6/requests.csv.gz").exists(), "{op:?}");
            assert!(o.dir.join("report.json").exists(), "{op:?}");
        } else {
            assert!(!o.dir.join("k6").exists(), "{op:?}");
        }
    }
}

#[test]
fn a_failure_in_any_phase_fails_the_round_with_its_phase_and_tears_down() {
    for op in &ALL_CALLS[..9] {
        let (engine, interrupt) = FakeEngine::new(Some(Fault::Fail(*op)));
        let mut engine = engine.with_k6_csv(k6_csv());
        let (o, _out) = round(&mut engine, &interrupt);
        let phase = phase_of(*op);
        assert_eq!(o.state, RunState::Failed, "{op:?}");
        assert_eq!(o.phase, Some(phase), "{op:?}");
        let reason = o.reason.clone().unwrap();
        assert!(
            reason.starts_with(&format!("{phase} failed: fake {op:?} failed")),
            "{op:?}: {reason}"
        );
        check_cleaned(&engine, &o);
    }
}

#[test]
fn a_failing_log_collection_or_teardown_is_a_caveat_not_a_lost_run() {
    let (engine, interrupt) = FakeEngine::new(Some(Fault::Fail(Op::CollectLogs)));
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(o.state, RunState::Complete);
    check_cleaned(&engine, &o);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert!(
        m.caveats
            .iter()
            .any(|c| c.contains("collecting logs failed")),
        "{:?}",
        m.caveats
    );

    let (engine, interrupt) = FakeEngine::new(Some(Fault::Fail(Op::Teardown)));
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(o.state, RunState::Complete);
    assert!(
        !engine.objects.is_empty(),
        "the fake's teardown failed, so objects stay"
    );
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert!(
        m.caveats
            .iter()
            .any(|c| c.contains("teardown failed") && c.contains("perflab cleanup")),
        "{:?}",
        m.caveats
    );
}

#[test]
fn a_generator_exit_code_decides_between_a_measurement_and_a_harness_failure() {
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    engine.exit_code = 99;
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(
        o.state,
        RunState::Complete,
        "99 = thresholds crossed: breaking is the point"
    );
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    assert_eq!(m.measurements.k6_thresholds_crossed, Some(true));

    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    engine.exit_code = 107;
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(o.state, RunState::Failed);
    assert_eq!(o.phase, Some(Phase::Collect));
    let reason = o.reason.clone().unwrap();
    assert!(
        reason.contains("exited with code 107") && reason.contains("last line"),
        "{reason}"
    );
    check_cleaned(&engine, &o);
}

#[test]
fn an_interrupt_while_collecting_logs_keeps_the_complete_measurement() {
    let (engine, interrupt) = FakeEngine::new(Some(Fault::Interrupt(Op::CollectLogs, 1)));
    let mut engine = engine.with_k6_csv(k6_csv());
    let (o, _out) = round(&mut engine, &interrupt);
    assert_eq!(o.state, RunState::Complete);
    assert_eq!(
        interrupt.reason(),
        Some("SIGINT"),
        "the caller still sees the signal"
    );
    check_cleaned(&engine, &o);
}

#[test]
fn an_interrupt_while_waiting_for_the_lock_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perflab.lock");
    let held = perflab::lock::acquire(&path, "other", perflab::lock::Wait::NoWait, |_| {}).unwrap();
    let (interrupt, trigger) = perflab::session::signals::Interrupt::manual();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let r = rt.block_on(async {
        let waiting = perflab::session::acquire_lock_at(
            path.clone(),
            "demo-open",
            perflab::lock::Wait::Block,
            true,
            &interrupt,
        );
        let fire = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            trigger.fire("SIGTERM");
        };
        let (r, ()) = tokio::join!(waiting, fire);
        r
    });
    let e = r.expect_err("the lock is held by another");
    assert!(
        format!("{e:#}").contains(
            "interrupted by SIGTERM while waiting for the host lock; nothing was started"
        ),
        "{e:#}"
    );
    drop(held);
    // Once free, the same call takes it.
    let (interrupt, _t) = perflab::session::signals::Interrupt::manual();
    let got = rt.block_on(perflab::session::acquire_lock_at(
        path,
        "demo-open",
        perflab::lock::Wait::NoWait,
        true,
        &interrupt,
    ));
    assert!(got.is_ok());
}

/// A calibration load before the measured steps, with a recovery pause between them: the
/// shape of the fitted and refined runs, on one stack.
struct CalibrateThenMeasure {
    plan: Plan,
}

impl Measurement for CalibrateThenMeasure {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        let calibration = LoadSpec {
            label: "calibration".into(),
            plan: self.plan.clone(),
            out_dir: stage.load_dir("calibration"),
            align: false,
            measured: false,
        };
        stage.run_load(&calibration).await?;
        stage
            .recover(std::time::Duration::from_secs(5), "after calibration")
            .await?;
        Stepped {
            plan: self.plan.clone(),
            align: true,
        }
        .run(stage)
        .await
    }
}

fn round_with(
    engine: &mut FakeEngine,
    interrupt: &perflab::session::signals::Interrupt,
    m: &mut impl Measurement,
) -> (RoundOutcome, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let (exp, plan, layout) = demo();
    let spec = RoundSpec {
        experiment: &exp,
        plan: &plan,
        round: 1,
        out_root: out.path(),
        overrides: &[],
        layout: &layout,
        quiet: true,
        name: None,
        twin: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt.block_on(run_round(engine, &spec, m, interrupt)).unwrap();
    (o, out)
}

#[test]
fn several_loads_share_one_stack_each_with_its_phases_and_outputs() {
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    let (_, plan, _) = demo();
    let (o, _out) = round_with(&mut engine, &interrupt, &mut CalibrateThenMeasure { plan });
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let count = |op| engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::Teardown)), (1, 1));
    assert_eq!((count(Op::GeneratorsReady), count(Op::WaitLoad)), (2, 2));
    assert!(o.dir.join("loads/calibration/k6/requests.csv.gz").exists());
    assert!(o.dir.join("k6/requests.csv.gz").exists());
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let labelled: Vec<(Phase, String)> = m
        .measurements
        .phases
        .iter()
        .map(|p| (p.phase, p.load.clone().unwrap_or_default()))
        .collect();
    for want in [
        (Phase::Measure, "calibration"),
        (Phase::Recover, "after calibration"),
        (Phase::Measure, "measured"),
    ] {
        assert!(
            labelled.contains(&(want.0, want.1.to_string())),
            "{want:?} in {labelled:?}"
        );
    }
    check_cleaned(&engine, &o);
}

/// The measured steps, then a probe on the same stack: the shape of a refined run.
struct MeasureThenProbe {
    plan: Plan,
    /// The engine's clock between the two loads.
    between: Option<chrono::DateTime<chrono::Utc>>,
}

impl Measurement for MeasureThenProbe {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        Stepped {
            plan: self.plan.clone(),
            align: false,
        }
        .run(stage)
        .await?;
        self.between = Some(stage.engine.now());
        stage
            .recover(std::time::Duration::from_secs(5), "after the steps")
            .await?;
        let probe = LoadSpec {
            label: "probe 1".into(),
            plan: self.plan.clone(),
            out_dir: stage.load_dir("probe 1"),
            align: false,
            measured: false,
        };
        stage.run_load(&probe).await
    }
}

#[test]
fn the_manifests_k6_facts_are_the_measured_loads_not_a_later_probes() {
    let (engine, interrupt) = FakeEngine::new(None);
    let mut engine = engine.with_k6_csv(k6_csv());
    let (_, plan, _) = demo();
    let mut m = MeasureThenProbe {
        plan,
        between: None,
    };
    let (o, _out) = round_with(&mut engine, &interrupt, &mut m);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    assert_eq!(
        engine.calls.iter().filter(|c| **c == Op::WaitLoad).count(),
        2
    );
    assert!(o.dir.join("loads/probe-1/k6/requests.csv.gz").exists());
    let between = m.between.expect("the steps ran");
    let ms = RunDir::open(&o.dir)
        .unwrap()
        .read_manifest()
        .unwrap()
        .measurements;
    // The probe started 5 s after the steps ended: its alignment and resume came later, and
    // were written over the steps' until 2026-12-05.
    let al = ms.alignment.expect("the steps' alignment");
    let resume = ms.k6_resume.expect("the steps' resume");
    assert!(al.k6_start <= between, "{al:?} vs {between}");
    assert_eq!(resume.sent_at, al.k6_start);
    assert_eq!(ms.k6_exit_code, Some(0));
}

#[test]
fn an_interrupt_in_the_second_load_or_the_recovery_names_it_and_tears_down() {
    for (fault, phase) in [
        (Fault::Interrupt(Op::WaitLoad, 2), Phase::Measure),
        (Fault::Interrupt(Op::SleepUntil, 2), Phase::Recover),
        (
            Fault::Interrupt(Op::GeneratorsReady, 2),
            Phase::GeneratorsReady,
        ),
    ] {
        let (engine, interrupt) = FakeEngine::new(Some(fault));
        let mut engine = engine.with_k6_csv(k6_csv());
        let (_, plan, _) = demo();
        let (o, _out) = round_with(&mut engine, &interrupt, &mut CalibrateThenMeasure { plan });
        assert_eq!(o.state, RunState::Aborted, "{fault:?}");
        assert_eq!(o.phase, Some(phase), "{fault:?}: {:?}", engine.calls);
        check_cleaned(&engine, &o);
        // The calibration's data stays whatever happened after it.
        assert!(o.dir.join("loads/calibration/k6/requests.csv.gz").exists());
    }
}

/// A judge for a server whose true capacity is `capacity`: the published steps pass up to it.
struct Capacity {
    capacity: u32,
    steps: Vec<u32>,
}

impl perflab::session::refine::Judge for Capacity {
    fn steps(&self, _dir: &Path) -> anyhow::Result<(Option<u32>, Option<u32>)> {
        let lp = self
            .steps
            .iter()
            .copied()
            .filter(|s| *s <= self.capacity)
            .max();
        let knee = self.steps.iter().copied().find(|s| *s > self.capacity);
        Ok((lp, knee))
    }
    fn probe(&self, dir: &Path, target: u32) -> anyhow::Result<perflab::analyze::refine::Probe> {
        // The probe's own plan was written where the analysis reads it: one step at target.
        let plan: Plan = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json"))?)?;
        let holds: Vec<u32> = plan.measured_windows().map(|w| w.target).collect();
        assert_eq!(holds, vec![target]);
        Ok(perflab::analyze::refine::Probe {
            generator_cpu_pct: None,
            target,
            pass: target <= self.capacity,
            why: String::new(),
            ok_per_s: f64::from(target.min(self.capacity)),
            p95_ms: 10.0,
        })
    }
}

fn refine(fault: Option<Fault>) -> (FakeEngine, RoundOutcome, tempfile::TempDir) {
    let (engine, interrupt) = FakeEngine::new(fault);
    let mut engine = engine.with_k6_csv(k6_csv());
    let (exp, plan, _) = demo();
    let mut m = perflab::session::refine::Refine {
        steps: Stepped { plan, align: true },
        experiment: exp.clone(),
        quick: true,
        judge: Capacity {
            capacity: 400,
            steps: exp.load.steps.clone(),
        },
    };
    let (o, out) = round_with(&mut engine, &interrupt, &mut m);
    (engine, o, out)
}

#[test]
fn refine_probes_the_same_stack_until_the_bracket_is_within_five_percent() {
    let (engine, o, _out) = refine(None);
    assert_eq!(o.state, RunState::Complete, "{:?}", o.reason);
    let count = |op| engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!(
        count(Op::StackUp),
        1,
        "one stack for the steps and every probe"
    );
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let r = m.measurements.refine.expect("the refinement is recorded");
    let targets: Vec<u32> = r.probes.iter().map(|p| p.target).collect();
    assert_eq!(targets, vec![450, 425, 412], "bisection of 400-500");
    assert_eq!(r.max_sustainable, Some(400));
    assert_eq!(r.max_sustainable_resolution, (Some(400), Some(412)));
    assert!(r.stopped.contains("within 5 %"), "{}", r.stopped);
    // One load for the steps and one per probe; a recovery pause after each failing probe.
    assert_eq!(count(Op::WaitLoad), 1 + 3);
    let recovers = m
        .measurements
        .phases
        .iter()
        .filter(|p| p.phase == Phase::Recover)
        .count();
    assert_eq!(recovers, 3);
    for i in 1..=3 {
        assert!(o.dir.join(format!("loads/probe-{i}/plan.json")).exists());
    }
}

#[test]
fn an_interrupt_during_a_probe_keeps_the_probes_so_far() {
    // The second load is the first probe; the third the second probe.
    let (engine, o, _out) = refine(Some(Fault::Interrupt(Op::WaitLoad, 3)));
    assert_eq!(o.state, RunState::Aborted);
    assert_eq!(o.phase, Some(Phase::Measure));
    check_cleaned(&engine, &o);
    let m = RunDir::open(&o.dir).unwrap().read_manifest().unwrap();
    let r = m.measurements.refine.expect("partial refinement kept");
    assert_eq!(r.probes.len(), 1);
    assert_eq!(r.stopped, "in progress");
}
