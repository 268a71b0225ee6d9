//! The pages of a real run in a real browser: `perflab run demo-open --quick --no-align` on the
//! Docker engine (real k6, the demo lab), then headless Chromium loads the run's report.html and
//! the out/index.html the run rebuilt. Nothing may be fetched but the file itself, the console
//! stays empty, the knee sentence, the step table and the index's row for the run are in the
//! rendered DOM, and the screenshots at 360 and 1280 px are not blank. The run has
//! `--k6-dashboard --generators 2` (one run keeps CI's time: a second run cost 36-98 s), so it
//! also checks k6's own dashboard: one self-contained page per generator, recorded in the
//! manifest and linked from the report.
//! Its tests run one at a time with the other Docker tests of this binary (`crate::serial`).
use crate::browser_support;
use crate::run_support;
use browser_support::{load, png_colours, screenshot};
use run_support::run_quick_into;
use std::path::Path;

/// `perflab run demo-open --quick --no-align --out <out> EXTRA`; returns the run directory.

#[test]
fn a_quick_run_report_and_index_in_headless_chromium() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let dir = run_quick_into(&out, "demo-open", &["--k6-dashboard", "--generators", "2"]);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let knee = report["knee"].as_u64().expect("demo-open has a knee");

    let dom = load(&dir.join("report.html"), "", tmp.path());
    assert!(
        dom.contains(&format!("<p class=\"lead knee\">knee {knee} rps: ")),
        "the knee sentence leads the report"
    );
    let steps = &dom[dom.find("<section id=\"steps\">").expect("step table")..];
    let steps = &steps[..steps.find("</section>").unwrap()];
    for step in ["r0100", "r0600"] {
        assert!(
            steps.contains(&format!("<td class=\"l\">{step}</td>"))
                || steps.contains(&format!("<td class=\"l fail\">{step}</td>")),
            "step {step} in the table"
        );
    }
    assert_eq!(steps.matches("<tr>").count(), 7, "header and 6 steps");
    assert!(dom.contains("<svg"), "the plots are inline");

    let index = load(&out.join("index.html"), "", tmp.path());
    assert!(
        index.contains(&format!(
            "<a href=\"./demo-open/{name}/report.html\">{name}</a>"
        )),
        "the index lists and links the run"
    );
    assert_eq!(
        index.matches("<tr data-suite=").count(),
        1,
        "one run listed"
    );

    for w in [360, 1280] {
        let n = png_colours(&screenshot(&dir.join("report.html"), w, tmp.path()));
        assert!(n > 16, "report.html at {w} px has {n} colours: blank?");
    }
    let n = png_colours(&screenshot(&out.join("index.html"), 1280, tmp.path()));
    assert!(n > 16, "index.html has {n} colours: blank?");
    k6_dashboard_per_generator_saved_recorded_and_linked(&dir, tmp.path());
}

fn k6_dashboard_per_generator_saved_recorded_and_linked(dir: &Path, tmp: &Path) {
    let m = perflab::rundir::read_manifest(dir).unwrap();
    let g = m
        .measurements
        .generators
        .as_ref()
        .expect("generators recorded");
    assert_eq!(g.k6_dashboard.as_deref(), Some("dashboard.html"));
    assert!(
        g.instances
            .iter()
            .all(|i| i.command.contains("K6_WEB_DASHBOARD_PORT=-1")),
        "the dashboard's HTTP server is off in every generator"
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for i in 0..2 {
        let f = format!("k6/g{i}/dashboard.html");
        let len = std::fs::metadata(dir.join(&f))
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .len();
        assert!(len > 10_000, "{f} is {len} bytes");
        assert!(
            page.contains(&format!("<a href=\"./{f}\">{f}</a>")),
            "report links {f}"
        );
    }
    // k6's export is one self-contained page: the browser fetches nothing for it.
    let dom = load(&dir.join("k6/g0/dashboard.html"), "", tmp);
    assert!(dom.len() > 1000);
}
