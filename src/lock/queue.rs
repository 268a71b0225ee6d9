//! The queue behind the host lock. A process waiting for the lock registers itself (pid, user,
//! experiment, since when, the seconds it expects to hold the lock) as one small file in a
//! sticky directory next to the lock (`<lock>.waiting/`, mode 1777: nobody removes or replaces
//! another user's entry), written atomically, and removes it once it holds the lock or gives
//! up. A waiter whose process is gone (killed) is ignored and its file swept. An entry is
//! believed when it names a live process of this host run by the entry file's owner; one from
//! another host, or naming a process its file's owner does not run (planted), counts only for
//! [`UNSURE_FOR`] after the time it says it started waiting, then is stale: shown, never waited
//! for. Waiting is first come, first served among the processes that queue: a waiter does not
//! take the lock, even free, while an earlier live waiter is in the queue (a stopped one, ^Z,
//! does not hold the others up), unless that waiter leaves the free lock untaken for
//! [`GRACE`] (`Patience`: a real waiter takes it within 200 ms); a perflab that does not queue
//! (an older one) can still come first. [`status`] reads the holder (`holder`) and the waiters
//! and estimates when each will be done, in arrival order.
use super::holder::{HolderInfo, Holding, alive, holding};
use super::purpose::Purpose;
use crate::owner::Owner;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// At most this many entries are read (a workshop's queue is a few dozen).
const MAX_ENTRIES: usize = 1000;
/// How long an entry that cannot be checked (another host's, or naming a process its file's
/// owner does not run) counts, from the time it says it started waiting.
pub const UNSURE_FOR: chrono::TimeDelta = chrono::TimeDelta::minutes(10);
/// How long a free lock is left to the earlier waiters before a later one takes it.
pub(crate) const GRACE: std::time::Duration = std::time::Duration::from_secs(3);
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
    /// Its live page (`perflab run --live`; the URL without a token), when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
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
    super::files::beside(lock, "waiting")
}

/// This process in the queue; its file is removed when dropped.
#[derive(Debug)]
pub(crate) struct Registration {
    path: PathBuf,
    since: DateTime<Utc>,
    pid: u32,
}

impl Registration {
    /// The live, running waiters of `lock` that came before this one, oldest first.
    pub(crate) fn ahead(&self, lock: &Path) -> Vec<Waiter> {
        waiters(lock)
            .into_iter()
            .filter(|w| (w.since, w.pid) < (self.since, self.pid) && !stopped(w))
            .collect()
    }
}

/// Whether a waiter of this host is stopped (`^Z`, SIGSTOP): it cannot take the lock, so it
/// does not hold the waiters behind it up.
fn stopped(w: &Waiter) -> bool {
    w.host == crate::owner::this_host()
        && crate::owner::proc_state(w.pid).is_some_and(|p| matches!(p.state, 'T' | 't'))
}

/// The live, running waiters a process that has not queued yet would be behind.
pub(crate) fn waiting(lock: &Path) -> Vec<Waiter> {
    waiters(lock).into_iter().filter(|w| !stopped(w)).collect()
}

/// A waiter's patience with the waiters before it: the first of them that leaves the lock
/// free for [`GRACE`] is passed (for good: a process that does not take a free lock is not
/// waiting for it, whatever its entry says), then the next one gets its grace.
#[derive(Debug, Default)]
pub(crate) struct Patience {
    passed: Vec<WaiterKey>,
    /// Since when the lock is seen free with this first waiter ahead.
    free_since: Option<(std::time::Instant, WaiterKey)>,
}

/// A waiter: its pid, host and since when it waits.
type WaiterKey = (u32, String, DateTime<Utc>);

impl Patience {
    /// How many of `ahead` (oldest first) to wait for; `free` tells whether the lock is free
    /// (asked only when someone is ahead).
    pub(crate) fn count(&mut self, ahead: Vec<Waiter>, free: impl FnOnce() -> bool) -> usize {
        self.count_at(ahead, free, std::time::Instant::now())
    }

