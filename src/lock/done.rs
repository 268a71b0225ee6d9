//! The runs that held the lock and ended, for the trainer's room (`perflab status --live`):
//! each round of `perflab run` that ends writes one small file, `<lock>.done/<uid>-<ms>.json`,
//! in a sticky folder beside the lock (as the queue's), and removes its own files older than a
//! day. The room reads the day's files; a file is believed only when its owner is the uid its
//! name starts with (a user can write only files they own, so nobody writes in another's name),
//! and at most [`MAX_FILES`] of 4 KiB each are read whatever the folder holds.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// At most this many files are read (a workshop's day is a few hundred rounds).
pub(crate) const MAX_FILES: usize = 2000;
/// A writer removes its own files older than this.
const KEEP: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// One round that held the lock and ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// Who invoked it (`owner::invoking_user`).
    pub user: String,
    pub experiment: String,
    /// Its run id (the run directory's name), not its path (a home folder is nobody's business).
    pub run: String,
    /// `complete`, `aborted` or `failed`.
    pub state: String,
    /// The round's line: the knee and its cause, or why it stopped.
    pub verdict: String,
    pub ended: DateTime<Utc>,
}

fn done_dir(lock: &Path) -> PathBuf {
    super::files::beside(lock, "done")
}

/// Record `f` beside `lock` and sweep this user's files older than a day; best effort (a folder
/// that cannot be used leaves the room without the round, nothing else).
pub fn record(lock: &Path, f: &Finished) {
    let Some(dir) = super::files::shared_dir(&done_dir(lock), true) else {
        return;
    };
    let uid = unsafe { libc::geteuid() };
    let cut = (f.ended - KEEP).timestamp_millis();
    for (path, _, ms) in own_files(&dir, uid) {
        if ms < cut {
            let _ = std::fs::remove_file(path);
        }
    }
    let path = dir.join(format!("{uid}-{}.json", f.ended.timestamp_millis()));
    if let Ok(json) = serde_json::to_vec(f) {
        let _ = crate::atomic::write_atomic(&path, &json);
    }
}

/// `(path, uid, ms)` of the files named `<uid>-<ms>.json` in `dir` whose name's uid is `uid`.
fn own_files(dir: &Path, uid: u32) -> Vec<(PathBuf, u32, i64)> {
    named(dir).into_iter().filter(|x| x.1 == uid).collect()
}

/// `(path, uid, ms)` of the files of `dir` named `<uid>-<ms>.json`, at most [`MAX_FILES`].
fn named(dir: &Path) -> Vec<(PathBuf, u32, i64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(MAX_FILES)
        .filter_map(|e| {
            let name = e.file_name();
            let (uid, ms) = name.to_str()?.strip_suffix(".json")?.split_once('-')?;
            Some((e.path(), uid.parse().ok()?, ms.parse().ok()?))
        })
        .collect()
}

/// The rounds that ended on `now`'s UTC day, oldest first: only files owned by the uid their
/// name gives, readable and no larger than 4 KiB.
pub fn today(lock: &Path, now: DateTime<Utc>) -> Vec<Finished> {
    let Some(dir) = super::files::shared_dir(&done_dir(lock), false) else {
        return Vec::new();
    };
    let day = now.date_naive();
    let mut v: Vec<Finished> = named(&dir)
        .into_iter()
        .filter_map(|(path, uid, _)| {
            let (bytes, owner) = super::files::read_small(&path)?;
            (owner == uid).then_some(())?;
            serde_json::from_slice::<Finished>(&bytes).ok()
        })
        .filter(|f| f.ended.date_naive() == day)
        .collect();
    v.sort_by_key(|f| f.ended);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(ended: DateTime<Utc>, exp: &str) -> Finished {
        Finished {
            user: "ana".into(),
            experiment: exp.into(),
            run: "20261205T101500Z-r1".into(),
            state: "complete".into(),
            verdict: "last passing 90; knee 120 rps".into(),
            ended,
        }
    }

    #[test]
    fn the_days_rounds_are_read_back_and_planted_or_old_files_are_not() {
        let t = tempfile::tempdir().unwrap();
        let lock = t.path().join("perflab.lock");
        let now: DateTime<Utc> = "2026-12-05T18:00:00Z".parse().unwrap();
        let yesterday = now - chrono::TimeDelta::hours(20);
        record(&lock, &fin(yesterday, "exp0"));
        record(&lock, &fin(now - chrono::TimeDelta::hours(2), "exp1"));
        record(&lock, &fin(now, "2a"));
        let dir = done_dir(&lock);
        // a file in another uid's name (ours is the owner): planted, not read
        let other = unsafe { libc::geteuid() } + 1;
        let planted = serde_json::to_vec(&fin(now, "planted")).unwrap();
        std::fs::write(dir.join(format!("{other}-1.json")), planted).unwrap();
        // a link to elsewhere and an oversized file in our name: not read
        let me = unsafe { libc::geteuid() };
        std::os::unix::fs::symlink("/etc/passwd", dir.join(format!("{me}-2.json"))).unwrap();
        std::fs::write(dir.join(format!("{me}-3.json")), vec![b' '; 5000]).unwrap();
        let got: Vec<String> = today(&lock, now)
            .into_iter()
            .map(|f| f.experiment)
            .collect();
        assert_eq!(got, ["exp1", "2a"]);
        // a write 23 h later sweeps this user's files older than a day before it (yesterday's,
        // exp1's, the two odd ones) and leaves another uid's
        let later = now + chrono::TimeDelta::hours(23);
        record(&lock, &fin(later, "exp3"));
        let mut left: Vec<i64> = own_files(&dir, me).into_iter().map(|x| x.2).collect();
        left.sort();
        assert_eq!(left, [now.timestamp_millis(), later.timestamp_millis()]);
        assert_eq!(own_files(&dir, other).len(), 1);
    }
}
