//! report.html: snapshots on recorded fixtures (a k6 fixture, recorded run directories with a
//! manifest), self-containment, escaping, and `perflab report RUN --html-only`.
use crate::report_support;
use assert_cmd::Command;
use perflab::html::report as html;
use perflab::report;
use report_support::{copy_run, report_of};
use std::path::Path;

/// The page with each inline SVG replaced by its first line (the SVGs have their own snapshots).
fn redact_svgs(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(a) = rest.find("<svg") {
        let z = rest[a..].find("</svg>").expect("closed svg") + a + "</svg>".len();
        let first = rest[a..z].lines().next().unwrap_or("");
        out.push_str(&rest[..a]);
        out.push_str(&format!("{first} …({} bytes)…</svg>", z - a));
        rest = &rest[z..];
    }
    out.push_str(rest);
    out
}

/// No fetchable URL anywhere: no src/href/url() pointing outside the file.
fn assert_self_contained(page: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "url(",
        "@import",
        "<link",
        "<img",
        "<iframe",
    ] {
        assert!(!page.contains(bad), "report.html contains `{bad}`");
    }
}

/// `perflab report DIR --html-only`.
fn report_html_cmd(dir: &Path) -> std::process::Output {
    Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(dir)
        .arg("--html-only")
        .output()
        .unwrap()
}

#[test]
fn html_k6_fixture_without_manifest() {
    let r = report_of("stepped-errors", |_| {});
    let x = html::Extras {
        manifest: None,
        claims: Vec::new(),
        plots: vec![
            (report::STEPS_SVG, report::plots::steps_svg(&r)),
            (report::TIMELINE_SVG, report::plots::timeline_svg(&r)),
        ],
    };
    let page = html::render(&r, &x);
    assert_self_contained(&page);
    assert_eq!(page.matches("<svg").count(), 2, "both plots inline");
    assert!(!page.contains("<script"), "report.html needs no script");
    insta::assert_snapshot!(redact_svgs(&page));
}

#[test]
fn html_recorded_run_exp1_via_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    let out = report_html_cmd(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        dir.join("report.html").display().to_string()
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_self_contained(&page);
    // Content order: what ran, verdict, experiment + finding, steps with their criteria, plots,
    // claims, per second, Little, ceilings, cross-check, caveats, versions with the data's
    // source (config in <details>).
    let order = [
        "<p class=\"ctx\">exp1 · round 1 · ",
        "id=\"verdict\"",
        "The article's finding",
        "id=\"steps\"",
        "criteria (a step breaks",
        "id=\"plots\"",
        "id=\"claims\"",
        "id=\"per-second\"",
        "Little&#39;s law",
        "Ceilings",
        "Cross-check with k6",
        "id=\"caveats\"",
        "source: k6/requests.csv.gz",
        "<details><summary>Config",
    ];
    let pos: Vec<usize> = order
        .iter()
        .map(|s| page.find(s).unwrap_or_else(|| panic!("missing {s}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "order {pos:?}");
    assert!(page.contains("<p class=\"lead knee\">knee 210 rps"));
    assert!(page.contains("<td class=\"l\">db-waits-for-php</td><td class=\"l\">"));
    assert!(page.contains("</td><td class=\"l\">pass</td>"));
    // The knee step's failed cells carry their criterion numbers (1 latency, 3 goodput).
    assert!(page.contains("title=\"fails criterion 1\">1,181<sup>✗1</sup>"));
    assert!(page.contains("title=\"fails criterion 3\">175.1<sup>✗3</sup>"));
    // The knee's reasons are shown; the step below it is marked failed by name.
    assert!(page.contains("<td class=\"l fail\">r0210</td>"));
    assert!(page.contains("<ul class=\"why\">\n<li>r0180 pass: "));
    insta::assert_snapshot!(redact_svgs(&page));
}

#[test]
fn html_escapes_experiment_text_and_log_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    m["experiment"]["description"] = "<script>alert('x')</script> & \"q\"".into();
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    r["warnings"] = serde_json::json!(["k6 log said <b>boom</b>", "CPU steal 5 % of a core"]);
    std::fs::write(dir.join("report.json"), r.to_string()).unwrap();
    let p = perflab::html::rerender_html(&dir).unwrap();
    let page = std::fs::read_to_string(p).unwrap();
    assert!(!page.contains("<script>alert"));
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"));
    let boom = page
        .find("k6 log said &lt;b&gt;boom&lt;/b&gt;")
        .expect("escaped log line");
    // Host sharing and steal come first among the caveats.
    let steal = page.find("<li>CPU steal 5 %").expect("steal caveat");
    assert!(steal < boom, "steal caveat after a plain one");
}

#[test]
fn html_flag_on_a_run_without_report_json_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    std::fs::remove_file(dir.join("report.json")).unwrap();
    let out = report_html_cmd(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("report.json") && err.contains("perflab report"),
        "{err}"
    );
}

#[test]
fn html_flag_through_the_latest_link_keeps_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    let latest = tmp.path().join("exp1/latest");
    std::os::unix::fs::symlink(dir.file_name().unwrap(), &latest).unwrap();
    let out = report_html_cmd(&latest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.contains("The article's finding"));
    assert!(page.contains("<title>perflab report: exp1 · 20261130T035648Z-r1</title>"));
}

