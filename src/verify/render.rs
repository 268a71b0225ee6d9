//! Renderers of `perflab verify`: the claim table (text), the findings report (markdown) and
//! the JSON object. Pure.
use super::eval::{ClaimResult, ClaimVerdict};
use super::findings::{Findings, key_versions};
use std::fmt::Write;

fn verdict_word(v: ClaimVerdict) -> &'static str {
    match v {
        ClaimVerdict::Pass => "pass",
        ClaimVerdict::Fail => "FAIL",
        ClaimVerdict::NotApplicable => "n/a",
    }
}

fn width(rows: &[[String; 5]], i: usize, cap: usize) -> usize {
    rows.iter()
        .map(|r| r[i].chars().count())
        .max()
        .unwrap_or(0)
        .min(cap)
}

/// The table: experiment, claim, measured, expected, verdict; reasons under failing rows.
pub fn text(claims: &[ClaimResult], missing: &[String]) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "experiment".into(),
        "claim".into(),
        "measured".into(),
        "expected".into(),
        "verdict".into(),
    ]];
    for c in claims {
        rows.push([
            c.experiment.clone(),
            c.claim.clone(),
            c.measured.clone(),
            c.expected.clone(),
            verdict_word(c.verdict).into(),
        ]);
    }
    let w: Vec<usize> = (0..4).map(|i| width(&rows, i, 60)).collect();
    let mut out = String::new();
    for (k, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for i in 0..4 {
            let _ = write!(line, "{:<w$}  ", r[i], w = w[i]);
        }
        line.push_str(&r[4]);
        out.push_str(line.trim_end());
        out.push('\n');
        if k > 0
            && let Some(reason) = &claims[k - 1].reason
        {
            let _ = writeln!(out, "    -> {reason}");
        }
    }
    let n = |v| claims.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        out,
        "{} claims: {} pass, {} fail, {} n/a",
        claims.len(),
        n(ClaimVerdict::Pass),
        n(ClaimVerdict::Fail),
        n(ClaimVerdict::NotApplicable)
    );
    let mut runs: Vec<&str> = Vec::new();
    for c in claims {
        for r in std::iter::once(c.run.as_str()).chain(c.against_run.as_deref()) {
            if !runs.contains(&r) {
                runs.push(r);
            }
        }
    }
    if !runs.is_empty() {
        let _ = writeln!(out, "runs: {}", runs.join(", "));
    }
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "missing (claims but no complete run): {} (--run-missing runs them)",
            missing.join(", ")
        );
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The findings report: runs and versions, then every claim with its verdict.
pub fn markdown(f: &Findings) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# perflab findings {}\n", f.generated);
    let _ = writeln!(
        out,
        "Runs under `{}`{}. {} claims: {} pass, {} fail, {} n/a (the run cannot test it).\n",
        f.out_root,
        f.suite
            .as_ref()
            .map(|s| format!(", suite `{s}`"))
            .unwrap_or_default(),
        f.claims.len(),
        f.count(ClaimVerdict::Pass),
        f.count(ClaimVerdict::Fail),
        f.count(ClaimVerdict::NotApplicable)
    );
    if !f.missing.is_empty() {
        let _ = writeln!(
            out,
            "**Missing** (claims but no complete run): {}\n",
            f.missing.join(", ")
        );
    }
    out.push_str("## Runs\n\n| experiment | run | suite | versions |\n|---|---|---|---|\n");
    for r in &f.runs {
        let v: Vec<String> = key_versions(&r.lab, &r.components)
            .into_iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            r.experiment,
            md_cell(&r.run),
            r.suite.as_deref().unwrap_or("?"),
            md_cell(&v.join(", "))
        );
    }
    out.push_str("\n## Claims\n\n| experiment | claim | finding | measured | expected | verdict |\n|---|---|---|---|---|---|\n");
    for c in &f.claims {
        let verdict = match &c.reason {
            Some(r) => format!("**{}**: {}", verdict_word(c.verdict), r),
            None => verdict_word(c.verdict).to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            c.experiment,
            c.claim,
            md_cell(&c.text),
            md_cell(&c.measured),
            md_cell(&c.expected),
            md_cell(&verdict)
        );
    }
    if !f.skipped.is_empty() {
        out.push_str("\n## Unreadable runs\n\n");
        for s in &f.skipped {
            let _ = writeln!(out, "- {}", md_cell(s));
        }
    }
    out
}

/// `--json`: `{"claims": [...], "missing": [...], "runs": [...], ...}`.
pub fn json(f: &Findings) -> String {
    let mut s = serde_json::to_string_pretty(f).expect("findings serialize");
    s.push('\n');
    s
}
