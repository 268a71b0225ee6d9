//! Who holds the host lock, as recorded, and whether the lock is actually held. The flock is
//! taken on the lock file, which every user opens read-only (flock needs no write access), so
//! the file is never world-writable; the holder's record is a file of its own,
//! `<lock>.holder/<uid>.json`, in a sticky directory (mode 1777, as /tmp): each user writes only
//! their own file and nobody can replace another's. A record is believed only when the lock is
//! held (a flock test) by the process it names: its pid is the one `/proc/locks` shows holding
//! the lock file, or (when `/proc/locks` cannot tell) a live process of the record file's owner.
use crate::owner::{Liveness, Owner};
use chrono::{DateTime, Utc};
use fs2::FileExt;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// At most this many records are read (one per user that ever held the lock).
const MAX_RECORDS: usize = 1000;

/// Who holds the lock, as its record says.
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
    /// Its live page (`perflab run --live`; the URL without a token), when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
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

/// The folder of the holders' records: `<lock>.holder` beside the lock.
pub fn holder_dir(lock: &Path) -> PathBuf {
    super::files::beside(lock, "holder")
}

/// This process's record, removed when dropped (while the lock is still held).
#[derive(Debug)]
pub(crate) struct Record {
    path: PathBuf,
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Record `info` as the holder of `lock` in this user's file (`None` when the folder cannot be
/// used: waiters then say "holder unknown").
pub(crate) fn write(lock: &Path, info: &HolderInfo) -> Option<Record> {
    let dir = super::files::shared_dir(&holder_dir(lock), true)?;
    let path = dir.join(format!("{}.json", unsafe { libc::geteuid() }));
    let json = serde_json::to_vec(info).ok()?;
    crate::atomic::write_atomic(&path, &json).ok()?;
    Some(Record { path })
}

/// Whether the flock on `file` is held by another open file: a shared lock taken and released
/// at once (a waiter polling the lock may miss one 200 ms turn).
pub(crate) fn flock_held(file: &File) -> bool {
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = FileExt::unlock(file);
            false
        }
        Err(_) => true,
    }
}

/// The pid `/proc/locks` shows holding the flock on `file` (`None`: not found, or this host's
/// kernel does not say).
pub(crate) fn flock_pid(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().ok()?;
    let dev = m.dev();
    let key = format!(
        "{:02x}:{:02x}:{}",
        libc::major(dev),
        libc::minor(dev),
        m.ino()
    );
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    pid_in_locks(&locks, &key)
}

/// The pid of the granted FLOCK on the inode `key` (`maj:min:ino`) in a `/proc/locks` text.
fn pid_in_locks(locks: &str, key: &str) -> Option<u32> {
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // `1: FLOCK  ADVISORY  WRITE 4121 08:02:131087 0 EOF`; a waiter's line has `->`
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&key))
            .then(|| f.get(4)?.parse().ok())
            .flatten()
            .filter(|p| *p != 0)
    })
}

/// The records beside `lock`, each with its file's owner (uid).
fn records(lock: &Path) -> Vec<(HolderInfo, u32)> {
    let Some(dir) = super::files::shared_dir(&holder_dir(lock), false) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(MAX_RECORDS)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| !n.starts_with('.') && n.ends_with(".json"))
        })
        .filter_map(|e| super::files::read_small(&e.path()))
        .filter_map(|(bytes, uid)| Some((serde_json::from_slice(&bytes).ok()?, uid)))
        .collect()
}

/// The lock as this host sees it now: held or not (a flock test), by which pid, and the
/// records that name its holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Holding {
    /// Whether the lock is held now (a flock test); `None` when the lock file cannot be opened.
    pub held: Option<bool>,
    /// The pid holding it, when `/proc/locks` says.
    pub pid: Option<u32>,
    /// The record of the process that holds the lock (see the module's rule).
    pub holder: Option<HolderInfo>,
    /// Records that do not name the holder: left by a killed holder, or planted.
    pub stale: Vec<HolderInfo>,
}

