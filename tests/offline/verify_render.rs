//! Snapshots of the verify renderers (claim table, findings markdown, compare, capacity) and
//! the pure capacity arithmetic, on the recorded fixture runs.
use crate::verify_support;
use perflab::experiment::{Catalog, CatalogEntry, Claim, StepAt};
use perflab::verify::capacity::{self, CapacityError};
use perflab::verify::findings::{self, Findings, RunInfo};
use perflab::verify::load::LoadedRun;
use perflab::verify::{ClaimVerdict, compare, evaluate, render};
use verify_support::{real, root};

fn findings_of(exps: &[&str]) -> Findings {
    let cat = Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let mut claims = Vec::new();
    let mut runs = Vec::new();
    let exp1 = real("exp1");
    let exp1_label = exp1.label();
    for id in exps {
        let CatalogEntry::Experiment(e) = &cat.get(id).unwrap().entry else {
            panic!()
        };
        let run = real(id);
        let label = run.label();
        let against = |a: &str| (a == "exp1").then(|| exp1.view(&exp1_label));
        claims.extend(findings::verify_run(e, run.view(&label), &against));
        runs.push(RunInfo {
            experiment: id.to_string(),
            lab: e.lab.to_string(),
            run: label,
            suite: run.suite(),
            created: run.manifest.created.to_rfc3339(),
            components: run.manifest.components.clone(),
        });
    }
    Findings {
        generated: "2026-11-30T05:00:00Z".into(),
        out_root: "tests/fixtures/verify".into(),
        suite: None,
        claims,
        missing: vec!["1a".into()],
        runs,
        skipped: Vec::new(),
    }
}

#[test]
fn claim_table_text() {
    let f = findings_of(&["exp2-pgconn", "exp0", "exp3-n40"]);
    insta::assert_snapshot!(render::text(&f.claims, &f.missing));
}

#[test]
fn findings_markdown() {
    let f = findings_of(&["exp2-pgconn", "exp2-mc80"]);
    assert!(!f.all_pass());
    insta::assert_snapshot!(render::markdown(&f));
}

#[test]
fn compare_text() {
    let (a, b) = (real("exp1"), real("exp2-mc80"));
    let (la, lb) = (a.label(), b.label());
    let c = compare::compare((&la, &a.report, &a.manifest), (&lb, &b.report, &b.manifest));
    assert_eq!(c.knee_shift_steps, Some(-2));
    insta::assert_snapshot!(compare::render_text(&c));
}

#[test]
fn capacity_of_disagreeing_rounds_says_the_host_is_noisy() {
    // Three real runs with the same steps (60..300 rps) standing in for three rounds that
    // disagree: last passing 180 (exp1), 150 (exp2-mc5), 120 (exp2-mc80): spread 2 steps.
    let runs: Vec<LoadedRun> = ["exp1", "exp2-mc5", "exp2-mc80"]
        .iter()
        .map(|e| real(e))
        .collect();
    let labels: Vec<String> = runs.iter().map(LoadedRun::label).collect();
    let input: Vec<_> = runs
        .iter()
        .zip(&labels)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    let c = capacity::capacity("exp1", &input, 3, 0.7, Some(300.0)).unwrap();
    assert_eq!(c.max_sustainable, Some(120));
    assert_eq!(c.spread_steps, Some(2));
    assert!(c.noisy);
    assert_eq!(c.nodes, Some(5)); // ceil(300 / 84) + 1
    insta::assert_snapshot!(capacity::render_text(&c));
    // fewer rounds than asked: the error says how to get them
    let e = capacity::capacity("exp1", &input[..2], 3, 0.7, None).unwrap_err();
    assert!(matches!(e, CapacityError::TooFewRounds { found: 2, .. }));
    assert!(e.to_string().contains("perflab run exp1 --rounds 3"));
    assert!(capacity::capacity("exp1", &input, 3, 1.5, None).is_err());
}

#[test]
fn needs_make_a_claim_not_applicable_never_a_pass() {
    let run = real("exp1");
    let label = run.label();
    let c = Claim {
        name: "two-cpus".into(),
        claim: "c".into(),
        value: "app_cpu".into(),
        at: Some(StepAt::Name("top".into())),
        min: Some(perflab::experiment::Bound::Num(0.0)),
        max: None,
        equals: None,
        near: None,
        within: None,
        needs: vec!["app_cpus >= 2".into()],
        against: None,
        refuted: None,
    };
    let r = evaluate("exp1", &c, run.view(&label), None);
    assert_eq!(r.verdict, ClaimVerdict::NotApplicable);
    assert_eq!(
        r.reason.as_deref(),
        Some("needs >= 2 app CPUs; this host gives the app 1 (of 2 online)")
    );
    // the same claim without the requirement passes on this run
    let c = Claim { needs: vec![], ..c };
    assert_eq!(
        evaluate("exp1", &c, run.view(&label), None).verdict,
        ClaimVerdict::Pass
    );
}
