//! Reading out/ is streaming (issue 38, item 8): `index`, `compare TARGET --no-run`,
//! `capacity`, `matrix plan` and `status` over an out/ root of many run directories keep their
//! peak RSS bounded (each child's `VmHWM`, sampled while it runs: `wait_peak`)
//! and take time linear in the runs, reading only the files they need.
//!
//! The run directories are recorded rounds of 2a (tests/fixtures/compare), their `report.json`
//! and `status.json` hard links, each with a manifest of its own run id: the oldest three are
//! 2a's burn rounds (`--set stack.node.burn_us=1000`), the newest three its rounds as
//! published, and between them rounds of another configuration (`stack.node.pool_max=7`) that
//! every count reads and leaves out. `compare` and `matrix plan` look for the burn rounds past
//! all of them; `capacity` stops at the newest three; `index` reads everything (and writes a
//! compare page per batch: one per run here, each a `perflab run` of one round).
//!
//! In the default run: 1,500 run directories, each command under 64 MiB (perflab held about
//! 95 KB a run before: 140 MiB and more) and 25 ms of CPU a run (plus 5 s; the debug build's
//! index takes about 5: CPU time, since the tests share the cores), and under 200 ms a run of
//! wall time (plus 60 s: the index's pages are each written with an fsync).
//! `twenty_thousand_runs` is the size (20,000 runs, 256 MiB, the same time bounds),
//! run in CI with the rest; it takes minutes in a debug build (`cargo test --test offline
//! out_scale:: -- --nocapture` prints each command's figures;
//! `PERFLAB_BIN=target/release/perflab` times a release build).
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/compare");

fn bin() -> PathBuf {
    std::env::var_os("PERFLAB_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_perflab")))
}

/// `out/2a/<name>/`: `manifest` written, report and status hard-linked from `src`.
fn run_dir(exp: &Path, name: &str, manifest: &str, src: &Path) {
    let d = exp.join(name);
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("manifest.json"), manifest).unwrap();
    for f in ["report.json", "status.json"] {
        std::fs::hard_link(src.join(f), d.join(f)).unwrap();
    }
}

