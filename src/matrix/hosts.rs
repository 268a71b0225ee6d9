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
use std::path::Path;

/// Most hosts a hosts file lists.
pub const MAX_HOSTS: usize = 1000;
/// Longest login line.
pub const MAX_LOGIN: usize = 512;

/// The ssh logins of a hosts file (bad input: file and line named): a regular file only (a
/// FIFO or a device is refused without blocking), bounded in bytes and lines. Each line is
/// one of GNU parallel's `--sshlogin` values, handed to it as written: `user@host`, `ssh -p
/// 2222 user@host` (the words before the host are the ssh command, options included), or `:`
/// (this machine, no ssh). Blank lines and lines starting with `#` are skipped; a `#` inside a
/// line is refused (parallel would keep it in the login, not read a comment), and so is a
/// line starting with `-` (an option where the login goes). A leading `N/` (parallel's jobs
/// per host) is dropped: one cell per host is the rule.
pub(crate) fn read_hosts(path: &Path) -> anyhow::Result<Vec<String>> {
    use crate::rundir::read::{FileKind, ReadError, RunFile, whole};
    let bad = |m: String| invalid(format!("{}: {m}", path.display()));
    let buf = whole(&RunFile::loose(path, FileKind::Hosts)).map_err(|e| match e {
        ReadError::TooLarge { .. } => bad(format!("too large; list at most {MAX_HOSTS} hosts")),
        e => bad(format!(
            "cannot read it ({}); give a file with one ssh login a line",
            e.why()
        )),
    })?;
    let text = String::from_utf8(buf).map_err(|_| bad("not UTF-8 text".into()))?;
    parse_hosts(&text).map_err(bad)
}

/// The logins of a hosts file's text (see [`read_hosts`]); an error says the line and the fix.
pub fn parse_hosts(text: &str) -> Result<Vec<String>, String> {
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
        login(l).map_err(|m| format!("line {}: {m}", i + 1))?;
        if hosts.iter().any(|h| h == l) {
            return Err(format!(
                "line {}: `{l}` is listed twice; list each login once",
                i + 1
            ));
        }
        if hosts.len() == MAX_HOSTS {
            return Err(format!(
                "line {}: more than {MAX_HOSTS} hosts; list at most {MAX_HOSTS}",
                i + 1
            ));
        }
        hosts.push(l.to_string());
    }
    if hosts.is_empty() {
        return Err("no host in it; list one ssh login a line".into());
    }
    Ok(hosts)
}

