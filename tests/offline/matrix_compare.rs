//! One result from many hosts, without Docker: recorded rounds of 2a (tests/fixtures/compare;
//! B's with 1,000 µs burnt per request, relabelled `forky`) laid out as a collected matrix
//! (cell directories `<stamp>-r<N>-<suite>`) are read by `compare 2a --a suite=trixie --b
//! suite=forky --no-run` with no further step and listed by the index with their host. Rounds
//! from different hosts are marked, and the regression is inconclusive unless the hosts' speed
//! readings agree.
use perflab::host::speed::{CpuSpeed, HostSpeed, SpeedReading};
use std::path::{Path, PathBuf};
use std::process::Command;

fn perflab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.env_remove("PERFLAB_CATALOG")
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1");
    c
}

fn speed(mops: f64) -> HostSpeed {
    let r = SpeedReading {
        at: chrono::Utc::now(),
        cpus: vec![CpuSpeed {
            cpu: 0,
            compute_mops: mops,
            memory_msteps: 10.0,
            compute_spread_pct: 1.0,
            memory_spread_pct: 1.0,
            compute_wall_mops: None,
        }],
        not_measured: vec![],
    };
    HostSpeed {
        before: r,
        after: None,
    }
}

/// The batch's rounds as cells of `suite` on `host` with compute speed `mops`.
fn cells(out: &Path, batch: &str, suite: &str, host: &str, mops: f64) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(batch)
        .join("2a");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    let mut made = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let to = out
            .join("2a")
            .join(format!("20261201T101500Z-r{}-{suite}", i + 1));
        std::fs::create_dir_all(&to).unwrap();
        for f in ["manifest.json", "report.json", "status.json"] {
            std::fs::copy(r.join(f), to.join(f)).unwrap();
        }
        let mut m = perflab::rundir::read_manifest(&to).unwrap();
        m.measurements.stack.suite = Some(suite.into());
        m.overrides.clear();
        // the burn's stack as the experiment published: the difference is the suite only
        if let Some(n) = m.experiment.stack.node.as_mut() {
            n.burn_us = 0;
        }
        if let Some(php) = m.experiment.stack.php.as_mut() {
            php.burn_us = 0;
        }
        m.host.hostname = Some(host.into());
        m.measurements.host_speed = Some(speed(mops));
        std::fs::write(to.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        made.push(to);
    }
    made
}

fn compare(out: &Path) -> (i32, serde_json::Value, String) {
    let args = [
        "compare",
        "2a",
        "--a",
        "suite=trixie",
        "--b",
        "suite=forky",
        "--quick",
        "--no-run",
        "--reuse",
        "--json",
        "--out",
    ];
    let o = perflab().args(args).arg(out).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let text = perflab()
        .args(&args[..9])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        v,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

#[test]
fn a_collected_matrix_compares_and_other_hosts_are_marked() {
    for (hb, speed_b, want, marked) in [
        ("host-a", 350.0, "regressed", "hosts: all rounds on host-a"),
        ("host-b", 352.0, "regressed", "DIFFERENT HOSTS"),
        (
            "host-b",
            450.0,
            "inconclusive",
            "their speed readings differ",
        ),
    ] {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("out");
        cells(&out, "2a-base", "trixie", "host-a", 350.0);
        cells(&out, "2a-burn", "forky", hb, speed_b);
        let (code, v, text) = compare(&out);
        let row = &v["rows"][0];
        assert_eq!(row["verdict"], want, "{hb} {speed_b}: {}", row["why"]);
        assert_eq!(code, if want == "regressed" { 1 } else { 3 });
        assert!(text.contains(marked), "{text}");
        if want == "inconclusive" {
            assert!(
                row["why"].as_str().unwrap().contains("different hosts"),
                "{}",
                row["why"]
            );
        }
        // the index lists every cell with its host
        let o = perflab()
            .args(["index", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success());
        let index = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(index.contains("6 runs of 1 experiments"), "index");
        assert!(index.contains(">host-a</td>") && index.contains(&format!(">{hb}</td>")));
        assert!(
            index.contains("20261201T101500Z-r3-forky/report.html")
                || index.contains("20261201T101500Z-r3-forky")
        );
    }
}
