//! The queue behind the host lock. A process waiting for the lock registers itself (pid, user,
//! experiment, since when, the seconds it expects to hold the lock) as one small file in a
//! directory next to the lock (`<lock>.waiting/`), written atomically, and removes it once it
//! holds the lock or gives up. A waiter whose process is gone (killed) is ignored and its file
//! swept. Waiting is first come, first served among the processes that queue: a waiter does not
//! take the lock, even free, while an earlier live waiter is in the queue (a stopped one, ^Z,
//! does not hold the others up); a perflab that does not queue (an older one) can still come
//! first. [`status`] reads the live holder and the live waiters and estimates when each will be
//! done, in arrival order.
use super::{HolderInfo, Purpose};
use crate::owner::{Liveness, Owner};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// At most this many entries are read (a workshop's queue is a few dozen).
const MAX_ENTRIES: usize = 1000;
/// An entry is a few hundred bytes: never read more from a shared directory.
const MAX_ENTRY_BYTES: u64 = 4096;
/// The longest expected duration taken from a plan (a week): keeps the arithmetic in range.
const MAX_EXPECTED_S: u64 = 7 * 86_400;

/// One process waiting for the lock, as its queue file records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waiter {
    pub pid: u32,
    /// Its start time (clock ticks since boot), boot id and host: whether it still runs.
    pub start: u64,
    pub boot: String,
    pub host: String,
    /// Who invoked it (`owner::invoking_user`).
    pub user: String,
    /// What it will run: an experiment or group id, or a command (`down`, `calib`).
    pub experiment: String,
    /// Since when it waits.
    pub since: DateTime<Utc>,
    /// How long it expects to hold the lock once it has it (from its plan), when known.
    pub expected_s: Option<u64>,
}

impl Waiter {
    fn owner(&self) -> Owner {
        Owner {
            host: self.host.clone(),
            pid: self.pid,
            start: self.start,
            boot: self.boot.clone(),
            user: self.user.clone(),
        }
    }
}

/// `t` plus `s` seconds (at most a week).
pub(crate) fn after(t: DateTime<Utc>, s: u64) -> DateTime<Utc> {
    t + chrono::Duration::seconds(s.min(MAX_EXPECTED_S) as i64)
}

/// The queue directory of the lock file `lock`: `<lock>.waiting` beside it.
pub fn queue_dir(lock: &Path) -> PathBuf {
    let mut name = lock
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "perflab.lock".into());
    name.push(".waiting");
    lock.with_file_name(name)
}

/// This process in the queue; its file is removed when dropped.
#[derive(Debug)]
pub(crate) struct Registration {
    path: PathBuf,
    since: DateTime<Utc>,
    pid: u32,
}

impl Registration {
    /// How many live, running waiters of `lock` came before this one.
    pub(crate) fn ahead(&self, lock: &Path) -> usize {
        waiters(lock)
            .iter()
            .filter(|w| (w.since, w.pid) < (self.since, self.pid) && !stopped(w))
            .count()
    }
}

/// Whether a waiter of this host is stopped (`^Z`, SIGSTOP): it cannot take the lock, so it
/// does not hold the waiters behind it up.
fn stopped(w: &Waiter) -> bool {
    w.host == crate::owner::this_host()
        && crate::owner::proc_state(w.pid).is_some_and(|p| matches!(p.state, 'T' | 't'))
}

/// How many live, running waiters a process that has not queued yet would be behind.
pub(crate) fn waiting(lock: &Path) -> usize {
    waiters(lock).iter().filter(|w| !stopped(w)).count()
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Register this process as waiting for `lock` for `purpose`. `None` when the queue directory
/// cannot be used (not a directory, a link, not writable): the wait goes on, unlisted.
pub(crate) fn register(lock: &Path, purpose: &Purpose) -> Option<Registration> {
    let dir = usable_dir(lock, true)?;
    let me = Owner::me();
    let entry = Waiter {
        pid: me.pid,
        start: me.start,
        boot: me.boot.clone(),
        host: me.host.clone(),
        user: me.user.clone(),
        experiment: purpose.what.clone(),
        since: Utc::now(),
        expected_s: purpose.expected_s,
    };
    let path = dir.join(format!("{}.json", me.pid));
    let bytes = serde_json::to_vec(&entry).ok()?;
    crate::atomic::write_atomic(&path, &bytes).ok()?;
    Some(Registration {
        path,
        since: entry.since,
        pid: entry.pid,
    })
}

/// The queue directory of `lock` when it is a real directory (never a link). With `create`, it
/// is made when missing, shareable by every user of the host (0777 whatever the umask: each
/// queues there, and anyone may sweep a dead waiter's file).
fn usable_dir(lock: &Path, create: bool) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = queue_dir(lock);
    if create {
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
    }
    let m = std::fs::symlink_metadata(&dir).ok()?;
    m.is_dir().then_some(dir)
}

