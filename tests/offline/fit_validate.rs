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
    match parse_entry(
        Path::new("t.yaml"),
        &src,
        &perflab::verify::quantities::Quantities,
    ) {
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
    // the fix names the registry's nearest name, then every name a rule may read
    let help = e[0].help.as_deref().unwrap_or("");
    assert!(help.starts_with("did you mean `app_ceiling`?"), "{help}");
    for f in perflab::experiment::fit::FitQ::ALL {
        assert!(help.contains(f.name()), "{help} lacks {}", f.name());
    }
    assert!(e[0].to_string().contains("t.yaml"), "{}", e[0]);
}

/// `perflab validate` on a file whose rule reads a name the fit's registry lacks: exit 2,
/// naming the file, the field and the fix.
#[test]
fn validate_refuses_an_unknown_fit_name_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let fit = "fit:\n  rules:\n    - set: load.steps\n      to: \"x * w_msec\"\n      why: \"w\"\n";
    std::fs::write(dir.path().join("t.yaml"), format!("{BASE}{fit}")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .arg("validate")
        .arg(dir.path().join("t.yaml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for says in [
        "t.yaml",
        "fit.rules[0].to",
        "`w_msec` is not a fit quantity",
        "did you mean `w_ms`?",
    ] {
        assert!(err.contains(says), "{says}: {err}");
    }
}

const KNEE_CLAIM: &str = r#"expect:
  - name: db-busy
    claim: "c"
    value: db_core_busy_pct
    at: knee
    min: 75
"#;

/// Parse BASE + `fit` + a claim judged at the knee; the error diagnostics.
fn knee_errors(fit: &str) -> Vec<Diagnostic> {
    errors(&format!("{fit}{KNEE_CLAIM}"))
}

#[test]
fn a_fitted_plan_whose_claims_need_a_knee_reaches_past_the_ceiling() {
    let rule = |k: &str| {
        format!(
            "  ceiling: db_ceiling\n  rules:\n    - set: load.steps\n      to: \"x * db_ceiling / {k}\"\n      why: \"w\"\n"
        )
    };
    // 150 / 120 = 1.25: reaches.
    assert!(knee_errors(&rule("120")).is_empty());
    // 150 / 153 = 0.98 (1a's old x / 307 at its top 300): the knee is never passed.
    let e = knee_errors(&rule("153"));
    assert_eq!(e.len(), 1, "{e:#?}");
    let d = &e[0];
    assert_eq!(d.field, "fit.rules[0].to", "{d}");
    assert!(d.message.contains("0.98x the ceiling `db_ceiling`"), "{d}");
    assert!(d.message.contains("db-busy"), "{d}");
    assert!(d.to_string().contains("t.yaml"), "{d}");
    let help = d.help.as_deref().unwrap_or("");
    let k: f64 = help
        .split("divide by ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    assert!(
        help.contains("1.25x") && (115.0..=120.0).contains(&k),
        "{d}"
    );
    // Without claims at the knee nothing is required.
    assert!(errors(&rule("153")).is_empty());
}

#[test]
fn a_fitted_plan_with_knee_claims_names_its_ceiling() {
    let e = knee_errors(
        "  rules:\n    - set: load.steps\n      to: \"x * db_ceiling / 120\"\n      why: \"w\"\n",
    );
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].field, "fit.ceiling", "{}", e[0]);
    assert!(e[0].message.contains("db-busy"), "{}", e[0]);
    let e = knee_errors(
        "  ceiling: \"db_celing\"\n  rules:\n    - set: load.steps\n      to: \"x * db_ceiling / 120\"\n      why: \"w\"\n",
    );
    assert_eq!(e[0].field, "fit.ceiling", "{}", e[0]);
    assert!(e[0].message.contains("db_celing"), "{}", e[0]);
}

#[test]
fn the_catalogs_1a_with_its_old_rule_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/1a.yaml");
    let src = std::fs::read_to_string(&path).unwrap();
    assert!(parse_entry(&path, &src, &perflab::verify::quantities::Quantities).is_ok());
    let old = src.replace("x * db_ceiling / 235", "x * db_ceiling / 307");
    assert_ne!(old, src, "1a's steps rule changed: update this test");
    let e: Vec<Diagnostic> = parse_entry(&path, &old, &perflab::verify::quantities::Quantities)
        .unwrap_err()
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].message.contains("db-core-busy, loop-not-busy"),
        "{}",
        e[0]
    );
    assert!(e[0].to_string().contains("1a.yaml"), "{}", e[0]);
}
