//! End to end through the real Docker engine, k6 and the Node lab: `perflab compare 2a --b
//! stack.node.burn_us=1000 --set load.steps=100 --set load.warmup_s=0 --quick --no-align
//! --design rounds --max-rounds 2` runs A1 B1 B2 A2 (ABBA) as whole rounds on fresh stacks (the
//! design where two stacks do not fit; pairs by turns: turns_e2e.rs)
//! into normal run directories tagged with their batch, side and pair, prints the running
//! verdict after each pair, and ends with the matrix row; plain `compare A B` on those
//! directories and `--no-run` on the out root read the same rounds to the same verdict.
use std::path::{Path, PathBuf};
use std::time::Instant;

use perflab::rundir::batch::CompareSide;
use perflab::rundir::{self, RunDir, RunState};
use serde_json::Value;

use crate::run_support;
use run_support::perflab;

/// One of 2a's seven steps and no warm-up, on both sides (`--set`): the test is about the
/// alternation, the tags and the verdict's bookkeeping, not the knee, and a round's load is then
/// 8 s (a 2 s ramp, a 6 s hold) instead of about 55 (21 with two steps and the warm-up, until
/// 2026-12-05; docs/ci-time.md). The verdict's arithmetic on real rounds is the recorded
/// fixtures' (offline `compare_interleave`, `compare_batches`).
pub(crate) const SIDES: [&str; 14] = [
    "compare",
    "2a",
    "--b",
    "stack.node.burn_us=1000",
    "--set",
    "load.steps=100",
    "--set",
    "load.warmup_s=0",
    "--quick",
    "--no-align",
    "--design",
    "rounds",
    "--max-rounds",
    "2",
];

/// The run directories under `out/2a`, oldest first.
fn rounds(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = rundir::list_runs(out, Some("2a"))
        .into_iter()
        .map(|r| r.path)
        .collect();
    v.sort_by_key(|p| rundir::read_manifest(p).unwrap().created);
    v
}

fn json_of(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(stdout));
    })
}

/// Docker runs whose figures nothing here judges (lifecycle, interrupts, bookkeeping):
/// `scripts/test.sh` runs them beside the offline tests (docs/ci-time.md).
mod bookkeeping {
    use super::*;

