//! The host-wide measurement lock (flock via fs2): one measurement at a time per host.
//! The holder writes who it is (pid, experiment, since) into `<lock>.holder` beside the lock.
use chrono::{DateTime, Utc};
use fs2::FileExt;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default lock file.
pub const DEFAULT_LOCK: &str = "/run/lock/perflab.lock";
/// Environment variable that overrides the lock path.
pub const LOCK_ENV: &str = "PERFLAB_LOCK";

/// Who holds the lock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HolderInfo {
    pub pid: u32,
    pub experiment: String,
    pub since: DateTime<Utc>,
    pub hostname: Option<String>,
}

impl std::fmt::Display for HolderInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (pid {}, since {})",
            self.experiment,
            self.pid,
            self.since.format("%Y-%m-%dT%H:%M:%SZ")
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the host is busy: {} holds {}; wait for it (drop --no-wait) or try again later",
        .holder.as_ref().map_or("another perflab process".to_string(), |h| h.to_string()),
        .path.display()
    )]
    Busy {
        path: PathBuf,
        holder: Option<HolderInfo>,
    },
    #[error("cannot open the lock file {}: {source}; set {LOCK_ENV}=<writable path> to use another one", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("locking {} failed: {source}", .path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Wait for the lock or fail at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Block,
    NoWait,
}

/// A held lock; released (and the holder file removed) on drop.
#[derive(Debug)]
pub struct HostLock {
    file: File,
    path: PathBuf,
    info: HolderInfo,
}

/// The lock path: `$PERFLAB_LOCK` or `/run/lock/perflab.lock`.
pub fn lock_path() -> PathBuf {
    std::env::var_os(LOCK_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_LOCK))
}

/// The holder file beside a lock.
pub fn holder_path(lock: &Path) -> PathBuf {
    let mut s = lock.as_os_str().to_owned();
    s.push(".holder");
    PathBuf::from(s)
}

/// Read the holder file (None when absent or unreadable).
pub fn read_holder(lock: &Path) -> Option<HolderInfo> {
    let text = std::fs::read_to_string(holder_path(lock)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Take the lock at `path` for `experiment`. While waiting, `on_wait` is called with the
/// holder once and again whenever the holder changes (print "waiting for ...").
pub fn acquire(
    path: &Path,
    experiment: &str,
    wait: Wait,
    mut on_wait: impl FnMut(Option<&HolderInfo>),
) -> Result<HostLock, LockError> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path)
        .map_err(|source| LockError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    // shared by every user of the host (the umask may have narrowed the mode); best effort
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut last: Option<Option<HolderInfo>> = None;
    loop {
        match file.try_lock_exclusive() {
            Ok(()) => break,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.raw_os_error() == Some(libc::EWOULDBLOCK) =>
            {
                let holder = read_holder(path);
                if wait == Wait::NoWait {
                    return Err(LockError::Busy {
                        path: path.to_path_buf(),
                        holder,
                    });
                }
                if last.as_ref() != Some(&holder) {
                    on_wait(holder.as_ref());
                    last = Some(holder);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(source) => {
                return Err(LockError::Lock {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    let info = HolderInfo {
        pid: std::process::id(),
        experiment: experiment.to_string(),
        since: Utc::now(),
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string()),
    };
    let json = serde_json::to_vec_pretty(&info).expect("holder info serializes");
    // best effort: a missing holder file only makes waiters print "unknown holder"
    let _ = crate::rundir::write_atomic(&holder_path(path), &json);
    Ok(HostLock {
        file,
        path: path.to_path_buf(),
        info,
    })
}

impl HostLock {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn info(&self) -> &HolderInfo {
        &self.info
    }

    /// Release now (same as dropping).
    pub fn release(self) {}
}

impl Drop for HostLock {
    fn drop(&mut self) {
        // remove our holder file while still holding the lock, so we never delete a successor's
        if read_holder(&self.path).is_some_and(|h| h.pid == self.info.pid) {
            let _ = std::fs::remove_file(holder_path(&self.path));
        }
        let _ = FileExt::unlock(&self.file);
    }
}

/// The message a waiting process prints.
pub fn waiting_message(holder: Option<&HolderInfo>) -> String {
    match holder {
        Some(h) => format!("waiting for {h}"),
        None => "waiting for another perflab process (holder unknown)".to_string(),
    }
}
