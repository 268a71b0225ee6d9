//! How a session goes through its phases: why it stops (`Stop`), each phase raced against
//! Ctrl-C (`or_interrupt`), the phases it went through (`Trail`) and how it ended (`Verdict`).
use std::future::Future;
use std::time::Instant;

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::signals::Interrupt;
use crate::rundir::phase::{Phase, PhaseRecord};

/// Why a session stopped before its end.
#[derive(Debug)]
pub enum Stop {
    Interrupted(&'static str),
    Failed(anyhow::Error),
}

impl Stop {
    /// As an error, for callers that report a stop rather than record it.
    pub(crate) fn into_error(self) -> anyhow::Error {
        match self {
            Stop::Failed(e) => e,
            Stop::Interrupted(sig) => anyhow::anyhow!("interrupted by {sig}"),
        }
    }
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Self {
        Stop::Failed(e)
    }
}

/// Wait for `fut` unless interrupted first (the future is dropped then).
pub(crate) async fn or_interrupt<T>(
    interrupt: &Interrupt,
    fut: impl Future<Output = Result<T>>,
) -> Result<T, Stop> {
    let mut i = interrupt.clone();
    tokio::select! {
        r = fut => r.map_err(Stop::Failed),
        sig = i.wait() => Err(Stop::Interrupted(sig)),
    }
}

/// The phases a session went through, and the one it is in.
#[derive(Debug, Default, Clone)]
pub struct Trail {
    pub records: Vec<PhaseRecord>,
    current: Option<(Phase, Option<String>)>,
}

impl Trail {
    /// The phase entered last (where an interrupt or a failure happened).
    pub(crate) fn current(&self) -> Option<Phase> {
        self.current.as_ref().map(|(p, _)| *p)
    }

    /// Run `fut` as `phase` (of `load`, if any), raced against `interrupt`, and record it.
    pub(crate) async fn run<T>(
        &mut self,
        interrupt: &Interrupt,
        phase: Phase,
        load: Option<&str>,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T, Stop> {
        self.timed(phase, load, or_interrupt(interrupt, fut)).await
    }

    /// Run `fut` as `phase` to its end, not raced (measuring stops its generators itself on an
    /// interrupt; collecting and tearing down must finish), and record it.
    pub(crate) async fn record<T>(
        &mut self,
        phase: Phase,
        load: Option<&str>,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T, Stop> {
        self.timed(phase, load, async { fut.await.map_err(Stop::Failed) })
            .await
    }

    /// Enter `phase`, await `fut`, record how long it took and how it ended.
    async fn timed<T>(
        &mut self,
        phase: Phase,
        load: Option<&str>,
        fut: impl Future<Output = Result<T, Stop>>,
    ) -> Result<T, Stop> {
        self.enter(phase, load);
        let t0 = (Utc::now(), Instant::now());
        let r = fut.await;
        self.leave(t0, &r);
        r
    }

    /// Name `phase` as the one the session stopped in, though later phases ran (a load stopped
    /// by a signal while measuring is still collected).
    pub(crate) fn blame(&mut self, phase: Phase, load: Option<&str>) {
        self.enter(phase, load);
    }

    fn enter(&mut self, phase: Phase, load: Option<&str>) {
        // `PERFLAB_LOG=perflab=debug` shows the phases as they start (tests interrupt on them).
        tracing::debug!("phase {} {}", phase.as_str(), load.unwrap_or(""));
        self.current = Some((phase, load.map(str::to_owned)));
    }

    fn leave<T>(&mut self, (started, t0): (DateTime<Utc>, Instant), r: &Result<T, Stop>) {
        let Some((phase, load)) = self.current.clone() else {
            return;
        };
        let outcome = match r {
            Ok(_) => "ok".to_string(),
            Err(Stop::Interrupted(sig)) => format!("interrupted by {sig}"),
            Err(Stop::Failed(e)) => format!("failed: {e:#}"),
        };
        self.records.push(PhaseRecord {
            phase,
            load,
            started,
            seconds: (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            outcome,
        });
    }

    /// Whether `phase` was entered at all.
    pub(crate) fn reached(&self, phase: Phase) -> bool {
        self.records.iter().any(|r| r.phase == phase)
    }
}

/// How a session ended, as its status records it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub state: crate::rundir::RunState,
    pub reason: Option<String>,
    /// The phase it stopped in, when it did not complete.
    pub phase: Option<Phase>,
    /// The signal, when interrupted.
    pub signal: Option<&'static str>,
}

/// Complete; aborted "interrupted by SIGINT during warm-up; partial data kept"; or failed
/// "warm-up failed: ...".
pub(crate) fn verdict(result: &Result<(), Stop>, stopped_in: Option<Phase>) -> Verdict {
    use crate::rundir::RunState;
    let at = stopped_in.map(Phase::as_str).unwrap_or("the run");
    match result {
        Ok(()) => Verdict {
            state: RunState::Complete,
            reason: None,
            phase: None,
            signal: None,
        },
        Err(Stop::Interrupted(sig)) => Verdict {
            state: RunState::Aborted,
            reason: Some(format!(
                "interrupted by {sig} during {at}; partial data kept"
            )),
            phase: stopped_in,
            signal: Some(sig),
        },
        Err(Stop::Failed(e)) => Verdict {
            state: RunState::Failed,
            reason: Some(format!("{at} failed: {e:#}")),
            phase: stopped_in,
            signal: None,
        },
    }
}
