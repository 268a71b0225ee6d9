//! Renderers of `perflab verify`: the claim table (text), the findings report (markdown), the
//! JSON object, and the list `--quantities` prints. Pure.
use super::eval::{ClaimResult, ClaimVerdict};
use super::findings::{Findings, key_versions};
use super::quantities::{self, FUNCTIONS};
use crate::report::table::{Block, Table, blocks_text, md_cell, md_text};
use std::fmt::Write;

fn verdict_word(v: ClaimVerdict) -> &'static str {
    match v {
        ClaimVerdict::Pass => "pass",
        ClaimVerdict::Fail => "FAIL",
        ClaimVerdict::NotApplicable => "n/a",
        ClaimVerdict::Refuted => "refuted",
    }
}

/// What a findings page says of refuted claims, when it has any.
const REFUTED_NOTE: &str = " Refuted: the finding does not reproduce where perflab measured it, as the catalog records with its evidence; a refuted claim that holds again fails (its mark is stale).";

/// Claims counted by verdict as every summary line says it: `3 pass, 1 fail, 2 n/a`, and
/// `, 1 refuted` when a claim is.
pub fn tally(claims: &[ClaimResult]) -> String {
    let n = |v: ClaimVerdict| claims.iter().filter(|c| c.verdict == v).count();
    let mut s = format!(
        "{} pass, {} fail, {} n/a",
        n(ClaimVerdict::Pass),
        n(ClaimVerdict::Fail),
        n(ClaimVerdict::NotApplicable)
    );
    let refuted = n(ClaimVerdict::Refuted);
    if refuted > 0 {
        s.push_str(&format!(", {refuted} refuted"));
    }
    s
}

/// `perflab verify --quantities`: the quantities, functions and selectors claims can use.
pub(crate) fn quantities_help() -> String {
    let mut s =
        String::from("quantities (scope: step needs `at:` or a selector such as `knee.`):\n");
    for q in quantities::all() {
        let lab = q.lab().map(|l| format!(" [{l}]")).unwrap_or_default();
        s.push_str(&format!(
            "  {:<24} {:<6} {}{lab}\n",
            q.name,
            q.scope().as_str(),
            q.help
        ));
    }
    s.push_str("functions:\n");
    for f in FUNCTIONS {
        s.push_str(&format!("  {:<6} {}\n", f.info.scope.as_str(), f.info.help));
    }
    s.push_str("selectors: every (at: only), lowest, top, knee, last_passing, below_knee, step<N> (e.g. step550.p50_ms); against.<name> reads the `against:` experiment's run\n");
    s
}

/// The table: experiment, claim, measured, expected, verdict; reasons under failing rows.
pub fn text(claims: &[ClaimResult], missing: &[String]) -> String {
    let mut t = Table::new(["experiment", "claim", "measured", "expected", "verdict"]);
    t.left = (0..5).collect();
    t.max_width = Some(60);
    for (k, c) in claims.iter().enumerate() {
        t.push(vec![
            c.experiment.clone(),
            c.claim.clone(),
            c.measured.clone(),
            c.expected.clone(),
            verdict_word(c.verdict).into(),
        ]);
        if let Some(reason) = &c.reason {
            t.below.push((k, format!("    -> {reason}")));
        }
        if let Some(h) = &c.host_limited {
            t.below.push((k, format!("    -> {h}")));
        }
    }
    let mut b = Block::new("");
    b.table = Some(t);
    let out = &mut b.notes;
    out.push(format!("{} claims: {}", claims.len(), tally(claims)));
    let mut runs: Vec<&str> = Vec::new();
    for c in claims {
        for r in std::iter::once(c.run.as_str()).chain(c.against_run.as_deref()) {
            if !runs.contains(&r) {
                runs.push(r);
            }
        }
    }
    if !runs.is_empty() {
        out.push(format!("runs: {}", runs.join(", ")));
    }
    if !missing.is_empty() {
        out.push(format!(
            "missing (claims but no complete run): {} (--run-missing runs them)",
            missing.join(", ")
        ));
    }
    blocks_text(&[b])
}

/// The findings report: runs and versions, then every claim with its verdict.
pub fn markdown(f: &Findings) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# perflab findings {}\n", f.generated);
    let _ = writeln!(
        out,
        "Runs under `{}`{}. {} claims: {} (n/a: the run cannot test it).{}\n",
        f.out_root,
        f.suite
            .as_ref()
            .map(|s| format!(", suite `{s}`"))
            .unwrap_or_default(),
        f.claims.len(),
        tally(&f.claims),
        if f.count(ClaimVerdict::Refuted) > 0 {
            REFUTED_NOTE
        } else {
            ""
        }
    );
    if !f.missing.is_empty() {
        let _ = writeln!(
            out,
            "**Missing** (claims but no complete run): {}\n",
            f.missing.join(", ")
        );
    }
    out.push_str("## Runs\n\n");
    out.push_str(&runs_table(f).to_markdown());
    out.push_str("\n## Claims\n\n");
    out.push_str(&claims_table(f).to_markdown());
    if !f.skipped.is_empty() {
        out.push_str("\n## Runs left out\n\n");
        for s in &f.skipped {
            let _ = writeln!(out, "- {}", md_cell(s));
        }
    }
    md_text(&out)
}

/// The findings' runs: experiment, run, suite, key versions.
fn runs_table(f: &Findings) -> Table {
    let mut t = Table::new(["experiment", "run", "suite", "versions"]);
    t.plain_rule = true;
    for r in &f.runs {
        let v: Vec<String> = key_versions(&r.lab, &r.components)
            .into_iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        t.push(vec![
            r.experiment.clone(),
            r.run.clone(),
            r.suite.as_deref().unwrap_or("?").to_string(),
            v.join(", "),
        ]);
    }
    t
}

/// The findings' claims with their verdicts and reasons.
fn claims_table(f: &Findings) -> Table {
    let mut t = Table::new([
        "experiment",
        "claim",
        "finding",
        "measured",
        "expected",
        "verdict",
    ]);
    t.plain_rule = true;
    for c in &f.claims {
        let mut verdict = match &c.reason {
            Some(r) => format!("**{}**: {}", verdict_word(c.verdict), r),
            None => verdict_word(c.verdict).to_string(),
        };
        if let Some(h) = &c.host_limited {
            verdict.push_str(&format!(" ({h})"));
        }
        t.push(vec![
            c.experiment.clone(),
            c.claim.clone(),
            c.text.clone(),
            c.measured.clone(),
            c.expected.clone(),
            verdict,
        ]);
    }
    t
}

/// `--json`: `{"claims": [...], "missing": [...], "runs": [...], ...}`.
pub(crate) fn json(f: &Findings) -> String {
    let mut s = serde_json::to_string_pretty(f).expect("findings serialize");
    s.push('\n');
    s
}
