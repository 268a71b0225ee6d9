//! How long this host took for the slow parts of a first run, as recorded after each was done:
//! the release build of perflab (`binary`, written by `scripts/perflab`), the install of the
//! prerequisites (`prereqs`, by `scripts/prereqs.sh`) and each suite's image build
//! (`images:<suite>`, with how many images it built). One tab-separated line per record
//! (`<UTC time>\t<key>\t<seconds>[\t<note>]`) in `out/build-logs/timings.tsv`; the newest
//! record of a key wins. `perflab run` reads them to say up front how long it will take.
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file, under the repository root.
pub(crate) const FILE: &str = "out/build-logs/timings.tsv";
/// Only the last 64 KiB of the file are read (a record is a line; scripts append).
const MAX_BYTES: u64 = 64 * 1024;

/// One recorded duration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timing {
    pub at: DateTime<Utc>,
    pub seconds: f64,
    /// What was measured, in words (`6 of 6 images`).
    pub note: String,
}

/// The timings file of the repository at `root`.
pub(crate) fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// The newest record of each key in `text` (malformed lines are skipped).
pub(crate) fn parse(text: &str) -> BTreeMap<String, Timing> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (Some(at), Some(key), Some(secs)) = (f.first(), f.get(1), f.get(2)) else {
            continue;
        };
        let (Ok(at), Ok(seconds)) = (at.parse::<DateTime<Utc>>(), secs.parse::<f64>()) else {
            continue;
        };
        if !(seconds.is_finite() && seconds >= 0.0) || key.is_empty() {
            continue;
        }
        let t = Timing {
            at,
            seconds,
            note: f.get(3).unwrap_or(&"").to_string(),
        };
        if out.get(*key).is_none_or(|o: &Timing| o.at <= t.at) {
            out.insert(key.to_string(), t);
        }
    }
    out
}

/// The records of the file at `file` (none when it is missing or unreadable).
pub(crate) fn read(file: &Path) -> BTreeMap<String, Timing> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(file) else {
        return BTreeMap::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_BYTES {
        let _ = f.seek(SeekFrom::Start(len - MAX_BYTES));
    }
    let mut buf = Vec::new();
    let _ = f.take(MAX_BYTES).read_to_end(&mut buf);
    parse(&String::from_utf8_lossy(&buf))
}

/// Record `seconds` for `key` now: the file is rewritten atomically with the newest record of
/// each key (so it stays one line per key). Best effort: a timing that cannot be written only
/// makes the next estimate a default.
pub(crate) fn record(file: &Path, key: &str, seconds: f64, note: &str) {
    let mut all = read(file);
    all.insert(
        key.to_string(),
        Timing {
            at: Utc::now(),
            seconds,
            note: note.replace(['\t', '\n'], " "),
        },
    );
    let mut text = String::new();
    for (k, t) in &all {
        text.push_str(&format!(
            "{}\t{k}\t{:.1}\t{}\n",
            t.at.format("%Y-%m-%dT%H:%M:%SZ"),
            t.seconds,
            t.note
        ));
    }
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = crate::atomic::write_atomic(file, text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_record_of_a_key_wins_and_bad_lines_are_skipped() {
        let t = parse(
            "2026-12-01T10:00:00Z\tbinary\t200\n\
             2026-12-01T09:00:00Z\tbinary\t900\n\
             garbage\n\
             2026-12-01T10:00:00Z\timages:trixie\tNaN\n\
             2026-12-01T11:00:00Z\timages:trixie\t558.2\t6 of 6 images\n",
        );
        assert_eq!(t["binary"].seconds, 200.0);
        assert_eq!(t["images:trixie"].seconds, 558.2);
        assert_eq!(t["images:trixie"].note, "6 of 6 images");
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn record_keeps_one_line_per_key() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x/timings.tsv");
        record(&f, "binary", 12.0, "");
        record(&f, "images:trixie", 30.0, "2 of 6 images");
        record(&f, "binary", 10.0, "");
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(read(&f)["binary"].seconds, 10.0);
    }
}
