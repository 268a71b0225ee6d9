//! The example report the README's quick start links (docs/example/report.html) is what
//! scripts/make-example-report.sh renders from the recorded run in tests/fixtures/example, so it
//! cannot go stale: a change to report.html's rendering fails here until the example is
//! regenerated and committed.
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded run (tests/fixtures/example/<experiment>/<run>/), as the script finds it.
fn recorded_run() -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/example"))
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    runs.into_iter().next().expect("a recorded run")
}

/// The run copied under the same experiment/run names, then `perflab report --html-only`'s work.
fn render(run: &Path, tmp: &Path) -> String {
    let exp = run.parent().unwrap().file_name().unwrap();
    let dst = tmp.join(exp).join(run.file_name().unwrap());
    std::fs::create_dir_all(&dst).unwrap();
    for f in std::fs::read_dir(run).unwrap().flatten() {
        if f.path().extension().is_some_and(|x| x == "json") {
            std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
        }
    }
    let page = perflab::html::rerender_html(&dst).unwrap();
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn committed_example_is_what_the_script_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let run = recorded_run();
    let fresh = render(&run, tmp.path());
    let knee: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    let knee = knee["knee"].as_u64().expect("the recorded run has a knee");
    assert!(
        fresh.contains(&format!("<p class=\"lead knee\">knee {knee} rps: ")),
        "the example leads with the knee sentence"
    );
    assert!(fresh.matches("<svg").count() == 2, "both plots drawn");
    let committed = std::fs::read_to_string(root().join("docs/example/report.html"))
        .expect("docs/example/report.html is committed");
    assert!(
        committed == fresh,
        "docs/example/report.html is stale: run scripts/make-example-report.sh and commit it"
    );
}
