//! The host-wide measurement lock (flock via fs2): one measurement at a time per host. The
//! flock is on the lock file, which every user opens read-only (perflab creates it 0644: never
//! world-writable); the holder records who it is (pid, user, experiment, since, expected end)
//! in a file of its own that only it can write (`holder`); a waiter registers itself in the
//! queue beside it (`queue`). The lock path lives in a world-writable directory (`/run/lock`),
//! so it is opened without following a symlink and must be a regular file; the folders beside
//! it are sticky (mode 1777, as /tmp).
pub mod done;
mod files;
pub mod holder;
mod purpose;
pub mod queue;

use chrono::Utc;
use fs2::FileExt;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Default lock file.
pub(crate) const DEFAULT_LOCK: &str = "/run/lock/perflab.lock";
/// Environment variable that overrides the lock path.
pub(crate) const LOCK_ENV: &str = "PERFLAB_LOCK";

use files::open_ro;
pub use holder::{HolderInfo, Holding, holding};
pub use purpose::Purpose;

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

/// A held lock; released (and the holder's record removed) on drop.
#[derive(Debug)]
pub struct HostLock {
    file: File,
    record: Option<holder::Record>,
}

/// The lock path: `$PERFLAB_LOCK` or `/run/lock/perflab.lock`.
pub fn lock_path() -> PathBuf {
    std::env::var_os(LOCK_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_LOCK))
}

/// The recorded holder of the lock: the record of the process that holds it, else the newest
/// record left (a killed holder's); `None` when no record is there. `holding` tells the two
/// apart.
pub fn read_holder(lock: &Path) -> Option<HolderInfo> {
    let h = holding(lock);
    h.holder
        .or_else(|| h.stale.into_iter().max_by_key(|r| r.since))
}

/// Create the lock file: read-only for everyone but its creator (0644 whatever the umask), who
/// never writes it either: the flock is all it is for.
fn create_nofollow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let _ = f.set_permissions(std::fs::Permissions::from_mode(0o644));
    Ok(f)
}

/// Open the lock file: create it, or open the one that is there read-only (an older perflab's
/// world-writable one of ours is made 0644). A symlink, a directory or a device is refused.
fn open_lock(path: &Path) -> Result<File, LockError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
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
    let file = match create_nofollow(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            open_ro(path).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => not_regular("a symbolic link"),
                Some(libc::EISDIR) => not_regular("a directory"),
                _ => open_err(e),
            })?
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(not_regular("a symbolic link"));
        }
        Err(e) => return Err(open_err(e)),
    };
    // What was opened (it may have been swapped since the look) must be a regular file too.
    let m = file.metadata().map_err(open_err)?;
    if !m.file_type().is_file() {
        return Err(not_regular(kind_of(&m.file_type())));
    }
    if m.mode() & 0o002 != 0 && m.uid() == unsafe { libc::geteuid() } {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o644));
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

/// What a waiter waits for, told again whenever it changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Waiting {
    /// The process holding the lock (its record, when believed: `holder`).
    Holder(Option<HolderInfo>),
    /// Earlier waiters of the queue, first come first served (this many).
    Queue(usize),
}

/// Take the lock at `path` for `purpose` (an experiment id, or a [`Purpose`] with the time it
/// expects to hold the lock). While waiting, `on_wait` is called with what it waits for once
/// and again whenever that changes (print "waiting for ..."), and the process is registered in
/// the queue beside the lock (`perflab status` lists it) until it gets the lock or gives up.
pub fn acquire(
    path: &Path,
    purpose: impl Into<Purpose>,
    wait: Wait,
    on_wait: impl FnMut(&Waiting),
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
    mut on_wait: impl FnMut(&Waiting),
    give_up: &AtomicBool,
) -> Result<HostLock, LockError> {
    let purpose = purpose.into();
    let file = open_lock(path)?;
    let mut last: Option<Waiting> = None;
    // In the queue while waiting; removed (dropped) whichever way this returns.
    let mut queued: Option<Option<queue::Registration>> = None;
    let mut patience = queue::Patience::default();
    loop {
        if give_up.load(Ordering::Relaxed) {
            return Err(LockError::GaveUp {
                path: path.to_path_buf(),
            });
        }
        // First come, first served among the waiters that queue: not even a free lock is
        // taken while an earlier waiter is in the queue, unless it leaves the free lock
        // untaken (`queue::Patience`). A waiter that could not queue (the directory
        // unusable) keeps no order, as before.
        let free = || !holder::flock_held(&file);
        let ahead = match (wait, &queued) {
            (Wait::NoWait, _) | (_, Some(None)) => 0,
            (Wait::Block, None) => patience.count(queue::waiting(path), free),
            (Wait::Block, Some(Some(me))) => patience.count(me.ahead(path), free),
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
                if wait == Wait::NoWait {
                    return Err(LockError::Busy {
                        path: path.to_path_buf(),
                        holder: holding(path).holder.map(Box::new),
                    });
                }
                queued.get_or_insert_with(|| queue::register(path, &purpose));
                let now = match ahead {
                    0 => Waiting::Holder(holding(path).holder),
                    n => Waiting::Queue(n),
                };
                if last.as_ref() != Some(&now) {
                    on_wait(&now);
                    last = Some(now);
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
        live: purpose.live,
    };
    // best effort: a holder that cannot be recorded only makes waiters print "holder unknown"
    let record = holder::write(path, &info);
    Ok(HostLock { file, record })
}

impl Drop for HostLock {
    fn drop(&mut self) {
        // remove the record while still holding the lock, so we never erase a successor's
        drop(self.record.take());
        let _ = FileExt::unlock(&self.file);
    }
}

/// The message a waiting process prints.
pub(crate) fn waiting_message(w: &Waiting) -> String {
    match w {
        Waiting::Holder(Some(h)) => format!("waiting for {h}"),
        Waiting::Holder(None) => "waiting for another perflab process (holder unknown)".to_string(),
        Waiting::Queue(n) => format!(
            "waiting for {n} earlier waiter(s) of the queue (first come first served: perflab status lists them)"
        ),
    }
}

/// `perflab lock-hold` (a debug command: lock contention between real processes): take the
/// host lock, say so on stdout, hold it `seconds`, release it and say so.
pub(crate) fn hold_for(purpose: Purpose, seconds: f64, no_wait: bool) -> anyhow::Result<()> {
    use std::io::Write;
    let wait = if no_wait { Wait::NoWait } else { Wait::Block };
    let lock = acquire(&lock_path(), purpose, wait, |h| {
        crate::say!("{}", waiting_message(h));
    })?;
    let mut out = crate::output::stdout();
    writeln!(
        out,
        "locked pid {} at {}",
        std::process::id(),
        chrono::Utc::now().to_rfc3339()
    )?;
    out.flush()?;
    std::thread::sleep(std::time::Duration::from_secs_f64(seconds.max(0.0)));
    drop(lock);
    writeln!(out, "released at {}", chrono::Utc::now().to_rfc3339())?;
    Ok(())
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
