//! Bad `expect:` claims are rejected like any catalog error: file, line, field, what is
//! allowed, did-you-mean; good ones pass. `perflab validate` exits 2 on them.
use assert_cmd::Command;
use perflab::experiment::Diagnostic;
use perflab::experiment::catalog::{Catalog, parse_entry};
use predicates::prelude::*;
use std::path::Path;

const BASE: &str = r#"kind: experiment
id: t
lab: php
description: "d"
finding: "f"
stack:
  php:
    max_children: 20
    listen: tcp
    persistent: true
load:
  script: stepped
  endpoint: /api/db
  steps: [60, 90, 120]
  hold_s: 20
  slo_p95_ms: 200
  pre_vus: 100
  max_vus: 100
  timeout_s: 10
"#;

/// Parse BASE + `expect`; the error diagnostics (empty when valid).
fn errors(expect: &str) -> Vec<Diagnostic> {
    let src = format!("{BASE}expect:\n{expect}");
    match parse_entry(
        Path::new("t.yaml"),
        &src,
        &perflab::verify::quantities::Quantities,
    ) {
        Ok(_) => Vec::new(),
        Err(d) => d.into_iter().filter(|d| d.is_error()).collect(),
    }
}

fn one(expect: &str) -> Diagnostic {
    let e = errors(expect);
    assert_eq!(e.len(), 1, "{e:#?}");
    e.into_iter().next().unwrap()
}

#[test]
fn a_good_claim_validates() {
    let e = errors(
        r#"  - name: ok
    claim: "c"
    value: "failed_rate"
    at: every
    near: "(max_children - (max_connections - 4)) / max_children"
    within: 0.03
    needs: ["app_cpus >= 2"]
  - name: ok2
    claim: "c"
    value: 'knee.cpu.pg + step90.p95_ms + log("laravel", "too many") + saturated("pg core")'
    at: top
    min: 1
"#,
    );
    assert!(e.is_empty(), "{e:#?}");
}

#[test]
fn unknown_quantity_suggests_the_name() {
    let d = one("  - name: a\n    claim: c\n    value: failed_rat\n    at: every\n    max: 0.1\n");
    assert_eq!(d.field, "expect[0].value");
    assert!(d.message.contains("unknown quantity `failed_rat`"), "{d}");
    assert!(
        d.help
            .as_deref()
            .unwrap()
            .contains("did you mean `failed_rate`"),
        "{d}"
    );
    assert_eq!(d.line, Some(23), "{d}"); // the line of `value:`
}

#[test]
fn step_quantity_needs_at_or_a_selector() {
    let d = one("  - name: a\n    claim: c\n    value: p95_ms\n    max: 200\n");
    assert!(d.message.contains("step quantity"), "{d}");
    assert!(d.help.as_deref().unwrap().contains("knee.p95_ms"), "{d}");
    assert!(errors("  - name: a\n    claim: c\n    value: knee.p95_ms\n    max: 200\n").is_empty());
}

#[test]
fn unknown_step_selector_lists_the_allowed_ones() {
    let d = one("  - name: a\n    claim: c\n    value: p95_ms\n    at: kne\n    max: 200\n");
    assert_eq!(d.field, "expect[0].at");
    let h = d.help.unwrap();
    assert!(h.contains("did you mean `knee`"), "{h}");
    assert!(h.contains("every, lowest, top"), "{h}");
    let d = one("  - name: a\n    claim: c\n    value: p95_ms\n    at: 100\n    max: 200\n");
    assert!(d.message.contains("step 100 is not in load.steps"), "{d}");
    let d = one("  - name: a\n    claim: c\n    value: step100.p95_ms\n    max: 200\n");
    assert!(d.message.contains("step 100 is not in load.steps"), "{d}");
}

/// `--set` re-checks an experiment without the quantities' registry (its claims' names cannot
/// change), but a step selector is still held to the new `load.steps`.
#[test]
fn set_steps_that_drop_a_claims_selected_step_is_refused() {
    let claim = "  - name: a\n    claim: c\n    value: step90.p95_ms\n    max: 200\n";
    let src = format!("{BASE}expect:\n{claim}");
    let registry = &perflab::verify::quantities::Quantities;
    let (entry, _) = parse_entry(Path::new("t.yaml"), &src, registry).unwrap();
    let perflab::experiment::CatalogEntry::Experiment(e) = entry else {
        panic!("an experiment")
    };
    let set = |steps: &str| perflab::experiment::overrides::apply(&e, &[steps.to_string()]);
    assert!(set("load.steps=60,90").is_ok());
    let d = set("load.steps=60,120").unwrap_err();
    let m = d
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(m.contains("step 90 is not in load.steps"), "{m}");
}

#[test]
fn comparisons_one_form_and_within_with_near() {
    let d = one("  - name: a\n    claim: c\n    value: knee\n");
    assert!(d.message.contains("no comparison"), "{d}");
    let d = one("  - name: a\n    claim: c\n    value: knee\n    near: 100\n");
    assert_eq!(d.field, "expect[0].within");
    let d = one("  - name: a\n    claim: c\n    value: knee\n    min: 1\n    equals: 2\n");
    assert!(d.message.contains("more than one comparison"), "{d}");
    let d = one("  - name: a\n    claim: c\n    value: knee\n    near: 1\n    within: \"x%\"\n");
    assert!(
        d.message.contains("neither a number nor a percentage"),
        "{d}"
    );
    let d = one("  - name: a\n    claim: c\n    value: knee\n    min: 1\n    within: 0.1\n");
    assert!(d.message.contains("only to `near`"), "{d}");
}

