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
use anyhow::Context;
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

pub(crate) use layout::{Layout, MANIFEST_FILE, PLAN_FILE, REPORT_FILE, STATUS_FILE};
pub(crate) const LATEST: &str = "latest";

/// Environment variable that moves the run directories' root.
pub(crate) const OUT_ENV: &str = "PERFLAB_OUT";

/// Root of the run directories: `$PERFLAB_OUT`, else `./out`.
pub(crate) fn default_out_root() -> PathBuf {
    std::env::var_os(OUT_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("out"))
}

pub(crate) use crate::atomic::{write_atomic, write_json_atomic};

/// One run directory.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDir {
    pub path: PathBuf,
    pub experiment_id: String,
    pub round: u32,
    pub created: DateTime<Utc>,
}

/// Directory name for a run: `20261130T004356Z-r1`.
pub(crate) fn run_name(created: DateTime<Utc>, round: u32) -> String {
    format!("{}-r{round}", created.format("%Y%m%dT%H%M%SZ"))
}

/// Is `name` a name [`run_name`], [`create_new_dir`] and a matrix cell (`cell`) give:
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

/// Create `parent/base` (and `parent`), or `base-2`, `base-3`, ... when taken: never reuses a
/// directory.
pub(crate) fn create_new_dir(parent: &Path, base: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let mut n = 1;
    loop {
        let name = if n == 1 {
            base.to_string()
        } else {
            format!("{base}-{n}")
        };
        let p = parent.join(&name);
        match std::fs::create_dir(&p) {
            Ok(()) => {
                crate::atomic::note_created(&p);
                return Ok(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e).with_context(|| format!("creating {}", p.display())),
        }
    }
}

impl RunDir {
    /// Create `out_root/<experiment_id>/<now>-r<round>/` (a clash gets `-2`, `-3`, ...), point
    /// `latest` at it, and mark it `running` owned by this process.
    pub fn create(out_root: &Path, experiment_id: &str, round: u32) -> anyhow::Result<RunDir> {
        RunDir::create_at(out_root, experiment_id, round, Utc::now())
    }

    /// [`RunDir::create`] with an explicit creation time.
    pub fn create_at(
        out_root: &Path,
        experiment_id: &str,
        round: u32,
        now: DateTime<Utc>,
    ) -> anyhow::Result<RunDir> {
        RunDir::create_named(out_root, experiment_id, &run_name(now, round), round, now)
    }

    /// Create `out_root/<experiment_id>/<base>/` (`<base>-2`, ... when taken: never reuses a
    /// directory), point `latest` at it, and mark it `running` owned by this process.
    pub(crate) fn create_named(
        out_root: &Path,
        experiment_id: &str,
        base: &str,
        round: u32,
        created: DateTime<Utc>,
    ) -> anyhow::Result<RunDir> {
        anyhow::ensure!(
            crate::experiment::validate::valid_id(experiment_id),
            "`{experiment_id}` is not a valid experiment id for a run directory"
        );
        // out/<experiment>/ is a real directory: a link there (to anywhere) is refused.
        let parent = crate::atomic::create_dirs_under(out_root, &[experiment_id])?;
        let path = create_new_dir(&parent, base)?;
        let run = RunDir {
            path,
            experiment_id: experiment_id.to_string(),
            round,
            created,
        };
        run.set_status(&Status::new(RunState::Running, None))?;
        run.point_latest()?;
        Ok(run)
    }

    /// Open an existing run directory.
    pub fn open(path: &Path) -> anyhow::Result<RunDir> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .context("run directory has no name")?;
        let experiment_id = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .context("run directory has no experiment parent")?
            .to_string();
        let (stamp, rest) = name
            .split_once("-r")
            .with_context(|| format!("`{name}` is not <timestamp>-r<round>"))?;
        let round: u32 = rest
            .split('-')
            .next()
            .unwrap_or("")
            .parse()
            .with_context(|| format!("bad round in `{name}`"))?;
        let created = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ")
            .with_context(|| format!("bad timestamp in `{name}`"))?
            .and_utc();
        Ok(RunDir {
            path: path.to_path_buf(),
            experiment_id,
            round,
            created,
        })
    }

    /// The directory name (`20261130T004356Z-r1`, maybe with a clash suffix).
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Path of a file inside the run directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn point_latest(&self) -> anyhow::Result<()> {
        let parent = self.path.parent().context("run directory has no parent")?;
        let tmp = parent.join(format!(".{LATEST}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(self.name(), &tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        std::fs::rename(&tmp, parent.join(LATEST)).context("updating the `latest` link")?;
        crate::atomic::note_created(&parent.join(LATEST));
        Ok(())
    }

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

    pub fn set_status(&self, s: &Status) -> anyhow::Result<()> {
        write_json_atomic(&self.file(STATUS_FILE), s)
    }

    /// Set the state with a reason, owned by this process.
    pub fn mark(&self, state: RunState, reason: Option<&str>) -> anyhow::Result<()> {
        self.set_status(&Status::new(state, reason.map(str::to_string)))
    }

    /// [`RunDir::mark`] naming the phase the run stopped in.
    pub(crate) fn mark_in(
        &self,
        state: RunState,
        reason: Option<&str>,
        phase: Option<&str>,
    ) -> anyhow::Result<()> {
        let mut s = Status::new(state, reason.map(str::to_string));
        s.phase = phase.map(str::to_string);
        self.set_status(&s)
    }

    pub fn status(&self) -> anyhow::Result<Status> {
        read_status(&self.path)
    }
}

/// Parse `dir/name` (a document of `kind`, read through [`read::doc`]) with `parse`, naming the
/// file in the error; a file that cannot be read or parsed is bad input (exit 2).
fn read_file<T>(
    dir: &Path,
    name: &str,
    kind: read::FileKind,
    parse: impl FnOnce(&str) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let doc =
        read::doc(&read::RunFile::at(dir, name, kind)).map_err(read::ReadError::into_anyhow)?;
    parse(&doc.text)
        .map_err(|e| crate::error::invalid(format!("{e:#}")))
        .with_context(|| format!("parsing {}", dir.join(name).display()))
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

/// `dir/status.json`.
pub fn read_status(dir: &Path) -> anyhow::Result<Status> {
    read_file(dir, STATUS_FILE, read::FileKind::Status, |t| {
        Ok(serde_json::from_str(t)?)
    })
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
