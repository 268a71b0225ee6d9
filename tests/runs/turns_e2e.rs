//! End to end through the real Docker engine, k6 and the Node lab: `perflab compare 2a --b
//! stack.node.burn_us=1000 --design steps` brings both sides' stacks up side by side and lets
//! them take turns at each load level within one round (`plan::turns`): each pair is two run
//! directories made at the same time, whose loads start on one instant and whose steps, in
//! wall-clock time, never overlap the other side's, A opening the first level in pair 1 and B
//! in pair 2. Ctrl-C during the turns aborts both rounds and leaves no container, network or
//! volume of either stack. `--design together` loads both stacks over the same seconds, each at
//! half the step's rate.
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use perflab::rundir::batch::{CompareSide, Design};
use perflab::rundir::{self, RunDir, RunState};
use serde_json::Value;

use crate::run_e2e::labelled;
use crate::run_support::{json, perflab};

/// compare_e2e's comparison (one of 2a's steps and no warm-up, burn_us on B, 2 pairs) by turns:
/// the test is about the turns and their bookkeeping.
fn turns() -> [&'static str; 14] {
    let mut args = crate::compare_e2e::SIDES;
    assert_eq!(args[10..12], ["--design", "rounds"]);
    args[11] = "steps";
    args
}

/// The `perflab.run` labels of 2a's runs ("run-2a-<date>..."), not of another experiment whose
/// id starts with "2a-" (another user's `run-2a-async-...` on a shared host was counted).
const RUNS: &str = "run-2a-2";

/// A round's measured holds in wall-clock ms, from its report.
fn holds(dir: &Path) -> Vec<(f64, f64, u64)> {
    let report = json(&dir.join("report.json"));
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let start = s["start_ms"].as_f64().unwrap();
            let requests = s["requests"].as_u64().unwrap();
            (
                start,
                start + 1000.0 * s["window_s"].as_f64().unwrap(),
                requests,
            )
        })
        .collect()
}

fn by_side(out: &Path) -> [Vec<PathBuf>; 2] {
    let mut sides: [Vec<(u32, PathBuf)>; 2] = Default::default();
    for r in rundir::list_runs(out, Some("2a")) {
        let tag = rundir::read_manifest(&r.path)
            .unwrap()
            .measurements
            .compare
            .unwrap();
        sides[usize::from(tag.side == CompareSide::B)].push((tag.pair, r.path));
    }
    sides.map(|mut v| {
        v.sort();
        v.into_iter().map(|(_, p)| p).collect()
    })
}