/// One login line (after its `N/`): what is wrong with it and the fix.
fn login(l: &str) -> Result<(), String> {
    if l.len() > MAX_LOGIN || l.chars().any(char::is_control) || l.is_empty() {
        return Err(format!(
            "not an ssh login (at most {MAX_LOGIN} printable characters, e.g. `user@host` or `ssh -p 2222 user@host`)"
        ));
    }
    if l.starts_with('-') {
        return Err(format!(
            "`{l}` starts with `-`, an option where the login goes; write the ssh command \
             first (`ssh -p 2222 user@host`) or the login alone (`user@host`)"
        ));
    }
    if l.contains('#') {
        return Err(format!(
            "`{l}` holds `#`: GNU parallel keeps it in the login, it is no comment there; \
             put the comment on a line of its own"
        ));
    }
    Ok(())
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

/// One job line: the path to return, a tab, the command (words quoted). A cell complete under
/// out/ keeps its place (its seq) with a job that runs nothing: it makes the folder to return,
/// empty.
fn job_line(h: &HostsRun, c: &super::Cell) -> String {
    let dir = collect::remote_cell_dir(h.remote_dir, &c.id());
    if cell_state(h.out, &c.experiment, &c.name.to_string()).is_complete() {
        return format!(
            "{dir}\tprintf 'perflab-matrix: %s complete under out/, not run\\n' {id}; mkdir -p {qdir}",
            id = shell_quote(&c.id()),
            qdir = shell_quote(&dir),
        );
    }
    format!(
        "{dir}\tprintf 'perflab-matrix: %s on %s\\n' {id} \"$(hostname)\"; PERFLAB_OUT={out} {cmd}",
        id = shell_quote(&c.id()),
        out = shell_quote(&format!("{dir}/out")),
        cmd = c.shell_command(h.program),
    )
}

/// Write the job list (`jobs`), rebuilt from the parsed plan on every run and never read back
/// (parallel evaluates its command column: a line added to an old list must not run). Job N is
/// the plan's cell N, whatever is complete, so the job log's seq stays the cell's across runs
/// (`--resume-failed` relies on it, and so do [`super::status`] and [`collect`]).
/// Returns the list as written: parallel is handed these bytes, not the file.
pub(crate) fn write_jobs(h: &HostsRun) -> anyhow::Result<String> {
    let lines: String = h.plan.cells.iter().map(|c| job_line(h, c) + "\n").collect();
    crate::atomic::write_atomic(&h.work.join("jobs"), lines.as_bytes())?;
    Ok(lines)
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
    // an older perflab numbered its jobs by a list of its own (`jobs.cells`): its job log's
    // seqs are not this plan's cells
    if std::fs::symlink_metadata(h.work.join("jobs.cells")).is_ok() {
        return Err(invalid(format!(
            "{}: the job log of an older perflab, numbered by its own job list; plan again \
             (`perflab matrix plan ...`), or remove that folder to run this plan afresh",
            h.work.display()
        )));
    }
    let logins: String = h.hosts.iter().map(|l| format!("1/{l}\n")).collect();
    crate::atomic::write_atomic(&h.work.join("sshlogins"), logins.as_bytes())?;
    let jobs = write_jobs(h)?;
    let inc = collect::incoming(h.out, h.plan);
    std::fs::create_dir_all(&inc)?;
    let mut child = std::process::Command::new("parallel")
        .args(parallel_args(h))
        .current_dir(&inc)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            anyhow::anyhow!(
                "starting GNU parallel ({e}): install it (Debian: apt-get install parallel)"
            )
        })?;
    // the list from memory, on its own thread (parallel reads it as it goes); dropping the
    // pipe ends its input
    let stdin = child.stdin.take();
    let feed = std::thread::spawn(move || {
        if let Some(mut w) = stdin {
            let _ = std::io::Write::write_all(&mut w, jobs.as_bytes());
        }
    });
    let status = child.wait()?;
    let _ = feed.join();
    Ok(status.code().unwrap_or(255))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> anyhow::Result<Vec<String>> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("hosts");
        std::fs::write(&p, text).unwrap();
        read_hosts(&p)
    }

    #[test]
    fn logins_are_parallels_sshlogin_lines() {
        assert_eq!(
            hosts("# a comment\n\n2/user@a\nssh -p 2222 user@b\n:\n").unwrap(),
            ["user@a", "ssh -p 2222 user@b", ":"]
        );
        // an option where the login goes, a comment parallel would keep in the login (issue 38)
        for (text, want) in [
            (
                "-oProxyCommand=touch /tmp/x\n",
                "line 1: `-oProxyCommand=touch /tmp/x` starts with `-`",
            ),
            ("user@a\n1/-x\n", "line 2: `-x` starts with `-`"),
            (
                "user@a # the big one\n",
                "line 1: `user@a # the big one` holds `#`",
            ),
        ] {
            let e = hosts(text).unwrap_err();
            assert_eq!(crate::error::exit_code_for(&e), crate::error::EXIT_INVALID);
            assert!(format!("{e:#}").contains(want), "{text:?}: {e:#}");
        }
    }

    /// Job N is the plan's cell N, a complete one running nothing; the list is rebuilt, so a
    /// line added to the file is gone on the next run (issue 38).
    #[test]
    fn the_job_list_is_rebuilt_from_the_plan_in_its_order() {
        let text = "# perflab matrix plan 1\n# id 20261201T101500Z\n\
            perflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie\n\
            perflab run demo-open --suite trixie --run-name 20261201T101500Z-r2-trixie\n";
        let plan = super::super::planfile::parse(text).unwrap();
        let d = tempfile::tempdir().unwrap();
        let (out, work) = (d.path().join("out"), d.path().join("work"));
        std::fs::create_dir_all(&work).unwrap();
        let done = out.join("demo-open/20261201T101500Z-r1-trixie");
        std::fs::create_dir_all(&done).unwrap();
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/compare/2a-base/2a/20261130T222220Z-r1/status.json"
            ),
            done.join("status.json"),
        )
        .unwrap();
        let h = HostsRun {
            plan: &plan,
            work: &work,
            out: &out,
            hosts: &["a".to_string()],
            program: "PATH=/x",
            remote_dir: "rd",
        };
        let jobs = write_jobs(&h).unwrap();
        let lines: Vec<&str> = jobs.lines().collect();
        assert_eq!(lines.len(), 2, "{jobs}");
        assert!(
            lines[0].starts_with("rd/cells/demo-open/20261201T101500Z-r1-trixie\t")
                && lines[0].contains("complete under out/, not run")
                && !lines[0].contains("run demo-open"),
            "{jobs}"
        );
        assert!(
            lines[1].starts_with("rd/cells/demo-open/20261201T101500Z-r2-trixie\t")
                && lines[1].contains("'PATH=/x' run demo-open"),
            "{jobs}"
        );
        let file = work.join("jobs");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), jobs);
        std::fs::write(&file, format!("{jobs}x\ttouch PWNED\n")).unwrap();
        assert_eq!(write_jobs(&h).unwrap(), jobs);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), jobs);
    }

    #[test]
    fn a_fifo_is_refused_without_waiting() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("hosts");
        crate::rundir::read::mkfifo(&p);
        let e = read_hosts(&p).unwrap_err();
        assert!(format!("{e:#}").contains("a FIFO"), "{e:#}");
    }
}
