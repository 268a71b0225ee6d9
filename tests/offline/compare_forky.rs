//! Trixie against forky, re-answered with pairs loaded together (docs/regression.md, "Trixie
//! against forky, loaded together"): the four batches of 2026-12-06 (`--run-out`, 10 pairs each,
//! manifest, report and status of every round in tests/fixtures/forky-dec06) read back
//! by `compare EXP --a suite=trixie --b suite=forky --no-run` to the verdicts, exit codes and
//! CPU ratios the page states. A change to the verdict's rule that moves any of them fails here.
use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

const FIX: &str = "tests/fixtures/forky-dec06";

/// Copy the batch of `exp` into `out/exp/`.
fn copy(out: &Path, exp: &str) {
    for d in std::fs::read_dir(Path::new(FIX).join(exp))
        .unwrap()
        .flatten()
    {
        let to = out.join(exp).join(d.file_name());
        std::fs::create_dir_all(&to).unwrap();
        for f in ["manifest.json", "report.json", "status.json"] {
            std::fs::copy(d.path().join(f), to.join(f)).unwrap();
        }
    }
}

#[test]
fn trixie_against_forky_loaded_together_reads_back_to_the_pages_verdicts() {
    // (experiment, verdict, exit code, CPU per ok B/A, the process that moved most)
    let want = [
        ("exp1", "regressed", 1, 1.146, "fpm"),
        ("2a", "improved", 0, 0.926, "node"),
        ("exp0", "regressed", 1, 1.052, "fpm"),
        ("1b", "improved", 0, 0.682, "node"),
    ];
    let out = tempfile::tempdir().unwrap();
    for (exp, verdict, code, ratio, process) in want {
        copy(out.path(), exp);
        let o = Command::cargo_bin("perflab")
            .unwrap()
            .env_remove("PERFLAB_CATALOG")
            .env("PERFLAB_OUT", out.path())
            .env(
                "DOCKER_HOST",
                "unix:///nonexistent/perflab-compare-forky.sock",
            )
            .args(["compare", exp, "--a", "suite=trixie", "--b", "suite=forky"])
            .args(["--quick", "--no-align", "--no-run", "--json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let m: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
        let row = &m["rows"][0];
        let c = &row["comparison"];
        assert_eq!(o.status.code(), Some(code), "{exp}: {err}");
        assert_eq!(row["verdict"], verdict, "{exp}: {}", c["why"]);
        assert_eq!(
            (row["rounds_a"].as_u64(), row["rounds_b"].as_u64()),
            (Some(10), Some(10))
        );
        let got = c["cpu"]["test"]["ratio"].as_f64().unwrap();
        assert!(
            (got - ratio).abs() < 5e-4,
            "{exp}: CPU B/A {got}, the page {ratio}"
        );
        assert!(
            c["cpu"]["pairing"]
                .as_str()
                .unwrap()
                .starts_with("paired over 10 pairs, each of sides loaded together"),
            "{exp}: {}",
            c["cpu"]["pairing"]
        );
        let moved = row["processes"]
            .as_array()
            .unwrap()
            .iter()
            .max_by(|a, b| {
                let f = |p: &Value| {
                    p["change_pct"].as_f64().unwrap().abs() * p["a_ms"].as_f64().unwrap()
                };
                f(a).total_cmp(&f(b))
            })
            .unwrap();
        assert_eq!(moved["process"], process, "{exp}: {}", row["processes"]);
        // the latency read loaded together: the p95 over the passing steps
        assert_eq!(c["latency"]["stat"], "p95", "{exp}");
    }
}
