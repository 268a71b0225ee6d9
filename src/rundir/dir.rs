//! One run directory: its name, its creation (never over another), the `latest` link and its
//! status; and how its files are parsed, naming the file in the error.
use super::layout::STATUS_FILE;
use super::read;
use super::status::{RunState, Status};
use crate::atomic::write_json_atomic;
use anyhow::Context;
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

pub(crate) const LATEST: &str = "latest";

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
pub(super) fn read_file<T>(
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

/// `dir/status.json`.
pub fn read_status(dir: &Path) -> anyhow::Result<Status> {
    read_file(dir, STATUS_FILE, read::FileKind::Status, |t| {
        Ok(serde_json::from_str(t)?)
    })
}