/// The live waiters of `lock`, oldest first. The files of waiters whose process is gone are
/// removed (best effort: another user's may be left, and are ignored all the same).
pub(crate) fn waiters(lock: &Path) -> Vec<Waiter> {
    let Some(dir) = usable_dir(lock, false) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten().take(MAX_ENTRIES) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        // `.name.tmp-*`: an entry being written
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let Some(w) = read_entry(&e.path()) else {
            continue;
        };
        if alive(&w.owner()) {
            out.push(w);
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    out.sort_by_key(|w| (w.since, w.pid));
    out
}

/// One queue file: a regular file (never through a link, never a FIFO), at most 4 KiB, JSON.
fn read_entry(path: &Path) -> Option<Waiter> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    f.take(MAX_ENTRY_BYTES).read_to_end(&mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

/// Whether `o` still runs, as far as this host can tell: another host's process counts as
/// alive (it cannot be judged from here); one without a start time (an older perflab's holder)
/// by its pid alone.
pub(crate) fn alive(o: &Owner) -> bool {
    if o.start == 0 && o.host == crate::owner::this_host() {
        return crate::owner::proc_state(o.pid).is_some();
    }
    !matches!(o.liveness(), Liveness::Dead(_))
}

/// The lock's holder and queue at a moment.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct QueueStatus {
    pub lock: PathBuf,
    /// The live holder (`None`: the lock is free, or its holder was killed).
    pub holder: Option<HolderInfo>,
    /// The live waiters, in arrival order, with their estimated start and end.
    pub waiters: Vec<Queued>,
}

/// A waiter and when it may start and end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Queued {
    #[serde(flatten)]
    pub waiter: Waiter,
    pub expected_start: Option<DateTime<Utc>>,
    pub expected_end: Option<DateTime<Utc>>,
}

/// The holder and waiters of `lock` now.
pub(crate) fn status(lock: &Path, now: DateTime<Utc>) -> QueueStatus {
    let holder = super::read_holder(lock).filter(|h| alive(&h.owner()));
    let mut waiting = waiters(lock);
    // the holder that has just taken the lock and not yet left the queue
    if let Some(h) = &holder {
        waiting.retain(|w| !(w.pid == h.pid && Some(&w.host) == h.hostname.as_ref()));
    }
    QueueStatus {
        lock: lock.to_path_buf(),
        waiters: schedule(holder.as_ref(), waiting, now),
        holder,
    }
}

/// When each waiter may start and end, in arrival order: the first when the holder expects to
/// end (now when that is past or the lock is free), each next one when the one before ends;
/// unknown from the first holder or waiter whose duration is unknown.
pub(crate) fn schedule(
    holder: Option<&HolderInfo>,
    waiters: Vec<Waiter>,
    now: DateTime<Utc>,
) -> Vec<Queued> {
    let mut cursor = match holder {
        None => Some(now),
        Some(h) => h.expected_end.map(|e| e.max(now)),
    };
    waiters
        .into_iter()
        .map(|waiter| {
            let expected_start = cursor;
            let expected_end = expected_start
                .zip(waiter.expected_s)
                .map(|(s, d)| after(s, d));
            cursor = expected_end;
            Queued {
                waiter,
                expected_start,
                expected_end,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter(pid: u32, since_s: i64, expected_s: Option<u64>) -> Waiter {
        Waiter {
            pid,
            start: 1,
            boot: String::new(),
            host: "h".into(),
            user: "u".into(),
            experiment: "e".into(),
            since: DateTime::from_timestamp(since_s, 0).unwrap(),
            expected_s,
        }
    }

    #[test]
    fn the_queue_starts_at_the_holders_end_and_stops_at_an_unknown() {
        let now = DateTime::from_timestamp(1000, 0).unwrap();
        let holder = HolderInfo {
            pid: 1,
            experiment: "exp1".into(),
            since: DateTime::from_timestamp(900, 0).unwrap(),
            hostname: Some("h".into()),
            user: "a".into(),
            start: 1,
            boot: String::new(),
            expected_end: Some(DateTime::from_timestamp(1100, 0).unwrap()),
        };
        let q = schedule(
            Some(&holder),
            vec![
                waiter(2, 950, Some(60)),
                waiter(3, 960, None),
                waiter(4, 970, Some(10)),
            ],
            now,
        );
        let ts = |q: &Queued| {
            (
                q.expected_start.map(|t| t.timestamp()),
                q.expected_end.map(|t| t.timestamp()),
            )
        };
        assert_eq!(ts(&q[0]), (Some(1100), Some(1160)));
        assert_eq!(ts(&q[1]), (Some(1160), None));
        assert_eq!(ts(&q[2]), (None, None));
        // a holder past its expected end: the first waiter starts now
        let late = HolderInfo {
            expected_end: Some(DateTime::from_timestamp(500, 0).unwrap()),
            ..holder
        };
        let q = schedule(Some(&late), vec![waiter(2, 950, Some(60))], now);
        assert_eq!(ts(&q[0]), (Some(1000), Some(1060)));
        // no holder: now
        let q = schedule(None, vec![waiter(2, 950, Some(60))], now);
        assert_eq!(ts(&q[0]), (Some(1000), Some(1060)));
    }

    #[test]
    fn the_queue_dir_sits_beside_the_lock() {
        assert_eq!(
            queue_dir(Path::new("/run/lock/perflab.lock")),
            Path::new("/run/lock/perflab.lock.waiting")
        );
    }
}
