//! The host-wide measurement lock (flock via fs2): one measurement at a time per host. The
//! holder writes who it is (pid, user, experiment, since, expected end) into the lock file
//! itself; a waiter registers itself in the queue beside it (`queue`). The lock path lives in
//! a world-writable directory (`/run/lock`), so it is opened without following a symlink, must
//! be a regular file, and is made shareable (0666) only when perflab created it.
pub mod queue;

use chrono::{DateTime, Utc};
use fs2::FileExt;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Default lock file.
pub(crate) const DEFAULT_LOCK: &str = "/run/lock/perflab.lock";
/// Environment variable that overrides the lock path.
pub(crate) const LOCK_ENV: &str = "PERFLAB_LOCK";

/// What a process takes the lock for, as the others see it while it holds the lock or waits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purpose {
    /// The experiment, group or command (`exp1`, `all`, `down`, a tool's run directory).
    pub what: String,
    /// How long it expects to hold the lock (from its plan), when it knows.
    pub expected_s: Option<u64>,
}

impl Purpose {
    /// `what`, expected to hold the lock for `expected_s` seconds.
    pub(crate) fn new(what: impl Into<String>, expected_s: Option<u64>) -> Purpose {
        Purpose {
            what: what.into(),
            expected_s,
        }
    }
}

impl From<&str> for Purpose {
    fn from(what: &str) -> Purpose {
        Purpose::new(what, None)
    }
}

impl From<&String> for Purpose {
    fn from(what: &String) -> Purpose {
        Purpose::new(what.as_str(), None)
    }
}

/// Who holds the lock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HolderInfo {
    pub pid: u32,
    pub experiment: String,
    pub since: DateTime<Utc>,
    pub hostname: Option<String>,
    /// Who invoked the holder (`owner::invoking_user`); empty from an older perflab.
    #[serde(default)]
    pub user: String,
    /// The holder's start time (clock ticks since boot) and boot id: whether it still runs.
    #[serde(default)]
    pub start: u64,
    #[serde(default)]
    pub boot: String,
    /// When the holder expects to release the lock (from its plan), when it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_end: Option<DateTime<Utc>>,
}

impl HolderInfo {
    /// The holder as an owner, to tell whether it still runs.
    pub(crate) fn owner(&self) -> crate::owner::Owner {
        crate::owner::Owner {
            host: self.hostname.clone().unwrap_or_default(),
            pid: self.pid,
            start: self.start,
            boot: self.boot.clone(),
            user: self.user.clone(),
        }
    }
}

impl std::fmt::Display for HolderInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (pid {}, since {}",
            self.experiment,
            self.pid,
            self.since.format("%Y-%m-%dT%H:%M:%SZ")
        )?;
        if !self.user.is_empty() {
            write!(f, ", user {}", self.user)?;
        }
        if let Some(end) = self.expected_end {
            write!(f, ", expected to end about {}", end.format("%H:%M:%SZ"))?;
        }
        write!(f, ")")
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
        holder: Option<Box<HolderInfo>>,
    },
    #[error("cannot open the lock file {}: {source}; set {LOCK_ENV}=<writable path> to use another one", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the lock path {} is not a regular file ({what}); perflab refuses it (it may be a planted link): remove it or set {LOCK_ENV}=<another path>",
        .path.display()
    )]
    NotRegular { path: PathBuf, what: &'static str },
    #[error("gave up waiting for {}", .path.display())]
    GaveUp { path: PathBuf },
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
}

/// The lock path: `$PERFLAB_LOCK` or `/run/lock/perflab.lock`.
pub fn lock_path() -> PathBuf {
    std::env::var_os(LOCK_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_LOCK))
}

/// Read who holds the lock from the lock file (None when free, unreadable or mid-write).
pub fn read_holder(lock: &Path) -> Option<HolderInfo> {
    let f = open_nofollow(lock, false).ok()?;
    read_holder_from(&f)
}

fn read_holder_from(f: &File) -> Option<HolderInfo> {
    use std::os::unix::fs::FileExt as _;
    // A holder is a few hundred bytes: never read more than that from a shared file.
    let mut buf = vec![0u8; 4096];
    let n = f.read_at(&mut buf, 0).ok()?;
    serde_json::from_slice(&buf[..n]).ok()
}

/// Open `path` read-write without following a symlink in its last component; `create` makes
/// it when missing (never truncating one that exists).
fn open_nofollow(path: &Path, create: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(create)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Open the lock file: create it (then, being ours, share it with every user: 0666 whatever
/// the umask), or open the one that is there. A symlink, a directory or a device is refused.
fn open_lock(path: &Path) -> Result<File, LockError> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let open_err = |source| LockError::Open {
        path: path.to_path_buf(),
        source,
    };
    let not_regular = |what| LockError::NotRegular {
        path: path.to_path_buf(),
        what,
    };
    // Look before opening: a device or FIFO is never opened at all.
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let t = m.file_type();
        if !t.is_file() {
            return Err(not_regular(kind_of(&t)));
        }
    }
    let file = match open_nofollow(path, true) {
        Ok(f) => {
            let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
            f
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => open_nofollow(path, false)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => not_regular("a symbolic link"),
                Some(libc::EISDIR) => not_regular("a directory"),
                _ => open_err(e),
            })?,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(not_regular("a symbolic link"));
        }
        Err(e) => return Err(open_err(e)),
    };
    // What was opened (it may have been swapped since the look) must be a regular file too.
    let t = file.metadata().map_err(open_err)?.file_type();
    if !t.is_file() {
        return Err(not_regular(kind_of(&t)));
    }
    Ok(file)
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

