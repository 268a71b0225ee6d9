//! The measurement session: the named phases every measuring command goes through (lock, run
//! directory and manifest, stack up, warm-up, generators ready, aligned start, measure and
//! sample, collect, teardown, report), each raced against Ctrl-C/SIGTERM and recorded, with
//! the engine-facing work behind the [`Engine`] trait (`DockerEngine` for real, `FakeEngine`
//! for tests of the phases, interrupts and failures without Docker).
pub mod engine;
pub mod fake;
pub mod fit;
pub mod interleave;
pub mod load_phase;
pub mod measurement;
pub mod pause;
pub mod records;
pub mod refine;
pub mod round;
pub mod signals;
pub mod sweep;
pub mod twin;

use std::future::Future;
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

pub use crate::rundir::phase::{Phase, PhaseRecord};
pub use engine::{Engine, LoadSpec};
pub use round::{RoundOutcome, run_round};
use signals::Interrupt;

use crate::lock::{self, Wait};

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

/// A session: the host lock it holds, the interrupt it races every phase against, and the
/// trail of its phases. `perflab run` holds one across its rounds; each tool run is one.
pub(crate) struct Session {
    pub interrupt: Interrupt,
    pub trail: Trail,
    _lock: Option<lock::HostLock>,
}

impl Session {
    /// The Lock phase: wait for the host lock (an interrupt while waiting starts nothing).
    pub(crate) async fn begin(
        target: impl Into<lock::Purpose>,
        wait: Wait,
        quiet: bool,
        interrupt: Interrupt,
    ) -> Result<Session> {
        let mut trail = Trail::default();
        let held = trail
            .record(
                Phase::Lock,
                None,
                acquire_lock(target, wait, quiet, &interrupt),
            )
            .await;
        match held {
            Ok(l) => Ok(Session {
                interrupt,
                trail,
                _lock: Some(l),
            }),
            Err(Stop::Failed(e)) => Err(e),
            Err(Stop::Interrupted(sig)) => anyhow::bail!("interrupted by {sig}"),
        }
    }

    /// Run `fut` as `phase`, raced against the interrupt, and record it.
    pub(crate) async fn phase<T>(
        &mut self,
        phase: Phase,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T, Stop> {
        self.trail.run(&self.interrupt, phase, None, fut).await
    }

    /// Run `fut` as `phase` to its end (not raced), and record it.
    pub(crate) async fn finish_phase<T>(
        &mut self,
        phase: Phase,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T, Stop> {
        self.trail.record(phase, None, fut).await
    }

    /// The final state, its reason and the phase it names, for a session that ended with
    /// `result` (see [`verdict`]).
    pub(crate) fn verdict(&self, result: &Result<(), Stop>) -> Verdict {
        verdict(result, self.trail.current())
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

/// The Lock phase: take the host lock for `target` (an id, or a `lock::Purpose` with the seconds it expects to hold it; printing "waiting for ..." unless quiet),
/// giving up when a signal arrives first (nothing has been started then).
pub(crate) async fn acquire_lock(
    target: impl Into<lock::Purpose>,
    wait: Wait,
    quiet: bool,
    interrupt: &Interrupt,
) -> Result<lock::HostLock> {
    acquire_lock_at(lock::lock_path(), target, wait, quiet, interrupt).await
}

/// [`acquire_lock`] on the lock file `lock_path`.
pub async fn acquire_lock_at(
    lock_path: std::path::PathBuf,
    target: impl Into<lock::Purpose>,
    wait: Wait,
    quiet: bool,
    interrupt: &Interrupt,
) -> Result<lock::HostLock> {
    // The waiting thread stops when told: the runtime waits for it at exit.
    let give_up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut waiting = {
        let target: lock::Purpose = target.into();
        let path = lock_path.clone();
        let give_up = give_up.clone();
        tokio::task::spawn_blocking(move || {
            let on_wait = |w: &lock::Waiting| {
                if !quiet {
                    crate::say!("{}", lock::waiting_message(w));
                }
            };
            lock::acquire_until(&path, target, wait, on_wait, &give_up)
        })
    };
    let mut i = interrupt.clone();
    tokio::select! {
        r = &mut waiting => Ok(r.context("waiting for the host lock")?.with_context(|| format!("taking the host lock {}", lock_path.display()))?),
        sig = i.wait() => {
            give_up.store(true, std::sync::atomic::Ordering::Relaxed);
            waiting.abort();
            anyhow::bail!("interrupted by {sig} while waiting for the host lock; nothing was started");
        }
    }
}