/// The manifest of `src` as compact JSON with `run_id` = `id` (and `overrides`, when given).
fn manifest_as(src: &Path, id: &str, overrides: Option<&[&str]>) -> String {
    let text = std::fs::read_to_string(src.join("manifest.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["run_id"] = id.into();
    if let Some(o) = overrides {
        m["overrides"] = o.into();
    }
    serde_json::to_string(&m).unwrap()
}

/// A fixture batch's rounds, renamed to the day `day` (`20270101`), keeping their run ids.
fn genuine(exp: &Path, batch: &str, day: &str) {
    let dir = Path::new(FIX).join(batch).join("2a");
    let mut rounds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    rounds.sort();
    for r in rounds {
        let name = r.file_name().unwrap().to_str().unwrap().to_string();
        let m = std::fs::read_to_string(r.join("manifest.json")).unwrap();
        run_dir(exp, &format!("{day}{}", &name[8..]), &m, &r);
    }
}

/// An out/ root of `n` run directories of 2a (the module's layout).
fn out_of(root: &Path, n: usize) -> PathBuf {
    let out = root.join("out");
    let exp = out.join("2a");
    std::fs::create_dir_all(&exp).unwrap();
    genuine(&exp, "2a-burn", "20261130");
    let src = Path::new(FIX).join("2a-base/2a/20261130T222220Z-r1");
    let template = manifest_as(&src, "RUN-ID", Some(&["stack.node.pool_max=7"]));
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-12-02T00:00:00Z").unwrap();
    for i in 0..n - 6 {
        let at = t0 + chrono::Duration::minutes(i as i64);
        let name = format!("{}-r1", at.format("%Y%m%dT%H%M%SZ"));
        run_dir(&exp, &name, &template.replace("RUN-ID", &name), &src);
    }
    genuine(&exp, "2a-base", "20270101");
    out
}

/// How one command went: exit code, stdout and stderr, wall and CPU time, peak RSS.
struct Ran {
    code: Option<i32>,
    text: String,
    took: Duration,
    cpu: Duration,
    rss_mib: f64,
}

/// What `wait4` says of a child, and its peak RSS.
pub(crate) struct Waited {
    /// `None`: killed by a signal.
    pub code: Option<i32>,
    /// `wait4`'s peak RSS (the figure `/usr/bin/time -v` prints): the child's and its
    /// children's, but also the spawning process's memory at the spawn (a test binary running
    /// many tests at once holds a hundred MB and more).
    pub rss_kib: i64,
    /// The highest `VmHWM` of the child's `/proc/<pid>/status` seen every 10 ms while it ran:
    /// the memory of its own program only (not of its children).
    pub hwm_kib: Option<i64>,
    /// User and system CPU time.
    pub cpu: Duration,
}

/// `VmHWM` of `pid` in KiB.
fn hwm_kib(pid: u32) -> Option<i64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    l.split_whitespace().next()?.parse().ok()
}

/// Wait for `child` (spawned, never waited for) with `wait4`, sampling its peak RSS meanwhile.
pub(crate) fn wait_peak(child: std::process::Child) -> Waited {
    let mut status = 0;
    // SAFETY: rusage is plain data; the child is ours and reaped exactly once (WNOHANG
    // returns 0 while it runs).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut seen: Option<i64> = None;
    loop {
        // sampled first: a child that runs at all is seen once
        if let Some(k) = hwm_kib(child.id()) {
            seen = Some(seen.map_or(k, |s| s.max(k)));
        }
        let pid = unsafe { libc::wait4(child.id() as i32, &mut status, libc::WNOHANG, &mut ru) };
        assert!(pid >= 0, "wait4 failed");
        if pid == child.id() as i32 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Waited {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        rss_kib: ru.ru_maxrss,
        hwm_kib: seen,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
    }
}

/// Run perflab with `args` in `dir`, waited for with `wait4` for its peak RSS.
fn run(dir: &Path, args: &[&str]) -> Ran {
    let (out, err) = (dir.join(".stdout"), dir.join(".stderr"));
    let t = Instant::now();
    #[allow(
        clippy::zombie_processes,
        reason = "waited for with wait4 below, for its rusage"
    )]
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("PERFLAB_LOCK", dir.join("perflab.lock"))
        .env("DOCKER_HOST", "unix:///nonexistent/perflab-out-scale.sock")
        .env_remove("PERFLAB_OUT")
        .env_remove("PERFLAB_CATALOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let w = wait_peak(child);
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    Ran {
        code: w.code,
        text: read(&err) + &read(&out),
        took: t.elapsed(),
        cpu: w.cpu,
        rss_mib: w.hwm_kib.unwrap_or(w.rss_kib) as f64 / 1024.0,
    }
}

/// Every command over `n` runs, each within `max_mib` and the time bounds above, with the
/// outcome the layout gives; a table of their time and peak RSS is printed.
fn commands_hold_their_bounds(n: usize, max_mib: f64) {
    let t = tempfile::tempdir().unwrap();
    let out = out_of(t.path(), n);
    let cat = t.path().join("cat");
    std::fs::create_dir(&cat).unwrap();
    let yaml = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/2a.yaml");
    std::fs::copy(yaml, cat.join("2a.yaml")).unwrap();
    let (o, c) = (out.to_str().unwrap(), cat.to_str().unwrap());
    let burn = "stack.node.burn_us=1000";
    let cases: [(&str, Vec<&str>, i32, &str); 5] = [
        (
            "index",
            vec!["index", "--out", o],
            0,
            &format!("index of {n} runs"),
        ),
        (
            "capacity 2a",
            vec!["capacity", "2a", "--out", o],
            0,
            "capacity of 2a over 3 rounds",
        ),
        (
            "compare 2a --no-run",
            vec![
                "compare",
                "2a",
                "--b",
                burn,
                "--quick",
                "--no-run",
                "--reuse",
                "--json",
                "--out",
                o,
                "--catalog",
                c,
            ],
            1,
            "\"rounds_b\": 3",
        ),
        (
            "matrix plan 2a",
            vec![
                "matrix",
                "plan",
                "2a",
                "--rounds",
                "3",
                "--quick",
                "--set",
                burn,
                "--plan",
                "m.plan",
                "--out",
                o,
                "--catalog",
                c,
            ],
            0,
            "0 cell(s) to run, 3 already complete",
        ),
        ("status", vec!["status"], 0, "host lock"),
    ];
    let cpu_budget = Duration::from_secs(5) + Duration::from_millis(25) * n as u32;
    let budget = Duration::from_secs(60) + Duration::from_millis(200) * n as u32;
    let mut failed = Vec::new();
    println!(
        "{n} runs: command, exit, seconds, CPU seconds, peak RSS MiB (bounds: {max_mib} MiB, {cpu_budget:?} CPU, {budget:?})"
    );
    for (name, args, code, says) in &cases {
        let r = run(t.path(), args);
        println!(
            "  {name:<22} {:>4} {:>8.2} {:>8.2} {:>7.1}",
            r.code.unwrap_or(-1),
            r.took.as_secs_f64(),
            r.cpu.as_secs_f64(),
            r.rss_mib
        );
        let mut p = Vec::new();
        if r.code != Some(*code) {
            p.push(format!("exit {:?}, not {code}", r.code));
        }
        if !r.text.contains(says) {
            p.push(format!("no `{says}`"));
        }
        if r.rss_mib > max_mib {
            p.push(format!("peak RSS {:.0} MiB", r.rss_mib));
        }
        if r.cpu > cpu_budget {
            p.push(format!("took {:?} of CPU", r.cpu));
        }
        if r.took > budget {
            p.push(format!("took {:?}", r.took));
        }
        if !p.is_empty() {
            let head: String = r.text.chars().take(2000).collect();
            failed.push(format!("{name}: {}\n{head}", p.join("; ")));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n---\n"));
}

#[test]
fn many_runs_are_read_in_bounded_memory() {
    commands_hold_their_bounds(1_500, 64.0);
}

#[test]
fn twenty_thousand_runs() {
    commands_hold_their_bounds(20_000, 256.0);
}
