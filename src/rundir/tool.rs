//! `manifest.json` of a methodology tool's run (`noise-check`, `calib`, `cpu-per-request`):
//! like a run's manifest, without experiment and plan, with the tools' own measurements.
use super::measurements::StackMeasurements;
use crate::analyze::stats::Summary;
use crate::host::{HostFacts, PerflabVersion};
use crate::plan::CpuLayout;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of a tool's `manifest.json`.
pub const TOOL_MANIFEST_SCHEMA_VERSION: u32 = 1;

/// `manifest.json` of a tool run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolManifest {
    pub schema_version: u32,
    /// Always `tool` (a run's manifest has an `experiment` instead).
    pub kind: String,
    /// `noise-check`, `calib`, `cpu-per-request`.
    pub tool: String,
    pub run_id: String,
    pub created: DateTime<Utc>,
    /// The command-line settings as resolved (defaults filled in).
    pub args: ToolArgs,
    pub perflab: PerflabVersion,
    pub host: HostFacts,
    pub cpu_layout: CpuLayout,
    /// Where the tool's own threads and the lab's containers ran (`measuring_thread`, `orchestrator`, ...).
    pub pinning: BTreeMap<String, String>,
    pub caveats: Vec<String>,
    /// Component versions (kernel, docker engine, lab images' software).
    pub components: BTreeMap<String, String>,
    pub images: BTreeMap<String, String>,
    pub measurements: ToolMeasurements,
}

/// A tool's settings (each tool's own type; told apart by their fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolArgs {
    Noise(NoiseSettings),
    Calib(CalibSettings),
    Cpr(CprSettings),
}

/// `measurements` of a tool run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolMeasurements {
    /// cpu-per-request: its stack.
    #[serde(flatten)]
    pub stack: StackMeasurements,
    /// The perflab containers running when the tool started (empty: the lab was idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_containers_running: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ToolSummary>,
    /// The host speed probe before the tool measured and after (absent in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_speed: Option<crate::host::speed::HostSpeed>,
}

/// The headline figures of a tool's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolSummary {
    Calib(CalibSummary),
    Noise(NoiseSummary),
}

/// `calib`'s headline figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibSummary {
    pub iterations: u64,
    pub wall_ms: Option<Summary>,
    /// Repeats during which the CPU saw steal / was preempted.
    pub steal_repeats: Vec<u32>,
    pub preempted_repeats: Vec<u32>,
}

/// `noise-check`'s headline figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseSummary {
    pub wakeups: u64,
    pub stalls: usize,
    /// The largest stall's lateness (ms).
    pub max_ms: Option<f64>,
    /// Stalls in the first seconds (the article's head window).
    pub head_stalls: u32,
    pub head_density_ratio: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tools_summary_reads_back_as_its_own() {
        let noise = ToolMeasurements {
            lab_containers_running: Some(vec![]),
            summary: Some(ToolSummary::Noise(NoiseSummary {
                wakeups: 60_000,
                stalls: 3,
                max_ms: Some(4.2),
                head_stalls: 1,
                head_density_ratio: None,
            })),
            ..Default::default()
        };
        let calib = ToolMeasurements {
            summary: Some(ToolSummary::Calib(CalibSummary {
                iterations: 1_000_000,
                wall_ms: None,
                steal_repeats: vec![2],
                preempted_repeats: vec![],
            })),
            ..Default::default()
        };
        let mut cpr = ToolMeasurements::default();
        cpr.stack.run_id = Some("run-cpu-per-request-x".into());
        cpr.stack.warmup = Some(crate::rundir::measurements::Warmup {
            requests: 20,
            status_counts: [(200, 20)].into(),
            prewarmed_blocks: None,
        });
        for m in [noise, calib, cpr] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<ToolMeasurements>(&text).unwrap(), m);
        }
    }

    #[test]
    fn each_tools_args_read_back_as_its_own() {
        let args = [
            ToolArgs::Noise(NoiseSettings {
                cpu: 1,
                seconds: 60.0,
                threshold_ms: 1.0,
                sleep_ms: 1.0,
            }),
            ToolArgs::Calib(CalibSettings {
                cpu: 1,
                repeats: 10,
                work_ms: 100.0,
            }),
            ToolArgs::Cpr(CprSettings {
                lab: "php".into(),
                n: 30,
                endpoints: vec!["/api/ping".into()],
                warmup: 5,
                idle_s: 0.0,
                fresh_connections: false,
                suite: "trixie".into(),
            }),
        ];
        for a in args {
            let text = serde_json::to_string(&a).unwrap();
            assert_eq!(
                serde_json::from_str::<ToolArgs>(&text).unwrap(),
                a,
                "{text}"
            );
        }
    }
}

/// What was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibSettings {
    pub cpu: u32,
    pub repeats: u32,
    pub work_ms: f64,
}

/// What was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CprSettings {
    pub lab: String,
    pub n: u32,
    pub endpoints: Vec<String>,
    /// Sequential requests per endpoint before its counters are read.
    pub warmup: u32,
    /// Seconds of idle baseline measured before the endpoints (0 = none).
    pub idle_s: f64,
    /// A new TCP connection per request (the article's wget did that) instead of keep-alive.
    pub fresh_connections: bool,
    pub suite: String,
}

/// What was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseSettings {
    pub cpu: u32,
    pub seconds: f64,
    pub threshold_ms: f64,
    pub sleep_ms: f64,
}
