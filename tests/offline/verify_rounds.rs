//! `perflab verify` over rounds, on recorded runs: a claim on a knee is judged by the median of
//! the experiment's rounds, with the spread and the count, so one round that broke a step early
//! does not flip it; other claims read the newest round; `--rounds` needs `--run-missing`.
use crate::report_support::copy_dir;
use assert_cmd::Command;
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures/verify";

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG")
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1");
    c
}

fn recorded(exp: &str) -> PathBuf {
    std::fs::read_dir(Path::new(FIX).join(exp))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").exists())
        .unwrap()
}

/// exp2-mc80's rounds under `out`, oldest first: (folder name, knee, last passing step).
fn mc80_rounds(out: &Path, rounds: &[(&str, u32, u32)]) {
    for (name, knee, lp) in rounds {
        round(out, "exp2-mc80", name, Some((*knee, *lp)));
    }
}

/// A round of `exp` under `out` named `name` (its run id: a round of its own, not a copy of
/// the recorded one), its report's knee and last passing step moved.
fn round(out: &Path, exp: &str, name: &str, knee_and_last_passing: Option<(u32, u32)>) {
    let to = out.join(exp).join(name);
    copy_dir(&recorded(exp), &to);
    let mut m = perflab::rundir::read_manifest(&to).unwrap();
    m.run_id = name.to_string();
    std::fs::write(to.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    if let Some((knee, lp)) = knee_and_last_passing {
        let path = to.join("report.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v["knee"] = knee.into();
        v["last_passing"] = lp.into();
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    }
}

fn verify_json(out: &Path, target: &str) -> serde_json::Value {
    let o = perflab()
        .args(["verify", target, "--json", "--out"])
        .arg(out)
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    })
}

#[test]
fn a_knee_claim_is_judged_on_the_median_round_with_its_spread() {
    let out = tempfile::tempdir().unwrap();
    // exp1 sustains 120.
    round(out.path(), "exp1", "20261130T035648Z-r1", Some((150, 120)));
    // exp2-mc80's rounds: the newest sustained 150 (1.25 of exp1's: fails alone); the two
    // before 130 and 120 (within x1.2).
    mc80_rounds(
        out.path(),
        &[
            ("20261130T100000Z-r1", 150, 130),
            ("20261130T110000Z-r2", 150, 120),
            ("20261130T120000Z-r3", 180, 150),
        ],
    );
    let v = verify_json(out.path(), "exp2-mc80");
    let c = &v["claims"][0];
    assert_eq!(c["claim"], "knee-like-mc20");
    assert_eq!(c["verdict"], "pass", "{c}");
    let median = c["value"].as_f64().unwrap();
    assert!(
        (median - 130.0 / 120.0).abs() < 1e-9,
        "the median of 1.0, 1.083, 1.25: {c}"
    );
    let r = &c["rounds"];
    assert_eq!(
        (r["n"].as_u64(), r["pass"].as_u64(), r["fail"].as_u64()),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(r["min"].as_f64(), Some(1.0));
    assert_eq!(r["max"].as_f64(), Some(1.25));
    assert!(
        r["median_run"].as_str().unwrap().ends_with("T100000Z-r1"),
        "{r}"
    );
    let measured = c["measured"].as_str().unwrap();
    assert!(
        measured.contains("median of 3 rounds, range 1-1.25"),
        "{measured}"
    );
    assert!(
        c["reason"].as_str().unwrap().contains("2 pass, 1 fail"),
        "{c}"
    );
}

#[test]
fn with_one_round_the_newest_run_decides_as_before() {
    let out = tempfile::tempdir().unwrap();
    round(out.path(), "exp1", "20261130T035648Z-r1", Some((150, 120)));
    mc80_rounds(out.path(), &[("20261130T120000Z-r1", 180, 150)]);
    let v = verify_json(out.path(), "exp2-mc80");
    let c = &v["claims"][0];
    assert_eq!(c["verdict"], "fail", "{c}");
    assert!(c.get("rounds").is_none(), "{c}");
}

#[test]
fn rounds_of_another_configuration_are_not_mixed_in() {
    let out = tempfile::tempdir().unwrap();
    round(out.path(), "exp1", "20261130T035648Z-r1", Some((150, 120)));
    mc80_rounds(
        out.path(),
        &[
            ("20261130T100000Z-r1", 150, 120),
            ("20261130T110000Z-r2", 150, 120),
            ("20261130T120000Z-r3", 180, 150),
        ],
    );
    // The newest round ran with an override: the earlier ones are another configuration.
    let m = out
        .path()
        .join("exp2-mc80/20261130T120000Z-r3/manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["overrides"] = serde_json::json!(["load.hold_s=10"]);
    std::fs::write(&m, serde_json::to_string(&v).unwrap()).unwrap();
    let v = verify_json(out.path(), "exp2-mc80");
    assert_eq!(v["claims"][0]["verdict"], "fail", "{}", v["claims"][0]);
}

#[test]
fn rounds_needs_run_missing() {
    perflab()
        .args(["verify", "exp1", "--rounds", "3", "--out", FIX])
        .assert()
        .code(2);
}