/// Write who holds the lock into the (locked) lock file.
fn write_holder(f: &File, info: &HolderInfo) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt as _;
    let json = serde_json::to_vec(info).expect("holder info serializes");
    f.set_len(0)?;
    f.write_all_at(&json, 0)
}

/// Take the lock at `path` for `purpose` (an experiment id, or a [`Purpose`] with the time it
/// expects to hold the lock). While waiting, `on_wait` is called with the holder once and again
/// whenever the holder changes (print "waiting for ..."), and the process is registered in the
/// queue beside the lock (`perflab status` lists it) until it gets the lock or gives up.
pub fn acquire(
    path: &Path,
    purpose: impl Into<Purpose>,
    wait: Wait,
    on_wait: impl FnMut(Option<&HolderInfo>),
) -> Result<HostLock, LockError> {
    acquire_until(path, purpose, wait, on_wait, &AtomicBool::new(false))
}

/// [`acquire`], giving up (`LockError::GaveUp`) within 200 ms once `give_up` is set: a waiter
/// interrupted by Ctrl-C must not keep a thread polling the lock (its runtime would wait for
/// it at exit).
pub(crate) fn acquire_until(
    path: &Path,
    purpose: impl Into<Purpose>,
    wait: Wait,
    mut on_wait: impl FnMut(Option<&HolderInfo>),
    give_up: &AtomicBool,
) -> Result<HostLock, LockError> {
    let purpose = purpose.into();
    let file = open_lock(path)?;
    let mut last: Option<Option<HolderInfo>> = None;
    // In the queue while waiting; removed (dropped) whichever way this returns.
    let mut queued: Option<Option<queue::Registration>> = None;
    loop {
        if give_up.load(Ordering::Relaxed) {
            return Err(LockError::GaveUp {
                path: path.to_path_buf(),
            });
        }
        // First come, first served among the waiters that queue: not even a free lock is
        // taken while an earlier waiter is in the queue. A waiter that could not queue (the
        // directory unusable) keeps no order, as before.
        let ahead = match (wait, &queued) {
            (Wait::NoWait, _) | (_, Some(None)) => 0,
            (Wait::Block, None) => queue::waiting(path),
            (Wait::Block, Some(Some(me))) => me.ahead(path),
        };
        let attempt = if ahead > 0 {
            Err(std::io::Error::from_raw_os_error(libc::EWOULDBLOCK))
        } else {
            file.try_lock_exclusive()
        };
        match attempt {
            Ok(()) => break,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.raw_os_error() == Some(libc::EWOULDBLOCK) =>
            {
                let holder = read_holder_from(&file);
                if wait == Wait::NoWait {
                    return Err(LockError::Busy {
                        path: path.to_path_buf(),
                        holder: holder.map(Box::new),
                    });
                }
                queued.get_or_insert_with(|| queue::register(path, &purpose));
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
    drop(queued);
    let me = crate::owner::Owner::me();
    let since = Utc::now();
    let info = HolderInfo {
        pid: me.pid,
        experiment: purpose.what,
        since,
        hostname: Some(me.host.clone()),
        user: me.user.clone(),
        start: me.start,
        boot: me.boot.clone(),
        expected_end: purpose.expected_s.map(|s| queue::after(since, s)),
    };
    // best effort: a holder that cannot be written only makes waiters print "unknown holder"
    let _ = write_holder(&file, &info);
    Ok(HostLock { file })
}

impl Drop for HostLock {
    fn drop(&mut self) {
        // empty the holder while still holding the lock, so we never erase a successor's
        let _ = self.file.set_len(0);
        let _ = FileExt::unlock(&self.file);
    }
}

/// The message a waiting process prints.
pub(crate) fn waiting_message(holder: Option<&HolderInfo>) -> String {
    match holder {
        Some(h) => format!("waiting for {h}"),
        None => "waiting for another perflab process (holder unknown)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_gives_up_when_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.lock");
        let held = acquire(&path, "holder", Wait::NoWait, |_| {}).unwrap();
        let give_up = std::sync::Arc::new(AtomicBool::new(false));
        let g = give_up.clone();
        let p = path.clone();
        let waiter =
            std::thread::spawn(move || acquire_until(&p, "waiter", Wait::Block, |_| {}, &g));
        std::thread::sleep(Duration::from_millis(300));
        give_up.store(true, Ordering::Relaxed);
        let t0 = std::time::Instant::now();
        let r = waiter.join().unwrap();
        assert!(matches!(r, Err(LockError::GaveUp { .. })), "{r:?}");
        assert!(t0.elapsed() < Duration::from_millis(500));
        drop(held);
    }
}
