//! Snapshot tests of every renderer (insta) on the real k6 fixtures.
use crate::report_support;
use perflab::analyze::Report;
use perflab::report::{self, markdown, plots, text};
use report_support::report_of;

#[test]
fn text_stepped_open() {
    insta::assert_snapshot!(text::render(&report_of("stepped-open", |_| {}), None));
}

#[test]
fn text_stepped_abort() {
    insta::assert_snapshot!(text::render(&report_of("stepped-abort", |_| {}), None));
}

#[test]
fn markdown_breakpoint_closed() {
    let r = report_of("breakpoint-closed", |p| p.think_time_s = Some(0.05));
    insta::assert_snapshot!(markdown::render(
        &r,
        None,
        &[report::STEPS_SVG, report::TIMELINE_SVG]
    ));
}

#[test]
fn analyze_json_breakpoint_open_drops() {
    let r = report_of("breakpoint-open-drops", |_| {});
    insta::assert_snapshot!(serde_json::to_string_pretty(&r.to_analyze_json()).unwrap());
}

#[test]
fn report_json_keeps_the_analyze_fields_at_top_level() {
    let r = report_of("stepped-errors", |_| {});
    let full: serde_json::Value = serde_json::from_str(&report::json(&r)).unwrap();
    let small = serde_json::to_value(r.to_analyze_json()).unwrap();
    for key in ["last_passing", "knee", "dropped_iterations"] {
        assert_eq!(full[key], small[key], "{key}");
    }
    for (a, b) in full["steps"]
        .as_array()
        .unwrap()
        .iter()
        .zip(small["steps"].as_array().unwrap())
    {
        for (k, v) in b.as_object().unwrap() {
            match (a[k].as_f64(), v.as_f64()) {
                // serde_json's float parsing is within an ulp, not bit-exact.
                (Some(x), Some(y)) => {
                    assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{k}: {x} vs {y}")
                }
                _ => assert_eq!(&a[k], v, "{k}"),
            }
        }
    }
    // report.json reads back into a Report (what `perflab report` and scripts consume).
    let back: Report = serde_json::from_str(&report::json(&r)).unwrap();
    assert_eq!(
        (back.knee, back.last_passing, back.steps.len()),
        (r.knee, r.last_passing, r.steps.len())
    );
    assert_eq!(back.steps[1].failures, r.steps[1].failures);
}

#[test]
fn svg_steps_plot_stepped_errors() {
    let svg = plots::steps_svg(&report_of("stepped-errors", |_| {})).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("SLO 200 ms") && svg.contains("knee 20"));
    insta::assert_snapshot!(svg);
}

#[test]
fn svg_timeline_plot_breakpoint_closed() {
    let svg = plots::timeline_svg(&report_of("breakpoint-closed", |_| {})).unwrap();
    assert!(svg.contains("Requests per second") && svg.contains("in flight"));
    insta::assert_snapshot!(svg);
}
