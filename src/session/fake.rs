//! A fake [`Engine`] for tests of the session (in the spirit of hyperfine's `MockExecutor`):
//! it records every call in order, keeps a set of the "objects" it created (containers,
//! generators) so a test can see what teardown left, fails or fires the interrupt at the
//! operation a test names, never waits on its clock, and leaves a recorded k6 CSV in the run
//! directory when given one, so the report phase runs on real data; or, given a recorded run
//! directory, each load's own recorded k6 output and samples (a calibration, a working point,
//! a peak probe, the measured steps), so the real analysis judges them as it did on the host.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::rundir::measurements::{K6Resume, Warmup};
use anyhow::{Result, anyhow};
use chrono::{DateTime, Utc};

use super::engine::{Engine, GeneratorEnd, LoadSpec, RoundContext};
use super::records::{Record, Records};
use super::signals::{Interrupt, Trigger};
use crate::docker::ExitStatus;
use crate::experiment::Experiment;
use crate::plan::Alignment;

/// The engine operations, as the fake records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Begin,
    StackUp,
    WarmUp,
    GeneratorsReady,
    Arm,
    SleepUntil,
    StartLoad,
    WaitLoad,
    CollectLoad,
    CollectLogs,
    Teardown,
}

/// What goes wrong, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The operation returns an error.
    Fail(Op),
    /// A SIGINT arrives while the operation runs (the `n`-th call of it, from 1).
    Interrupt(Op, usize),
}

/// The fake engine.
pub struct FakeEngine {
    /// Every call, in order.
    pub calls: Vec<Op>,
    /// What exists now: created by stack up and generators ready, removed by teardown.
    pub objects: BTreeSet<String>,
    fault: Option<Fault>,
    trigger: Trigger,
    /// A recorded k6 CSV (gzip) each load leaves as `k6/requests.csv.gz`.
    k6_csv: Option<PathBuf>,
    /// A recorded run directory whose loads each load replays ([`FakeEngine::with_recording`]).
    recording: Option<PathBuf>,
    /// The exit code the generators end with (0, 99 for crossed thresholds, else a failure).
    pub exit_code: i64,
    now: DateTime<Utc>,
    /// Every experiment handed to `set_experiment`, in order.
    pub experiments: Vec<Experiment>,
}

impl FakeEngine {
    /// A fake engine and the interrupt it fires (hand that interrupt to the session).
    pub fn new(fault: Option<Fault>) -> (FakeEngine, Interrupt) {
        let (interrupt, trigger) = Interrupt::manual();
        let engine = FakeEngine {
            calls: Vec::new(),
            objects: BTreeSet::new(),
            fault,
            trigger,
            k6_csv: None,
            recording: None,
            exit_code: 0,
            now: "2026-11-30T12:00:00Z".parse().expect("a valid instant"),
            experiments: Vec::new(),
        };
        (engine, interrupt)
    }

    /// A second engine (the other stack of a pair by turns) whose faults fire the same
    /// interrupt as this one's.
    pub fn sibling(&self, fault: Option<Fault>) -> FakeEngine {
        let (mut e, _) = FakeEngine::new(fault);
        e.trigger = self.trigger.clone();
        e
    }

    /// The fake clock reads `t` at first (two engines apart in time, as two stacks that took
    /// different times to come up).
    pub fn starting_at(mut self, t: DateTime<Utc>) -> FakeEngine {
        self.now = t;
        self
    }

    /// Loads leave this recorded k6 CSV in the run directory.
    pub fn with_k6_csv(mut self, csv: PathBuf) -> FakeEngine {
        self.k6_csv = Some(csv);
        self
    }

    /// Each load leaves the k6 output and samples a real run left for the same load: the
    /// measured steps those of `run`, an extra load labelled L those of `run/loads/L/`. The
    /// plan the session wrote for the load must be the one recorded there (else the replay
    /// would judge another load's data, and the load fails naming both files).
    pub fn with_recording(mut self, run: PathBuf) -> FakeEngine {
        self.recording = Some(run);
        self
    }

    /// The recorded load for `out_dir` (a run directory or one of its `loads/<label>/`) copied
    /// into it: `k6/` and `samples/`, after its plan is checked against the recorded one.
    fn replay(run: &Path, out_dir: &Path) -> Result<()> {
        let from = match out_dir.parent() {
            Some(p) if p.file_name() == Some("loads".as_ref()) => run
                .join("loads")
                .join(out_dir.file_name().unwrap_or_default()),
            _ => run.to_path_buf(),
        };
        let plan = |d: &Path| -> Result<(PathBuf, serde_json::Value)> {
            let f = crate::rundir::Layout::new(d).plan();
            let text = std::fs::read_to_string(&f).map_err(|e| anyhow!("{}: {e}", f.display()))?;
            Ok((f, serde_json::from_str(&text)?))
        };
        let ((recorded, a), (written, b)) = (plan(&from)?, plan(out_dir)?);
        if a != b {
            return Err(anyhow!(
                "{} is not the recorded {}: the replay went another way",
                written.display(),
                recorded.display()
            ));
        }
        for sub in ["k6", "samples"] {
            std::fs::create_dir_all(out_dir.join(sub))?;
            for f in std::fs::read_dir(from.join(sub))? {
                let f = f?;
                std::fs::copy(f.path(), out_dir.join(sub).join(f.file_name()))?;
            }
        }
        Ok(())
    }

