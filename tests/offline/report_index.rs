//! out/index.html over recorded run directories: one row per run grouped by experiment, the
//! suite on each row, links to report.html, everything listed without JavaScript, and
//! `perflab index --out DIR`.
use crate::report_support;
use assert_cmd::Command;
use report_support::copy_run;

#[test]
fn index_lists_every_run_with_suite_knee_claims_and_link() {
    let tmp = tempfile::tempdir().unwrap();
    let a = copy_run("exp1", tmp.path());
    let b = copy_run("1b", tmp.path());
    report_support::set_suite(&b, "forky");
    perflab::html::rerender_html(&a).unwrap();
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .args(["index", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(tmp.path().join("index.html")).unwrap();
    // Two groups, one row each, with their suites; exp1's row links to its report.html.
    assert!(page.contains("<section class=\"exp\" id=\"exp-1b\">"));
    assert!(page.contains("<section class=\"exp\" id=\"exp-exp1\">"));
    assert_eq!(page.matches("<tr data-suite=").count(), 2);
    assert!(page.contains("<tr data-suite=\"forky\""));
    assert!(page.contains("<tr data-suite=\"trixie\""));
    assert!(page.contains("<a href=\"./exp1/20261130T035648Z-r1/report.html\">"));
    assert!(page.contains("<td class=\"r\">210 rps</td>"));
    assert!(page.contains("<td class=\"r\">500 rps</td>"));
    // exp1's ClientRead claim passes; its CPU per request against 2a is `verify`'s to judge
    assert!(page.contains("1 pass, 0 fail, 1 n/a"));
    // Rows are visible without the script: only the filter controls start hidden.
    assert!(!page.contains("<tr hidden"));
    assert!(page.contains("<div class=\"filters\" id=\"filters\" hidden>"));
}

#[test]
fn index_of_a_missing_out_root_exits_2() {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .args(["index", "--out", "/nonexistent/perflab-out"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out DIR"));
}
