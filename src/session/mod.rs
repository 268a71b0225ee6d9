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
pub mod trail;
pub mod twin;

use std::future::Future;

use anyhow::{Context, Result};

pub use crate::rundir::phase::{Phase, PhaseRecord};
pub use engine::{Engine, LoadSpec};
pub use round::{RoundOutcome, run_round};
use signals::Interrupt;
pub use trail::{Stop, Trail};
pub(crate) use trail::{Verdict, or_interrupt, verdict};

use crate::lock::{self, Wait};

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
