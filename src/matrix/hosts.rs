//! `perflab matrix run --hosts FILE`: the cells through GNU parallel over ssh. FILE lists one
//! ssh login a line (parallel's `--sshloginfile` form: `user@host`, `ssh -p 2222 user@host`);
//! each host runs one cell at a time (`-j1`), a failed job is retried once on another host
//! (`--retries`), every job is logged (`--joblog`; `--resume-failed` on the next run of the
//! same plan), its output kept (`--results`), and its run directory copied back (`--return`,
//! rsync). The host keeps its copy (parallel's `--cleanup` removes files, not a cell's
//! folder): a cell run again there finds itself complete and is copied back without running
//! again. On each host a cell runs as
//! `PERFLAB_OUT=<remote dir>/cells/<exp>/<name>/out perflab run ...` from the login's home,
//! so the host builds its images on first use as any run does; `collect` moves the returned
//! cells into out/.
use super::{Plan, collect, shell_quote};
use crate::error::invalid;
use crate::rundir::cell::cell_state;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most hosts a hosts file lists.
pub(crate) const MAX_HOSTS: usize = 1000;
/// Longest login line.
pub(crate) const MAX_LOGIN: usize = 512;

/// The ssh logins of a hosts file (bad input: file and line named). Blank lines and `#`
/// comments are skipped; a leading `N/` (parallel's jobs per host) is dropped: one cell per
/// host is the rule.
pub(crate) fn read_hosts(path: &Path) -> anyhow::Result<Vec<String>> {
    let bad = |m: String| invalid(format!("{}: {m}", path.display()));
    let f = std::fs::File::open(path).map_err(|e| {
        bad(format!(
            "cannot read it ({e}); give a file with one ssh login a line"
        ))
    })?;
    let mut buf = Vec::new();
    f.take((MAX_HOSTS * (MAX_LOGIN + 1)) as u64 + 1)
        .read_to_end(&mut buf)?;
    if buf.len() > MAX_HOSTS * (MAX_LOGIN + 1) {
        return Err(bad(format!("too large; list at most {MAX_HOSTS} hosts")));
    }
    let text = String::from_utf8(buf).map_err(|_| bad("not UTF-8 text".into()))?;
    let mut hosts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let l = match l.split_once('/') {
            Some((n, rest)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                rest.trim()
            }
            _ => l,
        };
        if l.len() > MAX_LOGIN || l.chars().any(char::is_control) || l.is_empty() {
            return Err(bad(format!(
                "line {}: not an ssh login (at most {MAX_LOGIN} printable characters, e.g. `user@host` or `ssh -p 2222 user@host`)",
                i + 1
            )));
        }
        if hosts.iter().any(|h| h == l) {
            return Err(bad(format!(
                "line {}: `{l}` is listed twice; list each login once",
                i + 1
            )));
        }
        hosts.push(l.to_string());
    }
    if hosts.is_empty() {
        return Err(bad("no host in it; list one ssh login a line".into()));
    }
    if hosts.len() > MAX_HOSTS {
        return Err(bad(format!(
            "{} hosts; list at most {MAX_HOSTS}",
            hosts.len()
        )));
    }
    Ok(hosts)
}

/// `--remote-dir`: a plain relative path under the login's home (the returned copies land at
/// the same relative path under the incoming folder).
pub(crate) fn check_remote_dir(d: &str) -> anyhow::Result<()> {
    let ok = !d.is_empty()
        && d.len() <= 200
        && !d.starts_with('/')
        && d.split('/').all(|p| !p.is_empty() && p != "." && p != "..")
        && d.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "--remote-dir {}: give a relative path of plain names under the hosts' home directory (e.g. perflab-matrix)",
            d.escape_debug()
        )))
    }
}

/// What a run through parallel needs.
pub(crate) struct HostsRun<'a> {
    pub plan: &'a Plan,
    pub work: &'a Path,
    pub out: &'a Path,
    pub hosts: &'a [String],
    /// The perflab program on the hosts.
    pub program: &'a str,
    pub remote_dir: &'a str,
}

/// One job line: the path to return, a tab, the command (words quoted).
fn job_line(h: &HostsRun, c: &super::Cell) -> String {
    let dir = collect::remote_cell_dir(h.remote_dir, &c.id());
    format!(
        "{dir}\tprintf 'perflab-matrix: %s on %s\\n' {id} \"$(hostname)\"; PERFLAB_OUT={out} {cmd}",
        id = shell_quote(&c.id()),
        out = shell_quote(&format!("{dir}/out")),
        cmd = c.shell_command(h.program),
    )
}

/// Write the job list and the cell of each job (`jobs`, `jobs.cells`) unless this plan's
/// work folder has them already: their order is the job log's seq, which `--resume-failed`
/// relies on. Cells complete under out/ are left out of a new list.
pub(crate) fn write_jobs(h: &HostsRun) -> anyhow::Result<PathBuf> {
    let jobs = h.work.join("jobs");
    if jobs.is_file() {
        return Ok(jobs);
    }
    let (mut lines, mut ids) = (String::new(), String::new());
    for c in &h.plan.cells {
        if cell_state(h.out, &c.experiment, &c.name.to_string()).is_complete() {
            continue;
        }
        lines.push_str(&job_line(h, c));
        lines.push('\n');
        ids.push_str(&c.id());
        ids.push('\n');
    }
    crate::atomic::write_atomic(&h.work.join("jobs.cells"), ids.as_bytes())?;
    crate::atomic::write_atomic(&jobs, lines.as_bytes())?;
    Ok(jobs)
}

/// parallel's arguments (after `parallel`).
pub(crate) fn parallel_args(h: &HostsRun) -> Vec<String> {
    let w = |n: &str| h.work.join(n).display().to_string();
    let retries = h.hosts.len().clamp(1, 2);
    vec![
        "--will-cite".into(),
        "--sshloginfile".into(),
        w("sshlogins"),
        "-j1".into(),
        "--joblog".into(),
        w("joblog"),
        "--resume-failed".into(),
        "--results".into(),
        format!("{}/{{#}}/", w("results")),
        "--colsep".into(),
        "\t".into(),
        "--return".into(),
        "{1}".into(),
        "--retries".into(),
        retries.to_string(),
        "eval".into(),
        "{2}".into(),
    ]
}

/// Run the plan's cells through parallel and collect what came back. Returns parallel's
/// exit code (0: every job succeeded; 1-100: that many failed; 255 and up: other errors).
pub(crate) fn run(h: &HostsRun) -> anyhow::Result<i32> {
    let logins: String = h.hosts.iter().map(|l| format!("1/{l}\n")).collect();
    crate::atomic::write_atomic(&h.work.join("sshlogins"), logins.as_bytes())?;
    let jobs = write_jobs(h)?;
    let inc = collect::incoming(h.out, h.plan);
    std::fs::create_dir_all(&inc)?;
    let status = std::process::Command::new("parallel")
        .args(parallel_args(h))
        .current_dir(&inc)
        .stdin(std::fs::File::open(&jobs)?)
        .status()
        .map_err(|e| {
            anyhow::anyhow!(
                "starting GNU parallel ({e}): install it (Debian: apt-get install parallel)"
            )
        })?;
    Ok(status.code().unwrap_or(255))
}
