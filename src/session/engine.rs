//! What a session asks of the engine, phase by phase: the only seam between the session's
//! order of phases and the Docker work behind them (`DockerEngine`), so the phases, interrupts
//! and failures can be driven by `FakeEngine` in tests.
use std::path::PathBuf;

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::records::Records;
use super::signals::Interrupt;
use crate::docker::ExitStatus;
use crate::experiment::Experiment;
use crate::plan::{Alignment, Plan};
use crate::rundir::RunDir;

/// One load on the stack: the measured steps, or a calibration or probe load before or after
/// them. Its k6 outputs go to `out_dir/k6/` and its samples to `out_dir/samples/`.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// `measured`, `calibration`, `probe 2`, ...
    pub label: String,
    pub plan: Plan,
    pub out_dir: PathBuf,
    /// Start the first step on a wall-clock minute.
    pub align: bool,
    /// The experiment's own steps, whose outputs are the run directory's top; false for a
    /// calibration or a probe (`loads/<label>/`), whose k6 facts stay out of the manifest.
    pub measured: bool,
}

/// How one generator ended, with the end of its log (for the error message).
#[derive(Debug, Clone)]
pub struct GeneratorEnd {
    pub name: String,
    pub status: ExitStatus,
    pub log: String,
}

/// The round a session runs: what the engine needs to know before the stack is up.
pub struct RoundContext<'a> {
    pub dir: &'a RunDir,
    pub run_id: &'a str,
    pub experiment: &'a Experiment,
}

/// The engine-facing operations of a session. Each is one phase's work (or part of it); the
/// session decides the order, races them against the interrupt and records the outcome.
/// Implementations push what they measure as typed records (`Records`) the moment they have
/// it; the session writes them into the manifest after the phase, however it ended.
#[allow(async_fn_in_trait)]
pub trait Engine {
    /// Run directory and manifest: learn the round, record component versions and images.
    async fn begin(&mut self, round: &RoundContext<'_>, rec: &mut Records) -> Result<()>;
    /// The experiment the next stack up starts (`--fit` restarts the stack with fitted settings).
    fn set_experiment(&mut self, e: &Experiment);
    /// Stack up: start the lab's containers and wait until each answers.
    async fn stack_up(&mut self, rec: &mut Records) -> Result<()>;
    /// Warm-up: the harness's own database connection, the lab's warm-up, the smoke check.
    async fn warm_up(&mut self, rec: &mut Records) -> Result<()>;
    /// Generators ready: created and started paused (script parsed, VUs allocated), or created
    /// to wait in a start gate. Returns true when they are paused (resumed on the instant).
    async fn generators_ready(&mut self, load: &LoadSpec, rec: &mut Records) -> Result<bool>;
    /// Arm the start for `al` (gated generators get their gate); returns the instant to wake
    /// at before [`Engine::start_load`].
    async fn arm(&mut self, al: &Alignment, rec: &mut Records) -> Result<DateTime<Utc>>;
    /// The engine's notion of now (the fake's clock never waits).
    fn now(&self) -> DateTime<Utc>;
    /// Sleep until `t` (the aligned start).
    async fn sleep_until(&mut self, t: DateTime<Utc>) -> Result<()>;
    /// Start the load on the instant, and the samplers beside it.
    async fn start_load(
        &mut self,
        load: &LoadSpec,
        al: &Alignment,
        rec: &mut Records,
    ) -> Result<()>;
    /// Measure: wait until every generator has exited; when `stop` fires, stop them (their
    /// status is then `Cancelled`).
    async fn wait_load(&mut self, stop: Interrupt) -> Result<Vec<ExitStatus>>;
    /// Collect this load: samplers stopped, the generators' files out, their log tails.
    async fn collect_load(
        &mut self,
        load: &LoadSpec,
        statuses: Vec<ExitStatus>,
        rec: &mut Records,
    ) -> Result<Vec<GeneratorEnd>>;
    /// Collect the stack's logs into the run directory (whatever happened before).
    async fn collect_logs(&mut self, rec: &mut Records) -> Result<()>;
    /// Remove every container, network and volume of the round (idempotent).
    async fn teardown(&mut self) -> Result<()>;
}
