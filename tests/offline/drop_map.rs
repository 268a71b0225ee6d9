//! Drop day's recovered/stuck map (issue 44, item 4): a group's `map:` checked like the rest of
//! the catalog (exit 2 naming the file, the line, the field and the fix; nothing started), and
//! the map read back from recorded runs (`tests/fixtures/drop-map`: the twelve `--quick` cells
//! run on 2026-12-06, the catalog they were run with beside them) into the map's report.txt,
//! map.json and report.html.
use assert_cmd::Command;
use predicates::prelude::*;

use super::remedies_input::rejects;

#[test]
fn a_map_whose_sizes_rows_or_cells_cannot_run_is_refused() {
    let values = "    values: [2, 5, 10, 20, 40]";
    rejects(
        "drop-day",
        values,
        "    values: [10, 5]",
        &["drop-day.yaml:9:", "map.size.values", "ascending"],
    );
    rejects(
        "drop-day",
        values,
        "    values: [2, 150]",
        &[
            "drop-day.yaml:",
            "map.rows[0].set",
            "load.trigger.for_s = 150",
            "longer than its step",
        ],
    );
    rejects(
        "drop-day",
        "    resolution: 2",
        "    resolution: 0",
        &["drop-day.yaml:10:", "map.size.resolution", "--refine"],
    );
    rejects(
        "drop-day",
        "  experiment: drop-stuck",
        "  experiment: drop-stuk",
        &[
            "drop-day.yaml:6:",
            "map.experiment",
            "unknown experiment `drop-stuk`",
        ],
    );
    rejects(
        "drop-day",
        "      set: [load.drop.retry=backoff, load.drop.retry_budget=0.1]",
        "      set: [load.drop.retry=backoff, load.drop.retry_budget=1.5]",
        &["drop-day.yaml:", "map.rows[2].set", "retry_budget"],
    );
    rejects(
        "drop-day",
        "  experiment: drop-stuck",
        "  experiment: exp1",
        &["map.experiment", "`exp1` has no load.trigger"],
    );
}

#[test]
fn refine_of_a_target_without_a_map_is_exit_2_before_anything_runs() {
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .env("NO_COLOR", "1")
        .args(["verify", "exp1", "--run-missing", "--refine", "--out"])
        .arg(out.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`exp1` draws no recovered/stuck map",
        ));
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// The fixtures copied to a fresh out/ root, with their catalog: (tempdir, out, catalog).
fn recorded() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let fix = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/drop-map");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let runs = out.join("maps/drop-day/runs/drop-stuck");
    std::fs::create_dir_all(&runs).unwrap();
    for e in std::fs::read_dir(fix.join("runs/drop-stuck")).unwrap() {
        let e = e.unwrap();
        let to = runs.join(e.file_name());
        std::fs::create_dir(&to).unwrap();
        for f in std::fs::read_dir(e.path()).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    (t, out, fix.join("catalog"))
}

fn verify_drop_day(
    out: &std::path::Path,
    catalog: &std::path::Path,
) -> (String, serde_json::Value, String) {
    let a = Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .env("NO_COLOR", "1")
        .args(["verify", "drop-day", "--out"])
        .arg(out)
        .arg("--catalog")
        .arg(catalog)
        .assert()
        // drop-profile has no run here: a missing experiment is exit 1, the map is drawn anyway
        .code(1);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    let maps = out.join("maps/drop-day");
    let dirs: Vec<_> = (std::fs::read_dir(&maps).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("runs"))
        .collect();
    assert_eq!(dirs.len(), 1, "one new map folder: {dirs:?}");
    let json = std::fs::read_to_string(dirs[0].join("map.json")).unwrap();
    let html = std::fs::read_to_string(dirs[0].join("report.html")).unwrap();
    assert!(dirs[0].join("report.txt").is_file());
    (stderr, serde_json::from_str(&json).unwrap(), html)
}

fn tallies(m: &serde_json::Value) -> Vec<Vec<u64>> {
    (m["rows"].as_array().unwrap().iter())
        .map(|r| {
            r["tally"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect()
        })
        .collect()
}

/// The twelve recorded cells read into the map: the seed's bugs recover from a 2 and a 5 s cut
/// and stay stuck after 10 s (six requests per arrival), each fix alone recovers from all three;
/// the text, map.json and report.html say the same, each cell linked to its run.
#[test]
fn the_recorded_cells_draw_the_map_with_each_rows_edge() {
    let (_t, out, catalog) = recorded();
    let (stderr, m, html) = verify_drop_day(&out, &catalog);
    assert_eq!(
        tallies(&m),
        [[2, 1, 0, 0], [3, 0, 0, 0], [3, 0, 0, 0], [3, 0, 0, 0]]
    );
    assert_eq!(
        m["rows"][0]["edge"],
        serde_json::json!({"between": {"below": 5.0, "at": 10.0}})
    );
    assert_eq!(
        m["rows"][1]["edge"],
        serde_json::json!({"recovered_to": 10.0})
    );
    assert!(stderr.contains("2=R x1.0  5=R x1.0  10=S x6.0"), "{stderr}");
    assert!(
        stderr.contains("edge: recovered at for_s = 5, stuck at 10"),
        "{stderr}"
    );
    assert_eq!(html.matches("class=\"m stk\"").count(), 1);
    assert_eq!(html.matches("class=\"m rec\"").count(), 11);
    assert_eq!(
        html.matches("href=\"../runs/drop-stuck/").count(),
        12,
        "{html}"
    );
}

/// A cell's run whose recorded experiment is not the map's as declared now (the backend's CPU
/// per call changed since) is not that cell's: the cell reads "not run".
#[test]
fn a_run_of_another_experiment_definition_is_not_the_cells() {
    let (_t, out, catalog) = recorded();
    let run = out.join("maps/drop-day/runs/drop-stuck/20261206T232147Z-r1/manifest.json");
    let text = std::fs::read_to_string(&run).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["experiment"]["stack"]["storefront"]["backend_burn_us"] = 20_000.into();
    std::fs::write(&run, serde_json::to_string(&v).unwrap()).unwrap();
    let (stderr, m, _) = verify_drop_day(&out, &catalog);
    assert_eq!(tallies(&m)[0], [2, 0, 0, 1], "{stderr}");
    assert!(stderr.contains("10=."), "{stderr}");
}