    /// Record `op`; fail or fire the interrupt when the fault names it. Returns true when the
    /// interrupt was fired by this call.
    fn enter(&mut self, op: Op) -> Result<bool> {
        self.calls.push(op);
        let n = self.calls.iter().filter(|c| **c == op).count();
        match self.fault {
            Some(Fault::Fail(f)) if f == op => Err(anyhow!("fake {op:?} failed")),
            Some(Fault::Interrupt(f, k)) if f == op && k == n => {
                self.trigger.fire("SIGINT");
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A raced operation interrupted in its middle never finishes (the session drops it).
    async fn hang_if(fired: bool) {
        if fired {
            std::future::pending::<()>().await;
        }
    }
}

impl Engine for FakeEngine {
    async fn begin(&mut self, round: &RoundContext<'_>, rec: &mut Records) -> Result<()> {
        let fired = self.enter(Op::Begin)?;
        rec.push(Record::Component("fake-engine".into(), "1".into()));
        rec.push(Record::Suite("fake".into()));
        let _ = round;
        Self::hang_if(fired).await;
        Ok(())
    }

    fn set_experiment(&mut self, e: &Experiment) {
        self.experiments.push(e.clone());
    }

    async fn stack_up(&mut self, rec: &mut Records) -> Result<()> {
        // Containers exist from the first moment of the phase, interrupted or not.
        self.objects.insert("container:pg".into());
        self.objects.insert("network:lab".into());
        let fired = self.enter(Op::StackUp)?;
        Self::hang_if(fired).await;
        self.objects.insert("container:app".into());
        rec.push(Record::StackStarted {
            start_s: 0.5,
            containers: None,
        });
        Ok(())
    }

    async fn warm_up(&mut self, rec: &mut Records) -> Result<()> {
        let fired = self.enter(Op::WarmUp)?;
        Self::hang_if(fired).await;
        rec.push(Record::Warmup(Warmup {
            requests: 1,
            status_counts: [(200, 1)].into(),
            prewarmed_blocks: None,
        }));
        Ok(())
    }

    async fn generators_ready(&mut self, load: &LoadSpec, _rec: &mut Records) -> Result<bool> {
        self.objects.insert(format!("container:k6 {}", load.label));
        let fired = self.enter(Op::GeneratorsReady)?;
        Self::hang_if(fired).await;
        Ok(true)
    }

    async fn arm(&mut self, al: &Alignment, _rec: &mut Records) -> Result<DateTime<Utc>> {
        let fired = self.enter(Op::Arm)?;
        Self::hang_if(fired).await;
        Ok(al.k6_start)
    }

    fn now(&self) -> DateTime<Utc> {
        self.now
    }

    async fn sleep_until(&mut self, t: DateTime<Utc>) -> Result<()> {
        let fired = self.enter(Op::SleepUntil)?;
        Self::hang_if(fired).await;
        self.now = self.now.max(t);
        Ok(())
    }

    async fn start_load(&mut self, _l: &LoadSpec, al: &Alignment, rec: &mut Records) -> Result<()> {
        let fired = self.enter(Op::StartLoad)?;
        Self::hang_if(fired).await;
        rec.push(Record::K6Resume(K6Resume {
            sent_at: al.k6_start,
            answered_at: al.k6_start,
            late_ms: 0,
            latency_ms: 0,
        }));
        Ok(())
    }

    async fn wait_load(&mut self, stop: Interrupt) -> Result<Vec<ExitStatus>> {
        // Not raced by the session: like k6, the fake stops when the interrupt fires.
        let fired = self.enter(Op::WaitLoad)?;
        if fired || stop.reason().is_some() {
            return Ok(vec![ExitStatus::Cancelled]);
        }
        Ok(vec![ExitStatus::Exited(self.exit_code)])
    }

    async fn collect_load(
        &mut self,
        load: &LoadSpec,
        statuses: Vec<ExitStatus>,
        _rec: &mut Records,
    ) -> Result<Vec<GeneratorEnd>> {
        self.enter(Op::CollectLoad)?;
        let k6 = crate::rundir::Layout::new(&load.out_dir).k6();
        std::fs::create_dir_all(&k6.path)?;
        std::fs::write(k6.log(), "fake k6 log\nlast line\n")?;
        if let Some(csv) = &self.k6_csv {
            std::fs::copy(csv, k6.requests_csv_gz())?;
        }
        if let Some(run) = &self.recording {
            Self::replay(run, &load.out_dir)?;
        }
        Ok(statuses
            .into_iter()
            .map(|status| GeneratorEnd {
                name: format!("fake-k6 ({})", load.label),
                status,
                log: "fake k6 log\nlast line\n".into(),
            })
            .collect())
    }

    async fn collect_logs(&mut self, _rec: &mut Records) -> Result<()> {
        self.enter(Op::CollectLogs)?;
        Ok(())
    }

    async fn teardown(&mut self) -> Result<()> {
        self.enter(Op::Teardown)?;
        self.objects.clear();
        Ok(())
    }
}
