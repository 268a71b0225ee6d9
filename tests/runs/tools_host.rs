//! `noise-check` and `calib` run for real (short): each writes a fresh run directory whose raw
//! files agree with its report, honours SIGTERM (status aborted, exit 130) and the host lock
//! (`--no-wait` fails fast), and rejects bad input with exit code 2.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// perflab with its own out dir; measuring runs take the real host lock (they must not run
/// beside a lab measurement), lock tests pass their own.
fn perflab(out: &Path, lock: Option<&Path>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.env("PERFLAB_OUT", out).env("NO_COLOR", "1");
    if let Some(l) = lock {
        c.env("PERFLAB_LOCK", l);
    }
    c
}

fn json(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn latest(out: &Path, tool: &str) -> PathBuf {
    out.join(tool).join("latest").canonicalize().unwrap()
}

fn state(dir: &Path) -> String {
    json(&dir.join("status.json"))["state"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn noise_check_writes_raw_wakeups_that_agree_with_its_report() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    // threshold 0.05 ms: nearly every wake-up is "late", so the raw file has thousands of lines
    let o = perflab(tmp.path(), None)
        .args([
            "--quiet",
            "noise-check",
            "--seconds",
            "5",
            "--threshold-ms",
            "0.05",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout: Value = serde_json::from_slice(&o.stdout).expect("--json prints the report");
    let dir = latest(tmp.path(), "noise-check");
    assert_eq!(state(&dir), "complete");
    let report = json(&dir.join("report.json"));
    assert_eq!(stdout, report, "stdout and report.json differ");

    let stalls: Vec<Value> = std::fs::read_to_string(dir.join("stalls.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(report["stalls"].as_u64().unwrap() as usize, stalls.len());
    assert!(
        stalls.len() > 100,
        "only {} wake-ups above 0.05 ms",
        stalls.len()
    );
    assert!(
        stalls
            .iter()
            .all(|s| s["lateness_ms"].as_f64().unwrap() > 0.05)
    );
    let by_second: u64 = report["by_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_second as usize, stalls.len());

    // every wake-up is in the histogram; each slept at least 1 ms, so at most 5,000 in 5 s
    // (and at least one per 10 ms, even when the idle-priority test build shares the CPU)
    let hist = std::fs::read_to_string(dir.join("lateness-hist.tsv")).unwrap();
    let wakeups: u64 = hist
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(wakeups, report["wakeups"].as_u64().unwrap());
    assert!(
        (500..=5_000).contains(&wakeups),
        "{wakeups} wake-ups in 5 s"
    );
    let observed = report["observed_s"].as_f64().unwrap();
    assert!((4.9..7.0).contains(&observed), "observed {observed} s");

    let m = perflab::rundir::read_tool_manifest(&dir).unwrap();
    assert_eq!((m.kind.as_str(), m.tool.as_str()), ("tool", "noise-check"));
    let app = m.cpu_layout.app.to_list();
    let cpu = &m.pinning["sleep_loop_thread"];
    assert!(
        app.starts_with(cpu.as_str()),
        "loop on cpu {cpu}, app cpus {app}"
    );
    assert_eq!(&report["settings"]["cpu"].to_string(), cpu);
    assert!(!m.perflab.version.is_empty());
    assert!(m.components.contains_key("kernel"), "{:?}", m.components);
    // the idle check ran: its finding, or why it could not run, is recorded
    assert!(
        m.measurements.lab_containers_running.is_some()
            || m.caveats.iter().any(|c| c.contains("idle not checked")),
        "{m:?}"
    );
    assert!(m.host.online_cpu_count >= 1);
    assert!(dir.join("report.txt").exists() && dir.join("report.md").exists());
}

#[test]
fn calib_reports_every_repeat_and_the_spread_of_exactly_those() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let o = perflab(tmp.path(), None)
        .args(["calib", "--repeats", "5", "--work-ms", "50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("verdict:"), "{stdout}");
    let dir = latest(tmp.path(), "calib");
    assert_eq!(state(&dir), "complete");
    let r = json(&dir.join("report.json"));
    let walls: Vec<f64> = r["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["wall_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(walls.len(), 5);
    let tsv = std::fs::read_to_string(dir.join("repeats.tsv")).unwrap();
    assert_eq!(tsv.lines().count(), 6, "{tsv}");
    // sized to ~50 ms: a loop that did nothing or ran away fails here
    assert!(walls.iter().all(|w| (5.0..1000.0).contains(w)), "{walls:?}");
    let mean = walls.iter().sum::<f64>() / 5.0;
    let (min, max) = walls
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), w| (a.min(*w), b.max(*w)));
    let s = &r["wall_ms"];
    assert!((s["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert!((s["range_pct_of_mean"].as_f64().unwrap() - 100.0 * (max - min) / mean).abs() < 1e-9);
    let mut sorted = walls.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[2];
    let pm = 100.0 * (max - median).max(median - min) / median;
    assert!((s["plus_minus_pct_of_median"].as_f64().unwrap() - pm).abs() < 1e-9);
    assert_eq!(r["within_article"].as_bool().unwrap(), pm <= 7.0);
    assert!(r["calibration"]["iterations"].as_u64().unwrap() > 1000);
    // the host speed probe ran before and after, in CPU and in wall time, on every CPU
    let m = json(&dir.join("manifest.json"));
    let speed = &m["measurements"]["host_speed"];
    for when in ["before", "after"] {
        let cpus = speed[when]["cpus"].as_array().unwrap();
        assert!(!cpus.is_empty(), "{when}: {speed}");
        for c in cpus {
            let (cpu, wall) = (
                c["compute_mops"].as_f64().unwrap(),
                c["compute_wall_mops"].as_f64().unwrap(),
            );
            assert!(wall > 0.0 && wall <= cpu * 1.05, "{when}: {c}");
        }
    }
    let lines: Vec<&str> = r["host_speed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines[0].starts_with("host speed before the loads: compute "),
        "{lines:?}"
    );
    assert!(
        stdout.contains("host speed after the loads: compute "),
        "{stdout}"
    );
}

/// Docker runs whose figures nothing here judges (lifecycle, interrupts, bookkeeping):
/// `scripts/test.sh` runs them beside the offline tests (docs/ci-time.md).
mod bookkeeping {
    use super::*;

    #[test]
    fn sigterm_stops_noise_check_and_marks_the_run_aborted() {
        let _serial = crate::serial();
        let tmp = tempfile::tempdir().unwrap();
        let child = perflab(tmp.path(), None)
            .args(["noise-check", "--seconds", "60"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // wait until the run directory says the loop was pinned (manifest rewritten before the loop)
        let t = Instant::now();
        let dir = loop {
            if let Ok(d) = tmp.path().join("noise-check/latest").canonicalize()
                && std::fs::read_to_string(d.join("manifest.json"))
                    .is_ok_and(|m| m.contains("sleep_loop_thread"))
            {
                break d;
            }
            assert!(t.elapsed() < Duration::from_secs(300), "no run directory");
            std::thread::sleep(Duration::from_millis(100));
        };
        std::thread::sleep(Duration::from_millis(1500));
        let killed = Instant::now();
        // SAFETY: plain kill(2) of our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let o = child.wait_with_output().unwrap();
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "did not stop on SIGTERM"
        );
        assert_eq!(
            o.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(state(&dir), "aborted");
        let r = json(&dir.join("report.json"));
        assert!(r["observed_s"].as_f64().unwrap() < 30.0);
        assert!(r["wakeups"].as_u64().unwrap() > 100);
        assert!(
            r["caveats"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c.as_str().unwrap().contains("SIGTERM"))
        );
    }

    #[test]
    fn no_wait_fails_fast_while_another_process_holds_the_lock() {
        let _serial = crate::serial();
        let tmp = tempfile::tempdir().unwrap();
        let lock = tmp.path().join("lock");
        let mut holder = perflab(tmp.path(), Some(&lock))
            .args(["lock-hold", "--experiment", "exp-x", "--seconds", "20"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert!(line.starts_with("locked"), "{line}");
        let t = Instant::now();
        let o = perflab(tmp.path(), Some(&lock))
            .args(["calib", "--repeats", "1", "--no-wait"])
            .output()
            .unwrap();
        let _ = holder.kill();
        let _ = holder.wait();
        assert!(t.elapsed() < Duration::from_secs(5));
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("the host is busy") && err.contains("exp-x"),
            "{err}"
        );
        assert!(
            !tmp.path().join("calib").exists(),
            "a run directory was created"
        );
    }

    #[test]
    fn bad_input_is_exit_2_and_names_the_flag() {
        let _serial = crate::serial();
        let tmp = tempfile::tempdir().unwrap();
        let lock = tmp.path().join("lock");
        for (args, needle) in [
            (vec!["noise-check", "--cpu", "999"], "--cpu 999"),
            (vec!["noise-check", "--seconds", "0"], "--seconds"),
            (vec!["calib", "--repeats", "0"], "--repeats 0"),
            (vec!["cpu-per-request", "ruby"], "unknown lab `ruby`"),
            (
                vec!["cpu-per-request", "php", "--endpoint", "api/db"],
                "--endpoint",
            ),
        ] {
            let o = perflab(tmp.path(), Some(&lock))
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(needle), "{args:?}: {err}");
        }
        assert!(std::fs::read_dir(tmp.path()).unwrap().all(|e| {
            let n = e.unwrap().file_name();
            n == "lock"
        }));
    }
}
