//! What GNU parallel leaves in a plan's work folder, read back (bounded): its `--joblog`
//! (one tab-separated line per finished job: seq, sshlogin, start, run time, exit value,
//! signal), its `--results` folders (`results/<seq>/stdout` and `stderr`, written as the job
//! runs; each job prints `perflab-matrix: <cell> on <host>` first). Job N is the plan's cell N
//! (`hosts::write_jobs`).
use crate::rundir::read::{FileKind, RunFile, lines};
use std::collections::BTreeMap;
use std::path::Path;

/// One finished job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finished {
    pub seq: usize,
    /// The sshlogin parallel ran it on.
    pub host: String,
    pub start_unix: f64,
    pub runtime_s: f64,
    pub exit: i64,
    pub signal: i64,
}

/// The text of one of these files through the bounded reader (a regular file only, a FIFO
/// never waited on; the head of a job log or a job's stdout, the tail of its stderr, at most
/// 8 MiB; long lines cut). `None` when it cannot be read.
fn read_bounded(path: &Path, kind: FileKind) -> Option<String> {
    let mut text = String::new();
    lines(&RunFile::loose(path, kind), |l| {
        text.push_str(l);
        text.push('\n');
    })
    .ok()?;
    Some(text)
}

/// The joblog's finished jobs by seq (a retried job: its last line).
pub(crate) fn finished(joblog: &Path) -> BTreeMap<usize, Finished> {
    let mut out = BTreeMap::new();
    for line in read_bounded(joblog, FileKind::JobLog)
        .unwrap_or_default()
        .lines()
        .skip(1)
    {
        let f: Vec<&str> = line.splitn(9, '\t').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.trim().parse::<f64>().ok());
        let (Some(seq), Some(start), Some(rt), Some(exit), Some(sig)) =
            (num(0), num(2), num(3), num(6), num(7))
        else {
            continue;
        };
        out.insert(
            seq as usize,
            Finished {
                seq: seq as usize,
                host: f.get(1).unwrap_or(&"").chars().take(200).collect(),
                start_unix: start,
                runtime_s: rt,
                exit: exit as i64,
                signal: sig as i64,
            },
        );
    }
    out
}

/// The host a started job printed (`perflab-matrix: <cell> on <host>`), if it got that far.
pub(crate) fn started_on(results: &Path, seq: usize) -> Option<String> {
    let out = read_bounded(
        &results.join(seq.to_string()).join("stdout"),
        FileKind::JobLog,
    )?;
    out.lines().find_map(|l| {
        let rest = l.strip_prefix("perflab-matrix: ")?;
        Some(
            rest.split_once(" on ")?
                .1
                .trim()
                .chars()
                .take(200)
                .collect(),
        )
    })
}

/// Whether parallel started job `seq` (its results folder exists).
pub(crate) fn started(results: &Path, seq: usize) -> bool {
    results.join(seq.to_string()).is_dir()
}

/// Why a job failed, from its stderr: the last line where ssh or perflab says so (`ssh:
/// connect to host ...`, `error: ...`; the copy back that failed after it says less), else
/// the last non-empty line.
pub(crate) fn reason(results: &Path, seq: usize) -> Option<String> {
    let err = read_bounded(
        &results.join(seq.to_string()).join("stderr"),
        FileKind::JobErr,
    )?;
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let said = lines.iter().rev().find(|l| {
        l.starts_with("ssh: ") || l.starts_with("error: ") || l.contains("Permission denied")
    });
    said.or(lines.last())
        .map(|l| l.chars().filter(|c| !c.is_control()).take(300).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_joblog_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("joblog");
        std::fs::write(
            &log,
            "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n\
             1\tssh -p 2 root@a\t1796155849.210\t 41.5\t0\t2\t0\t0\tperflab run x\n\
             2\tb\t1796155850.0\t0.3\t0\t0\t255\t0\tperflab run y\n\
             garbage\n2\tc\t1796155890.0\t40\t0\t0\t0\t0\tperflab run y\n",
        )
        .unwrap();
        let f = finished(&log);
        assert_eq!(f.len(), 2);
        assert_eq!(f[&1].host, "ssh -p 2 root@a");
        assert_eq!(
            (f[&2].host.as_str(), f[&2].exit),
            ("c", 0),
            "a retry's last line"
        );
        let res = d.path().join("results");
        std::fs::create_dir_all(res.join("3")).unwrap();
        std::fs::write(
            res.join("3/stdout"),
            "perflab-matrix: e/n on box1\nrun e -> x\n",
        )
        .unwrap();
        std::fs::write(
            res.join("3/stderr"),
            "a\nssh: connect to host 127.0.0.9 port 1: Connection refused\nrsync error: unexplained error (code 255)\n\n",
        )
        .unwrap();
        assert_eq!(started_on(&res, 3).as_deref(), Some("box1"));
        assert!(reason(&res, 3).unwrap().contains("Connection refused"));
        assert!(started(&res, 3) && !started(&res, 4));
    }
}