#[test]
fn expression_errors_point_into_the_text() {
    let d = one("  - name: a\n    claim: c\n    value: \"knee = 3\"\n    min: 1\n");
    assert!(d.message.contains("compare with `==`"), "{d}");
    assert!(d.message.contains("at character 5"), "{d}");
}

#[test]
fn needs_reads_config_only_and_lab_settings_match_the_lab() {
    let d =
        one("  - name: a\n    claim: c\n    value: knee\n    min: 1\n    needs: [\"knee > 2\"]\n");
    assert_eq!(d.field, "expect[0].needs[0]");
    assert!(d.message.contains("reads only the run's config"), "{d}");
    let d = one("  - name: a\n    claim: c\n    value: pool_max\n    min: 1\n");
    assert!(
        d.message
            .contains("is a node setting; this is a php experiment"),
        "{d}"
    );
}

#[test]
fn against_names_need_against_and_names_are_unique() {
    let d = one("  - name: a\n    claim: c\n    value: against.knee\n    min: 1\n");
    assert!(d.message.contains("no `against:`"), "{d}");
    let e = errors(
        "  - name: a\n    claim: c\n    value: knee\n    min: 1\n  - name: a\n    claim: c\n    value: knee\n    min: 1\n",
    );
    assert!(
        e.iter().any(|d| d.message.contains("duplicate claim name")),
        "{e:#?}"
    );
}

#[test]
fn functions_are_checked() {
    let d = one("  - name: a\n    claim: c\n    value: 'logs(\"x\", \"y\")'\n    min: 1\n");
    assert!(d.help.unwrap().contains("did you mean `log`"));
    let d = one("  - name: a\n    claim: c\n    value: 'log(\"x\")'\n    min: 1\n");
    assert!(d.message.contains("wrong arguments to `log`"), "{d}");
    let d = one("  - name: a\n    claim: c\n    value: 'saturated(\"pg\")'\n    min: 1\n");
    assert!(d.message.contains("reads a step"), "{d}");
}

#[test]
fn unknown_keys_in_a_claim_suggest_the_key() {
    let d = one("  - name: a\n    claim: c\n    value: knee\n    minimum: 1\n");
    assert!(
        d.help.clone().unwrap().contains("did you mean `min`"),
        "{d:?}"
    );
}

#[test]
fn catalog_rejects_against_an_unknown_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let src = format!(
        "{}expect:\n  - name: a\n    claim: c\n    value: against.knee\n    against: exp9\n    min: 1\n",
        BASE
    );
    std::fs::write(dir.path().join("t.yaml"), &src).unwrap();
    let err = Catalog::load(dir.path(), &perflab::verify::quantities::Quantities).unwrap_err();
    assert!(
        err.iter()
            .any(|d| d.field == "expect[0].against"
                && d.message.contains("unknown experiment `exp9`")),
        "{err:#?}"
    );
    Command::cargo_bin("perflab")
        .unwrap()
        .args(["validate", dir.path().join("t.yaml").to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expect[0].against"));
}

/// `refuted:` says why within bounds and names a docs section (`docs/<page>.md#<anchor>`); a
/// traversal, an absolute path or an empty or endless `why` is refused with its field and line.
#[test]
fn a_refuted_mark_needs_a_bounded_why_and_a_docs_section() {
    let claim = |why: &str, evidence: &str| {
        format!(
            "  - name: a\n    claim: c\n    value: knee.p95_ms\n    max: 200\n    refuted:\n      why: \"{why}\"\n      evidence: \"{evidence}\"\n"
        )
    };
    assert!(errors(&claim("5.2 against 8.5-12", "docs/remedies.md#one-round")).is_empty());
    let d = one(&claim("5.2 against 8.5-12", "docs/../../etc/passwd.md#x"));
    assert_eq!(d.field, "expect[0].refuted.evidence");
    assert!(
        d.help
            .as_deref()
            .unwrap()
            .contains("docs/<page>.md#<anchor>"),
        "{d}"
    );
    assert_eq!(d.line, Some(27), "{d}"); // the line of `evidence:`
    for bad in [
        "/etc/passwd#x",
        "docs/remedies.md",
        "docs/remedies.md#",
        "docs/Remedies.md#x",
        "docs/remedies.md#a b",
        "remedies.md#x",
    ] {
        assert_eq!(
            one(&claim("w", bad)).field,
            "expect[0].refuted.evidence",
            "{bad}"
        );
    }
    let d = one(&claim("  ", "docs/remedies.md#x"));
    assert_eq!(d.field, "expect[0].refuted.why");
    let long = "x".repeat(perflab::experiment::Refuted::MAX_WHY + 1);
    let d = one(&claim(&long, "docs/remedies.md#x"));
    assert!(d.message.contains("601 characters"), "{d}");
    // an unknown key under refuted: is the schema's error, naming it
    let src = "  - name: a\n    claim: c\n    value: knee.p95_ms\n    max: 200\n    refuted:\n      why: w\n      evidence: docs/a.md#b\n      since: 2026\n";
    let e = errors(src);
    assert!(e.iter().any(|d| d.message.contains("since")), "{e:#?}");
}