/// The lock at `lock` now (never waits, never creates anything).
pub fn holding(lock: &Path) -> Holding {
    let Ok(file) = super::files::open_read(lock) else {
        // no lock file: nobody holds it
        let held = (!lock.exists()).then_some(false);
        return Holding {
            held,
            stale: records(lock).into_iter().map(|r| r.0).collect(),
            ..Holding::default()
        };
    };
    let held = flock_held(&file);
    let pid = held.then(|| flock_pid(&file)).flatten();
    judge(held, pid, records(lock), crate::owner::proc_uids)
}

/// Which record names the holder: the lock is held, its process runs on this host, and it is
/// the pid holding the flock (or, without that pid, a process of the record file's owner);
/// more than one such record and no pid: none is believed.
fn judge(
    held: bool,
    pid: Option<u32>,
    records: Vec<(HolderInfo, u32)>,
    uids: impl Fn(u32) -> Vec<u32>,
) -> Holding {
    let fits = |(r, uid): &(HolderInfo, u32)| {
        held && alive(&r.owner())
            && r.hostname.as_deref() == Some(crate::owner::this_host().as_str())
            && match pid {
                Some(p) => p == r.pid,
                None => uids(r.pid).contains(uid),
            }
    };
    let n = records.iter().filter(|r| fits(r)).count();
    let (mut holder, mut stale) = (None, Vec::new());
    for r in records {
        if n == 1 && fits(&r) {
            holder = Some(r.0);
        } else {
            stale.push(r.0);
        }
    }
    Holding {
        held: Some(held),
        pid,
        holder,
        stale,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flock_pid_is_read_from_proc_locks() {
        let locks = "1: FLOCK  ADVISORY  WRITE 4121 08:02:131087 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 4388 08:02:131087 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 77 08:02:99 0 EOF\n";
        assert_eq!(pid_in_locks(locks, "08:02:131087"), Some(4121));
        assert_eq!(pid_in_locks(locks, "08:02:99"), None);
        assert_eq!(pid_in_locks(locks, "08:02:5"), None);
    }

    #[test]
    fn a_record_is_believed_only_when_it_names_the_lock_holder() {
        let me = crate::owner::Owner::me();
        let rec = |pid: u32, start: u64| HolderInfo {
            pid,
            experiment: "exp1".into(),
            since: Utc::now(),
            hostname: Some(me.host.clone()),
            user: "alice".into(),
            start,
            boot: me.boot.clone(),
            expected_end: None,
            live: None,
        };
        let mine = (rec(me.pid, me.start), 1000);
        // free lock: the record is stale, whoever wrote it
        let h = judge(false, None, vec![mine.clone()], |_| vec![1000]);
        assert_eq!((h.holder, h.stale.len()), (None, 1));
        // held by the pid it names
        let h = judge(true, Some(me.pid), vec![mine.clone()], |_| vec![]);
        assert_eq!(h.holder.map(|h| h.pid), Some(me.pid));
        // held by another pid: a planted or old record
        let h = judge(true, Some(me.pid + 1), vec![mine.clone()], |_| vec![1000]);
        assert_eq!(h.holder, None);
        // no pid known: the record file's owner must run the process it names
        let h = judge(true, None, vec![mine.clone()], |_| vec![1000]);
        assert!(h.holder.is_some());
        let h = judge(true, None, vec![(mine.0.clone(), 65534)], |_| vec![1000]);
        assert_eq!(h.holder, None);
        // a dead process's record is stale
        let h = judge(true, None, vec![(rec(me.pid, me.start + 1), 1000)], |_| {
            vec![1000]
        });
        assert_eq!(h.holder, None);
        // two believable records and no pid: neither is believed
        let h = judge(true, None, vec![mine.clone(), mine], |_| vec![1000]);
        assert_eq!((h.holder, h.stale.len()), (None, 2));
    }
}
