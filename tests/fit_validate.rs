//! Bad `fit:` sections are rejected like any catalog error (file, line, field, the fix): a
//! rule that reads a quantity only the peak probe measures without declaring the probe, a
//! peak rate that reads what the probe itself measures, unknown names, empty reasons.
use perflab::experiment::Diagnostic;
use perflab::experiment::catalog::parse_entry;
use std::path::Path;

const BASE: &str = r#"kind: experiment
id: t
lab: node
description: "d"
finding: "f"
stack:
  node:
    processes: 1
    pool_max: 10
load:
  script: breakpoint
  model: open
  endpoint: /cpu
  steps: [50, 100, 150]
  hold_s: 20
  slo_p95_ms: 100
  pre_vus: 100
  max_vus: 400
  timeout_s: 5
"#;

/// Parse BASE + `fit`; the error diagnostics (empty when valid).
fn errors(fit: &str) -> Vec<Diagnostic> {
    let src = format!("{BASE}fit:\n{fit}");
    match parse_entry(Path::new("t.yaml"), &src) {
        Ok(_) => Vec::new(),
        Err(d) => d.into_iter().filter(|d| d.is_error()).collect(),
    }
}

fn one(fit: &str) -> Diagnostic {
    let e = errors(fit);
    assert_eq!(e.len(), 1, "{e:#?}");
    e.into_iter().next().unwrap()
}

const PEAK_RULE: &str = r#"  rules:
    - set: load.steps
      to: "x * (1000 / peak_app_ms) / 172"
      why: "fractions of the ceiling where it binds"
"#;

#[test]
fn a_peak_probe_and_the_rules_that_read_it_validate() {
    let e = errors(&format!(
        "  calibrate:\n    peak: \"1.2 * app_ceiling\"\n{PEAK_RULE}"
    ));
    assert!(e.is_empty(), "{e:#?}");
}

#[test]
fn a_rule_reading_a_peak_quantity_needs_the_probe() {
    let d = one(PEAK_RULE);
    assert_eq!(d.field, "fit.rules[0].to");
    assert!(d.message.contains("`peak_app_ms`"), "{d}");
    assert!(
        d.help
            .as_deref()
            .unwrap_or("")
            .contains("calibrate: {peak:"),
        "{d}"
    );
    assert_eq!(d.line, Some(23), "{d}"); // the line of `to:`
    assert!(d.to_string().contains("t.yaml"), "{d}");
}

#[test]
fn the_peak_rate_reads_only_what_the_calibration_measured() {
    let d = one(&format!(
        "  calibrate:\n    peak: \"2 * peak_ok_per_s\"\n{PEAK_RULE}"
    ));
    assert_eq!(d.field, "fit.calibrate.peak");
    assert!(d.message.contains("peak_ok_per_s"), "{d}");
    assert_eq!(d.line, Some(22), "{d}"); // the line of `peak:`
    let d = one(&format!(
        "  calibrate:\n    peak: \"1.2 * ceiling\"\n{PEAK_RULE}"
    ));
    assert!(d.message.contains("`ceiling` is not a fit quantity"), "{d}");
    assert!(
        d.help.as_deref().unwrap_or("").contains("app_ceiling"),
        "{d}"
    );
    let d = one(&format!(
        "  calibrate:\n    peak: \"x * app_ceiling\"\n{PEAK_RULE}"
    ));
    assert!(d.message.contains("`x`"), "{d}");
}

#[test]
fn unknown_names_empty_reasons_and_duplicate_fields_are_named() {
    let e = errors(
        r#"  rules:
    - set: load.steps
      to: "x * app_celing"
      why: ""
    - set: load.steps
      to: "x"
      why: "again"
"#,
    );
    let fields: Vec<&str> = e.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(
        fields,
        ["fit.rules[0].to", "fit.rules[0].why", "fit.rules[1].set"],
        "{e:#?}"
    );
    assert!(e[0].message.contains("app_celing"), "{}", e[0]);
}