#[test]
fn pairs_by_turns_load_two_stacks_by_turns_within_one_round() {
    let _serial = crate::serial();
    let out = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = perflab()
        .args(turns())
        .args(["--json", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    println!(
        "compare 2a by turns, 2 pairs: {:?}, exit {code:?}\n{stderr}",
        t0.elapsed()
    );
    assert!(matches!(code, Some(0 | 1 | 3)), "exit {code:?}\n{stderr}");
    assert!(stderr.contains("pairs by sides taking turns"), "{stderr}");
    for pair in ["A 1 / B 1 rounds: ", "A 2 / B 2 rounds: "] {
        assert!(stderr.contains(pair), "{pair}\n{stderr}");
    }
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &m["rows"][0];
    assert_eq!(
        (row["rounds_a"].as_u64(), row["rounds_b"].as_u64()),
        (Some(2), Some(2))
    );
    let [a, b] = by_side(out.path());
    assert_eq!((a.len(), b.len()), (2, 2), "{a:?} {b:?}");
    for (i, (da, db)) in a.iter().zip(&b).enumerate() {
        let (ma, mb) = (
            rundir::read_manifest(da).unwrap(),
            rundir::read_manifest(db).unwrap(),
        );
        for (m, d) in [(&ma, da), (&mb, db)] {
            assert_eq!(
                RunDir::open(d).unwrap().status().unwrap().state,
                RunState::Complete
            );
            assert_eq!(
                m.measurements.compare.as_ref().unwrap().design,
                Design::Steps
            );
            crate::run_support::bounds::assert_run_within_bounds(d);
        }
        // two stacks, one start instant (to the engine's clock: within 1 s)
        assert_ne!(ma.measurements.stack.run_id, mb.measurements.stack.run_id);
        let (ka, kb) = (
            ma.measurements.alignment.unwrap(),
            mb.measurements.alignment.unwrap(),
        );
        let apart = (ka.k6_start - kb.k6_start).num_milliseconds().abs();
        assert!(apart < 1000, "pair {}: starts {apart} ms apart", i + 1);
        // A opens pair 1's first level, B pair 2's
        let first = ma.plan.turns.as_ref().unwrap().first[0];
        assert_eq!(first, i == 0, "pair {}", i + 1);
        // every hold loaded, and none overlaps a hold of the other side (1 s of slack for
        // the first request's timing)
        let (ha, hb) = (holds(da), holds(db));
        assert_eq!((ha.len(), hb.len()), (1, 1));
        for (sa, ea, na) in &ha {
            assert!(*na > 0, "an A step without requests: {ha:?}");
            for (sb, eb, nb) in &hb {
                assert!(*nb > 0, "a B step without requests: {hb:?}");
                assert!(
                    ea - 1000.0 <= *sb || eb - 1000.0 <= *sa,
                    "A {ha:?} overlaps B {hb:?}"
                );
            }
        }
    }
    assert!(labelled(RUNS).is_empty(), "left: {:?}", labelled(RUNS));
}

#[test]
fn pairs_loaded_together_share_the_seconds_at_half_the_rate() {
    let _serial = crate::serial();
    let out = tempfile::tempdir().unwrap();
    let mut args = turns();
    args[11] = "together";
    let o = perflab()
        .args(args)
        .args(["--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1 | 3)), "exit {code:?}\n{stderr}");
    assert!(
        stderr.contains("pairs by sides loaded together"),
        "{stderr}"
    );
    assert!(
        stderr.contains("paired over 2 pairs, each of sides loaded together"),
        "{stderr}"
    );
    let [a, b] = by_side(out.path());
    assert_eq!((a.len(), b.len()), (2, 2), "{a:?} {b:?}");
    for (da, db) in a.iter().zip(&b) {
        let (ma, mb) = (
            rundir::read_manifest(da).unwrap(),
            rundir::read_manifest(db).unwrap(),
        );
        for m in [&ma, &mb] {
            assert_eq!(
                m.measurements.compare.as_ref().unwrap().design,
                Design::Together
            );
            assert_eq!(m.plan.steps[0].target, 50, "half the step's 100 rps");
        }
        assert_ne!(ma.measurements.stack.run_id, mb.measurements.stack.run_id);
        // both holds loaded over the same seconds (1 s of slack), each near 50 requests/s
        let (ha, hb) = (holds(da), holds(db));
        assert_eq!((ha.len(), hb.len()), (1, 1));
        let ((sa, ea, na), (sb, eb, nb)) = (ha[0], hb[0]);
        assert!(
            (sa - sb).abs() < 1000.0 && (ea - eb).abs() < 1000.0,
            "{ha:?} {hb:?}"
        );
        for n in [na, nb] {
            let rate = n as f64 / ((ea - sa) / 1000.0);
            assert!((40.0..=60.0).contains(&rate), "{rate} req/s: {ha:?} {hb:?}");
        }
    }
    assert!(labelled(RUNS).is_empty(), "left: {:?}", labelled(RUNS));
}

/// Docker runs whose figures nothing here judges (lifecycle, interrupts, bookkeeping):
/// `scripts/test.sh` runs them beside the offline tests (docs/ci-time.md).
mod bookkeeping {
    use super::*;

    #[test]
    fn ctrl_c_during_the_turns_aborts_both_rounds_and_leaves_nothing() {
        let _serial = crate::serial();
        let out = tempfile::tempdir().unwrap();
        let mut args = turns();
        assert_eq!(args[5], "load.steps=100");
        args[5] = "load.steps=50,60,70,80";
        let mut child = perflab()
            .arg("--quiet")
            .args(args)
            .arg("--out")
            .arg(out.path())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        let k6s = || labelled(RUNS).iter().filter(|l| l.ends_with("-k6")).count();
        while k6s() < 2 {
            assert!(
                t0.elapsed() < Duration::from_secs(600),
                "the two k6 never ran"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "perflab exited before the turns"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
        std::thread::sleep(Duration::from_secs(3));
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        assert_eq!(
            child.wait().unwrap().code(),
            Some(130),
            "an interrupted compare exits 130"
        );
        let [a, b] = by_side(out.path());
        for d in a.iter().chain(&b) {
            let status = json(&d.join("status.json"));
            assert_eq!(status["state"], "aborted", "{}: {status}", d.display());
        }
        assert_eq!((a.len(), b.len()), (1, 1));
        assert!(labelled(RUNS).is_empty(), "left: {:?}", labelled(RUNS));
    }
}