/// A refined and fitted run: the probes are drawn on the step plot (hollow markers, the max
/// sustainable rate marked), and the page leads with the max sustainable rate and shows the fit.
#[test]
fn refine_probes_on_the_plot_and_fit_on_the_page() {
    use perflab::analyze::refine::{Probe, Refined};
    let mut r = report_of("stepped-errors", |_| {});
    let top = r.steps.last().unwrap().target;
    let probe = |target: u32, pass: bool| Probe {
        target,
        pass,
        why: String::new(),
        ok_per_s: f64::from(target),
        p95_ms: if pass { 50.0 } else { 900.0 },
        generator_cpu_pct: Some(20.0),
    };
    let plain = report::plots::steps_svg(&r).unwrap();
    assert!(!plain.contains("refine probes"));
    r.refine = Some(Refined {
        max_sustainable: Some(top + 7),
        max_sustainable_ok_per_s: Some(f64::from(top + 7) * 0.96),
        unit: "rps".into(),
        max_sustainable_resolution: (Some(top + 7), Some(top + 9)),
        probes: vec![probe(top + 7, true), probe(top + 9, false)],
        stopped: "bracket within 5 % of the rate".into(),
    });
    let svg = report::plots::steps_svg(&r).unwrap();
    assert!(svg.contains("p95 (refine probes)") && svg.contains("ok/s (refine probes)"));
    assert!(svg.contains(&format!("max sustainable {}", top + 7)));
    // Two probes per panel, drawn as circles beyond the steps' own dots.
    assert!(svg.matches("<circle").count() >= plain.matches("<circle").count() + 4);
    let x = html::Extras {
        manifest: None,
        claims: Vec::new(),
        plots: vec![(report::STEPS_SVG, Ok(svg))],
    };
    let page = html::render(&r, &x);
    assert!(
        page.contains(&format!("max sustainable {} rps", top + 7)),
        "lead names it"
    );
    assert!(page.contains("id=\"refine\""));
    // The goodput sustained at the max sustainable rate stands beside the offered rate.
    let goodput = format!(
        "max sustainable {} rps offered, {:.1} ok/s sustained there (the goodput; capacity plans with it)",
        top + 7,
        f64::from(top + 7) * 0.96
    );
    assert!(page.contains(&goodput), "{goodput}");
    let txt = perflab::report::content::refine_block(&r)
        .unwrap()
        .lines
        .join("\n");
    assert!(txt.contains(&goodput), "{txt}");
    assert!(!page.contains("Fitted to this host"));
}

/// A step that dropped iterations and ran out of VUs fails criterion 4 twice: the verdict cell
/// lists it once (recorded 1c run: steps 550 and 600 rps).
#[test]
fn verdict_cell_lists_each_failed_criterion_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("1c", tmp.path());
    let page = std::fs::read_to_string(perflab::html::rerender_html(&dir).unwrap()).unwrap();
    assert!(
        page.contains("<td class=\"l fail\">fail [4]</td>"),
        "verdict [4]"
    );
    assert!(!page.contains("4,4]") && !page.contains("[4,4"));
}
