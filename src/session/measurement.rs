//! What a round does on its warm stack: one or more loads. The published steps are one load
//! ([`Stepped`]); a calibration before them, or probes that bisect the knee after them, are
//! further loads on the same stack, each through its own phases (and a recovery pause between
//! them), written as another [`Measurement`] without touching the session's order of phases.
use crate::rundir::Layout;
use std::path::PathBuf;

use anyhow::Context;
use std::time::Duration;

use super::engine::{Engine, LoadSpec};
use super::load_phase::Stage;
use super::trail::Stop;
use crate::plan::Plan;
use crate::rundir::phase::Phase;

/// The measuring part of a round, between warm-up and the wind-down.
#[allow(async_fn_in_trait)]
pub trait Measurement {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop>;
}

/// The experiment's steps as planned: one load, outputs at the top of the run directory.
pub struct Stepped {
    pub plan: Plan,
    pub align: bool,
}

impl Measurement for Stepped {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        let load = LoadSpec {
            label: "measured".into(),
            plan: self.plan.clone(),
            out_dir: stage.dir.path.clone(),
            align: self.align,
            measured: true,
        };
        stage.run_load(&load).await
    }
}

impl<E: Engine> Stage<'_, E> {
    /// Where a load other than the measured steps keeps its outputs: `loads/<label>/`.
    pub fn load_dir(&self, label: &str) -> PathBuf {
        let name: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        Layout::new(&self.dir.path).load(&name).dir().to_path_buf()
    }

    /// A load other than the measured steps (calibration, probe): its plan written where the
    /// analysis finds it (`loads/<label>/plan.json`), started at once. Returns its directory.
    pub(crate) async fn run_extra_load(
        &mut self,
        label: &str,
        plan: Plan,
    ) -> Result<PathBuf, Stop> {
        let out_dir = self.load_dir(label);
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("creating {}", out_dir.display()))?;
        crate::rundir::write_json_atomic(&Layout::new(&out_dir).plan(), &plan)?;
        let load = LoadSpec {
            label: label.to_string(),
            plan,
            out_dir: out_dir.clone(),
            align: false,
            measured: false,
        };
        self.run_load(&load).await?;
        Ok(out_dir)
    }

    /// A recovery pause between loads (in-flight work drains), raced against the interrupt.
    pub async fn recover(&mut self, pause: Duration, label: &str) -> Result<(), Stop> {
        let engine = &mut *self.engine;
        let until = engine.now() + chrono::Duration::from_std(pause).unwrap_or_default();
        self.trail
            .run(
                self.interrupt,
                Phase::Recover,
                Some(label),
                engine.sleep_until(until),
            )
            .await
    }
}
