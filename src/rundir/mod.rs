//! Run directories `out/<experiment>/<UTC timestamp>-r<round>/` (never overwritten, `latest`
//! symlink), atomic writes, stale-run detection, and the types of every file a run directory
//! holds: `manifest.json` (`manifest`, `measurements`, older schemas through `migrate`),
//! `status.json` (`status`), `plan.json` (`plan::Plan`, written and read only here),
//! `report.json` (`report`) and a tool run's manifest (`tool`); every file's path is `layout`'s,
//! every file's type re-exported in `contract` (the samplers' records are `sample::records`').
//! Every reader of these files goes through this module's bounded, typed reader (`read`); the
//! analysis' inputs are read by `inputs`.
pub mod batch;
pub mod cell;
pub mod contract;
mod dir;
pub mod inputs;
pub mod layout;
pub mod manifest;
pub mod measurements;
pub(crate) mod migrate;
pub(crate) mod output_path;
pub mod phase;
pub mod read;
pub mod report;
pub mod status;
pub mod tool;

/// The fit record (`measurements.fit`) and the samplers' JSON lines (`samples/*.jsonl`), defined
/// below this floor beside their writers: see `contract`.
pub use contract::{fit, samples};
pub use manifest::{MANIFEST_SCHEMA_VERSION, Manifest};
pub use measurements::Measurements;
pub use status::{RunState, Status, owner_alive, process_start_ticks};
pub use tool::{TOOL_MANIFEST_SCHEMA_VERSION, ToolManifest, ToolMeasurements};

use crate::plan::Plan;
use std::path::{Path, PathBuf};

use dir::read_file;
pub(crate) use dir::{LATEST, create_new_dir};
pub use dir::{RunDir, read_status};
pub(crate) use layout::{Layout, MANIFEST_FILE, PLAN_FILE, REPORT_FILE, STATUS_FILE};

/// Environment variable that moves the run directories' root.
pub(crate) const OUT_ENV: &str = "PERFLAB_OUT";

/// Root of the run directories: `$PERFLAB_OUT`, else `./out`.
pub(crate) fn default_out_root() -> PathBuf {
    std::env::var_os(OUT_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("out"))
}

pub(crate) use crate::atomic::{write_atomic, write_json_atomic};

/// Is `name` a name [`run_name`](dir::run_name), [`create_new_dir`] and a matrix cell (`cell`) give:
/// `20261130T004356Z-r1`, maybe with a cell label (`-trixie`, `cell::valid_label`) and a
/// clash suffix (`-2`)? Folders named otherwise are not linked from the pages.
pub fn valid_run_name(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    let Some((stamp, rest)) = name.split_once("-r") else {
        return false;
    };
    let b = stamp.as_bytes();
    let stamp_ok = b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && digits(&stamp[..8])
        && digits(&stamp[9..15]);
    let mut parts = rest.splitn(4, '-').peekable();
    let round_ok = parts.next().is_some_and(digits);
    if parts.peek().is_some_and(|p| cell::valid_label(p)) {
        parts.next();
    }
    let clash_ok = parts.next().is_none_or(digits);
    stamp_ok && round_ok && clash_ok && parts.next().is_none()
}

impl RunDir {
    /// Write `manifest.json` and, from its plan, `plan.json`.
    pub fn write_manifest(&self, m: &Manifest) -> anyhow::Result<()> {
        write_json_atomic(&self.file(MANIFEST_FILE), m)?;
        write_json_atomic(&self.file(PLAN_FILE), &m.plan)
    }

    pub fn read_manifest(&self) -> anyhow::Result<Manifest> {
        read_manifest(&self.path)
    }

    pub fn read_plan(&self) -> anyhow::Result<Plan> {
        read_plan(&self.path)
    }
}

/// `dir/manifest.json` (older schemas migrated).
pub fn read_manifest(dir: &Path) -> anyhow::Result<Manifest> {
    read_file(
        dir,
        MANIFEST_FILE,
        read::FileKind::Manifest,
        Manifest::parse,
    )
}

/// `dir/plan.json`.
pub fn read_plan(dir: &Path) -> anyhow::Result<Plan> {
    read_file(dir, PLAN_FILE, read::FileKind::Plan, |t| {
        let p: Plan = serde_json::from_str(t)?;
        anyhow::ensure!(
            p.schema_version <= crate::plan::PLAN_SCHEMA_VERSION,
            "plan schema {} is newer than this perflab reads ({}): upgrade perflab",
            p.schema_version,
            crate::plan::PLAN_SCHEMA_VERSION
        );
        Ok(p)
    })
}

/// `dir/report.json`.
pub fn read_report(dir: &Path) -> anyhow::Result<crate::analyze::Report> {
    read_file(dir, REPORT_FILE, read::FileKind::Report, report::parse)
}

/// A tool run's `dir/manifest.json`.
pub fn read_tool_manifest(dir: &Path) -> anyhow::Result<ToolManifest> {
    read_file(dir, MANIFEST_FILE, read::FileKind::Manifest, |t| {
        Ok(serde_json::from_str(t)?)
    })
}

/// Write a tool run's `dir/manifest.json`.
pub(crate) fn write_tool_manifest(dir: &Path, m: &ToolManifest) -> anyhow::Result<()> {
    write_json_atomic(&dir.join(MANIFEST_FILE), m)
}

/// The folders of `out_root` that may hold run directories (one per experiment), sorted.
pub fn experiments(out_root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(out_root)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// The latest run of `id` under `out_root` that recorded a fit: its folder name and record.
pub(crate) fn last_fit(out_root: &Path, id: &str) -> Option<(String, fit::FitRecord)> {
    let mut runs = list_runs(out_root, Some(id));
    runs.reverse();
    runs.into_iter().find_map(|d| {
        let m = d.read_manifest().ok()?;
        Some((d.name(), m.measurements.fit?))
    })
}

/// All run directories under `out_root` (of one experiment, or all), oldest first.
pub fn list_runs(out_root: &Path, experiment_id: Option<&str>) -> Vec<RunDir> {
    let exp_dirs: Vec<PathBuf> = match experiment_id {
        Some(id) => vec![out_root.join(id)],
        None => experiments(out_root)
            .iter()
            .map(|id| out_root.join(id))
            .collect(),
    };
    let mut runs: Vec<RunDir> = exp_dirs
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(d)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok())
        })
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| RunDir::open(&e.path()).ok())
        .collect();
    runs.sort_by_key(|a| (a.created, a.name()));
    runs
}

/// Mark `running` runs whose owner process is gone (e.g. SIGKILL) as `aborted`. Returns them.
pub fn mark_stale_runs(out_root: &Path) -> Vec<RunDir> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string());
    list_runs(out_root, None)
        .into_iter()
        .filter(|r| {
            r.status().is_ok_and(|s| {
                s.state == RunState::Running
                    && (s.hostname.is_none() || s.hostname == host)
                    && !owner_alive(&s)
            })
        })
        .filter(|r| {
            r.mark(
                RunState::Aborted,
                Some("the perflab process died during the run (killed); partial data kept"),
            )
            .is_ok()
        })
        .collect()
}