    #[test]
    fn two_configurations_alternate_on_fresh_stacks_until_the_cap() {
        let _serial = crate::serial();
        let out = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let o = perflab()
            .args(SIDES)
            .args(["--json", "--out"])
            .arg(out.path())
            .output()
            .unwrap();
        let took = t0.elapsed();
        let stderr = String::from_utf8_lossy(&o.stderr);
        let code = o.status.code();
        assert!(matches!(code, Some(0 | 1 | 3)), "exit {code:?}\n{stderr}");
        println!("compare 2a, 2 rounds a side: {took:?}, exit {code:?}\n{stderr}");
        let m = json_of(&o.stdout);
        let row = &m["rows"][0];
        assert_eq!(row["experiment"], "2a");
        assert_eq!(
            (row["rounds_a"].as_u64(), row["rounds_b"].as_u64()),
            (Some(2), Some(2))
        );
        assert_eq!(
            code,
            Some(m["summary"]["exit_code"].as_u64().unwrap() as i32)
        );
        // the running verdict after each pair
        for pair in ["A 1 / B 1 rounds: ", "A 2 / B 2 rounds: "] {
            assert!(stderr.contains(pair), "{pair}\n{stderr}");
        }
        // four complete rounds, oldest first A B B A (ABBA), one batch, each on its own stack
        let dirs = rounds(out.path());
        assert_eq!(dirs.len(), 4, "{dirs:?}");
        let want = [
            (CompareSide::A, 1),
            (CompareSide::B, 1),
            (CompareSide::B, 2),
            (CompareSide::A, 2),
        ];
        let mut batches = Vec::new();
        let mut run_ids = Vec::new();
        for (d, (side, pair)) in dirs.iter().zip(want) {
            let dir = RunDir::open(d).unwrap();
            assert_eq!(
                dir.status().unwrap().state,
                RunState::Complete,
                "{}",
                d.display()
            );
            let m = dir.read_manifest().unwrap();
            let tag = m.measurements.compare.clone().expect("tagged");
            assert_eq!(
                (tag.side, tag.pair, m.round),
                (side, pair, pair),
                "{}",
                d.display()
            );
            // --set is common to both sides and comes first; the side's own pair after it.
            let want_overrides: &[&str] = match side {
                CompareSide::A => &["load.steps=100", "load.warmup_s=0"],
                CompareSide::B => &[
                    "load.steps=100",
                    "load.warmup_s=0",
                    "stack.node.burn_us=1000",
                ],
            };
            assert_eq!(m.overrides, want_overrides, "{}", d.display());
            assert_eq!(m.experiment.load.steps, [100]);
            assert_eq!(m.plan.warmup_s, 0, "{}", d.display());
            assert_eq!(
                m.experiment.stack.injected().is_empty(),
                side == CompareSide::A
            );
            batches.push(tag.batch);
            run_ids.push(m.measurements.stack.run_id.clone().unwrap());
        }
        batches.dedup();
        assert_eq!(batches.len(), 1, "{batches:?}");
        run_ids.dedup();
        assert_eq!(run_ids.len(), 4, "a stack per round: {run_ids:?}");
        // plain compare A B reads the same rounds to the same verdict
        let list = |side: CompareSide| {
            dirs.iter()
                .zip(want)
                .filter(|(_, (s, _))| *s == side)
                .map(|(d, _)| d.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let plain = perflab()
            .args([
                "compare",
                &list(CompareSide::A),
                &list(CompareSide::B),
                "--json",
            ])
            .output()
            .unwrap();
        let c = json_of(&plain.stdout);
        assert_eq!(c["verdict"], row["verdict"], "{}", c["why"]);
        // and so does the same comparison without running: the recorded rounds count
        let again = perflab()
            .args(SIDES)
            .args(["--no-run", "--json", "--out"])
            .arg(out.path())
            .output()
            .unwrap();
        let m2 = json_of(&again.stdout);
        assert_eq!(m2["rows"][0]["verdict"], row["verdict"]);
        assert_eq!(m2["rows"][0]["runs_a"], row["runs_a"]);
        assert_eq!(m2["rows"][0]["runs_b"], row["runs_b"]);
    }

    /// `compare EXP --aa --design rounds` on the real engine (pairs loaded together, the default,
    /// are `turns_e2e`'s): one configuration on both sides, two pairs run A B B A (ABBA; demo-open at two 5 s steps, so a round is short: at one step, 200 rps, the CPU signal
    /// had no common step and the calibration no pairs), the rounds told into sides by their tags,
    /// the calibration written under `--out` with the paired noise, and `--no-run --aa` reading
    /// the same batch back to the same calibration.
    #[test]
    fn an_aa_batch_runs_one_configuration_on_both_sides() {
        let _serial = crate::serial();
        let out = tempfile::tempdir().unwrap();
        let aa = [
            "compare",
            "demo-open",
            "--aa",
            "--set",
            "load.steps=100,200",
            "--quick",
            "--no-align",
            "--design",
            "rounds",
            "--max-rounds",
            "2",
            "--json",
            "--out",
        ];
        let o = perflab().args(aa).arg(out.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(0 | 3)), "{stderr}");
        let m = json_of(&o.stdout);
        let row = &m["rows"][0];
        assert_eq!(
            (row["rounds_a"].as_u64(), row["rounds_b"].as_u64()),
            (Some(2), Some(2)),
            "{stderr}"
        );
        let mut manifests: Vec<_> = rundir::list_runs(out.path(), Some("demo-open"))
            .into_iter()
            .map(|r| rundir::read_manifest(&r.path).unwrap())
            .collect();
        manifests.sort_by_key(|m| m.created);
        let sides: Vec<(CompareSide, u32)> = manifests
            .into_iter()
            .map(|m| {
                assert_eq!(m.overrides, ["load.steps=100,200"], "one configuration");
                let tag = m.measurements.compare.expect("tagged");
                (tag.side, tag.pair)
            })
            .collect();
        let (a, b) = (CompareSide::A, CompareSide::B);
        assert_eq!(
            sides,
            [(a, 1), (b, 1), (b, 2), (a, 2)],
            "ABBA, oldest first"
        );
        let cal = &row["calibration"];
        assert_eq!(cal["pairs"], 2, "{row}");
        assert!(cal["paired_sd_pct"].as_f64().unwrap() > 0.0, "{cal}");
        let file = out.path().join("calibration/demo-open.json");
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(&written, cal);
        assert!(
            stderr.contains("calibration: this host's A/A calibration of demo-open"),
            "{stderr}"
        );
        let again = perflab()
            .args(aa)
            .arg(out.path())
            .arg("--no-run")
            .output()
            .unwrap();
        assert_eq!(
            json_of(&again.stdout)["rows"][0]["calibration"]["paired_sd_pct"],
            cal["paired_sd_pct"]
        );
    }
}