    fn count_at(
        &mut self,
        ahead: Vec<Waiter>,
        free: impl FnOnce() -> bool,
        now: std::time::Instant,
    ) -> usize {
        let key = |w: &Waiter| (w.pid, w.host.clone(), w.since);
        let ahead: Vec<Waiter> = ahead
            .into_iter()
            .filter(|w| !self.passed.contains(&key(w)))
            .collect();
        let Some(head) = ahead.first().map(key) else {
            self.free_since = None;
            return 0;
        };
        if !free() {
            self.free_since = None;
            return ahead.len();
        }
        match &self.free_since {
            Some((t, h)) if *h == head && now.duration_since(*t) >= GRACE => {
                self.passed.push(head);
                self.free_since = None;
                ahead.len() - 1
            }
            Some((_, h)) if *h == head => ahead.len(),
            _ => {
                self.free_since = Some((now, head));
                ahead.len()
            }
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Register this process as waiting for `lock` for `purpose`. `None` when the queue directory
/// cannot be used (not a directory, a link, not writable): the wait goes on, unlisted.
pub(crate) fn register(lock: &Path, purpose: &Purpose) -> Option<Registration> {
    let dir = super::files::shared_dir(&queue_dir(lock), true)?;
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
        live: purpose.live.clone(),
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

/// The live waiters of `lock`, oldest first (see [`entries`]).
pub(crate) fn waiters(lock: &Path) -> Vec<Waiter> {
    entries(lock, Utc::now()).0
}

/// An entry of the queue that is not waited for, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleWaiter {
    #[serde(flatten)]
    pub waiter: Waiter,
    pub why: String,
}

/// The entries of `lock`'s queue: the live waiters, oldest first, and the stale entries (the
/// module's rule). The files of waiters whose process is gone are removed (best effort:
/// another user's may be left, and are ignored all the same).
pub(crate) fn entries(lock: &Path, now: DateTime<Utc>) -> (Vec<Waiter>, Vec<StaleWaiter>) {
    let (mut live, mut stale) = (Vec::new(), Vec::new());
    let Some(dir) = super::files::shared_dir(&queue_dir(lock), false) else {
        return (live, stale);
    };
    let Ok(files) = std::fs::read_dir(&dir) else {
        return (live, stale);
    };
    for e in files.flatten().take(MAX_ENTRIES) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        // `.name.tmp-*`: an entry being written
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let Some((w, uid)) = super::files::read_small(&e.path())
            .and_then(|(b, uid)| Some((serde_json::from_slice::<Waiter>(&b).ok()?, uid)))
        else {
            continue;
        };
        match standing(&w, uid, now, crate::owner::proc_uids) {
            Standing::Live => live.push(w),
            Standing::Gone => {
                let _ = std::fs::remove_file(e.path());
            }
            Standing::Stale(why) => stale.push(StaleWaiter { waiter: w, why }),
        }
    }
    live.sort_by_key(|w| (w.since, w.pid));
    stale.sort_by_key(|w| (w.waiter.since, w.waiter.pid));
    (live, stale)
}

/// What an entry of the queue is worth.
#[derive(Debug, PartialEq)]
enum Standing {
    Live,
    /// Its process (of this host) is gone: the file is swept.
    Gone,
    Stale(String),
}

/// The module's rule for one entry, written by `uid` (`uids`: the user ids of a pid).
fn standing(w: &Waiter, uid: u32, now: DateTime<Utc>, uids: impl Fn(u32) -> Vec<u32>) -> Standing {
    let local = w.host == crate::owner::this_host();
    if local && !alive(&w.owner()) {
        return Standing::Gone;
    }
    if local && uids(w.pid).contains(&uid) {
        return Standing::Live;
    }
    let unsure = match local {
        true => "names a process its file's owner does not run",
        false => "another host's entry",
    };
    if w.since > now + chrono::TimeDelta::minutes(1) {
        Standing::Stale(format!("{unsure}, dated in the future"))
    } else if now - w.since > UNSURE_FOR {
        Standing::Stale(format!(
            "{unsure}, older than {} min",
            UNSURE_FOR.num_minutes()
        ))
    } else {
        Standing::Live
    }
}

/// The lock's holder and queue at a moment.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct QueueStatus {
    pub lock: PathBuf,
    /// Whether the lock is actually held (a flock test; `None`: the lock file cannot be
    /// opened), and by which pid when `/proc/locks` says.
    pub held: Option<bool>,
    pub held_by_pid: Option<u32>,
    /// The recorded holder, believed: its process holds the lock (`holder`'s rule). `None`:
    /// the lock is free, or its holder has no record (a tool, an older perflab) or was killed.
    pub holder: Option<HolderInfo>,
    /// Records that do not name the holder (a killed holder's, or planted): shown, not believed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale_holders: Vec<HolderInfo>,
    /// The live waiters, in arrival order, with their estimated start and end.
    pub waiters: Vec<Queued>,
    /// Entries of the queue nobody waits for (`entries`' rule), and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale_waiters: Vec<StaleWaiter>,
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
    let Holding {
        held,
        pid,
        holder,
        stale,
    } = holding(lock);
    let (mut waiting, stale_waiters) = entries(lock, now);
    // the holder that has just taken the lock and not yet left the queue
    if let Some(h) = &holder {
        waiting.retain(|w| !(w.pid == h.pid && Some(&w.host) == h.hostname.as_ref()));
    }
    QueueStatus {
        lock: lock.to_path_buf(),
        held,
        held_by_pid: pid,
        waiters: schedule(holder.as_ref(), held == Some(true), waiting, now),
        holder,
        stale_holders: stale,
        stale_waiters,
    }
}

/// When each waiter may start and end, in arrival order: the first when the holder expects to
/// end (now when that is past or the lock is free), each next one when the one before ends;
/// unknown from the first holder or waiter whose duration is unknown (a lock `held` without a
/// believed record is such a holder).
pub(crate) fn schedule(
    holder: Option<&HolderInfo>,
    held: bool,
    waiters: Vec<Waiter>,
    now: DateTime<Utc>,
) -> Vec<Queued> {
    let mut cursor = match holder {
        None if held => None,
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
            live: None,
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
            live: None,
        };
        let q = schedule(
            Some(&holder),
            true,
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
        let q = schedule(Some(&late), true, vec![waiter(2, 950, Some(60))], now);
        assert_eq!(ts(&q[0]), (Some(1000), Some(1060)));
        // no holder: now
        let q = schedule(None, false, vec![waiter(2, 950, Some(60))], now);
        assert_eq!(ts(&q[0]), (Some(1000), Some(1060)));
        // held without a believed record: unknown
        let q = schedule(None, true, vec![waiter(2, 950, Some(60))], now);
        assert_eq!(ts(&q[0]), (None, None));
    }

    #[test]
    fn a_free_lock_left_untaken_by_the_first_waiter_is_taken_after_the_grace() {
        let t0 = std::time::Instant::now();
        let mut p = Patience::default();
        let (a, b) = (waiter(2, 950, None), waiter(3, 960, None));
        // held: wait for both
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || false, t0), 2);
        // free: the first waiter has its grace
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || true, t0), 2);
        let later = t0 + GRACE / 2;
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || true, later), 2);
        // held again in between: the grace starts over
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || false, later), 2);
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || true, later), 2);
        let past = later + GRACE;
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || true, past), 1);
        // the next one gets its own grace; the first stays passed
        assert_eq!(p.count_at(vec![a.clone(), b.clone()], || true, past), 1);
        assert_eq!(
            p.count_at(vec![a.clone(), b.clone()], || true, past + GRACE),
            0
        );
        assert_eq!(
            p.count_at(vec![a, b], || panic!("not asked"), past + GRACE),
            0
        );
    }

    #[test]
    fn entries_that_cannot_be_checked_count_for_a_bounded_time() {
        let now = Utc::now();
        let me = crate::owner::Owner::me();
        let mine = |since: DateTime<Utc>| Waiter {
            pid: me.pid,
            start: me.start,
            boot: me.boot.clone(),
            host: me.host.clone(),
            since,
            ..waiter(0, 0, None)
        };
        let uid = 1000;
        let runs_as = |u: u32| move |_| vec![u];
        // a live process of the entry file's owner: believed, however old
        let old = now - chrono::TimeDelta::days(3);
        assert_eq!(standing(&mine(old), uid, now, runs_as(uid)), Standing::Live);
        // naming a process its owner does not run: counts for a while, then stale
        assert_eq!(standing(&mine(now), uid, now, runs_as(0)), Standing::Live);
        assert!(
            matches!(standing(&mine(old), uid, now, runs_as(0)), Standing::Stale(w) if w.contains("does not run"))
        );
        // another host's: the same; "since 1970" is stale at once, so is one in the future
        let elsewhere = |since| Waiter {
            host: "elsewhere".into(),
            ..mine(since)
        };
        assert_eq!(
            standing(&elsewhere(now), uid, now, runs_as(uid)),
            Standing::Live
        );
        let epoch = DateTime::from_timestamp(0, 0).unwrap();
        assert!(
            matches!(standing(&elsewhere(epoch), uid, now, runs_as(uid)), Standing::Stale(w) if w.contains("another host"))
        );
        let future = now + chrono::TimeDelta::hours(1);
        assert!(
            matches!(standing(&elsewhere(future), uid, now, runs_as(uid)), Standing::Stale(w) if w.contains("future"))
        );
        // a local process that is gone: swept
        let gone = Waiter {
            start: me.start + 1,
            ..mine(now)
        };
        assert_eq!(standing(&gone, uid, now, runs_as(uid)), Standing::Gone);
    }

    #[test]
    fn the_queue_dir_sits_beside_the_lock() {
        assert_eq!(
            queue_dir(Path::new("/run/lock/perflab.lock")),
            Path::new("/run/lock/perflab.lock.waiting")
        );
    }
}
