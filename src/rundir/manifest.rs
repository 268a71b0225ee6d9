//! `manifest.json` of an experiment run: everything needed to interpret and reproduce it
//! (schema 2), and reading older schemas by migrating them first (`migrate`).
use super::dir::RunDir;
use super::measurements::Measurements;
use super::migrate;
use crate::experiment::Experiment;
use crate::host::{HostFacts, PerflabVersion};
use crate::plan::{CpuLayout, Plan};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use super::migrate::MANIFEST_SCHEMA_VERSION;

/// `manifest.json`: everything needed to interpret and reproduce a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub run_id: String,
    pub experiment_id: String,
    pub round: u32,
    pub created: DateTime<Utc>,
    /// The resolved experiment (after `--set` overrides).
    pub experiment: Experiment,
    /// The `--set` overrides as given.
    pub overrides: Vec<String>,
    pub plan: Plan,
    pub perflab: PerflabVersion,
    pub host: HostFacts,
    pub cpu_layout: CpuLayout,
    /// Environment caveats (layout, cgroup v1, ...), for the report.
    pub caveats: Vec<String>,
    /// Component versions (nginx, php, laravel, postgres, node, express, k6, ...), filled by the stack.
    pub components: BTreeMap<String, String>,
    /// Image name -> image id, filled by the stack.
    pub images: BTreeMap<String, String>,
    /// Measurements about the harness and the stack, filled by the run.
    pub measurements: Measurements,
}

impl Manifest {
    /// A manifest with host facts, version and caveats (layout + host) filled in.
    pub fn new(
        run: &RunDir,
        experiment: Experiment,
        overrides: Vec<String>,
        plan: Plan,
        cpu_layout: CpuLayout,
    ) -> Manifest {
        let host = HostFacts::collect();
        let mut caveats = cpu_layout.caveats.clone();
        caveats.extend(host.caveats());
        Manifest {
            schema_version: MANIFEST_SCHEMA_VERSION,
            run_id: run.name(),
            experiment_id: run.experiment_id.clone(),
            round: run.round,
            created: run.created,
            experiment,
            overrides,
            plan,
            perflab: PerflabVersion::current(),
            host,
            cpu_layout,
            caveats,
            components: BTreeMap::new(),
            images: BTreeMap::new(),
            measurements: Measurements::default(),
        }
    }

    /// Parse a manifest of any known schema (older ones migrated to the current one).
    pub fn parse(text: &str) -> anyhow::Result<Manifest> {
        migrate::manifest_from_text(text)
    }

    /// The Debian suite of the run's images: `measurements.stack.suite`, else the base image's tag
    /// (`perflab/base:trixie-3660824d8b4c`).
    pub(crate) fn suite(&self) -> Option<String> {
        if let Some(s) = &self.measurements.stack.suite {
            return Some(s.clone());
        }
        self.images.values().find_map(|img| {
            let tag = img.split_whitespace().next()?.rsplit_once(':')?.1;
            Some(tag.split_once('-').map_or(tag, |(s, _)| s).to_string())
        })
    }
}
