//! `report.html`: one self-contained page (inline CSS, inline SVG plots, no script, no URL)
//! rendered from the same `Block`s as report.txt / report.md, in the order a reader needs it.
use super::report_page::{self as html_page, esc};
use super::table::{Mark, no_marks, table_html, table_html_with};
use crate::analyze::Report;
use crate::experiment::catalog::Catalog;
use crate::report::content::{self, Block};
use crate::report::table::Table;
use crate::rundir::Manifest;
use crate::verify::eval::{ClaimResult, ClaimVerdict};

/// What the page shows beside the report: the run's manifest (experiment, versions, config),
/// its claims, and the two plots as SVG text (a plot that could not be drawn is `Err(why)`).
pub struct Extras<'a> {
    pub manifest: Option<&'a Manifest>,
    pub claims: Vec<ClaimResult>,
    pub plots: Vec<(&'static str, Result<String, String>)>,
}

/// The claims of the run's experiment evaluated on this run (`perflab verify`'s evaluation):
/// the catalog's claims for that experiment when the catalog has it (as `verify` does), else
/// the ones recorded in the manifest. Claims against another experiment's run are n/a here.
pub(crate) fn claims_of(
    r: &Report,
    m: &Manifest,
    label: &str,
    catalog: Option<&Catalog>,
) -> Vec<ClaimResult> {
    let exp = catalog
        .and_then(|c| c.expand(&m.experiment_id).ok())
        .and_then(|v| v.into_iter().find(|e| e.id == m.experiment_id))
        .unwrap_or(&m.experiment);
    let view = crate::verify::RunView {
        label,
        report: r,
        manifest: m,
    };
    let mut claims = crate::verify::findings::verify_run(exp, view, &|_| None);
    // no other run is read here: a claim against another experiment is `verify`'s to judge
    for c in &mut claims {
        let against = exp.expect.iter().find(|x| x.name == c.claim);
        if let Some(a) = against.and_then(|x| x.against.as_deref())
            && c.against_run.is_none()
        {
            c.verdict = crate::verify::ClaimVerdict::NotApplicable;
            c.reason = Some(format!(
                "compares with `{a}`'s run: `perflab verify` checks it"
            ));
        }
    }
    claims
}

/// A block as a section: its lines as paragraphs, its table, its notes in small print.
pub(crate) fn block_html(b: &Block, id: &str, mark: Mark) -> String {
    let mut out = format!("<section id=\"{id}\">\n<h2>{}</h2>\n", esc(&b.title));
    out.push_str(&lines_html(&b.lines));
    if let Some(t) = &b.table {
        out.push_str(&table_html_with(t, mark, true));
    }
    for n in &b.notes {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", esc(n)));
    }
    out.push_str("</section>\n");
    out
}

/// Lines as paragraphs; lines starting with "- " or two spaces become list items.
fn lines_html(lines: &[String]) -> String {
    let mut out = String::new();
    let mut in_list = false;
    for l in lines {
        let item = l.strip_prefix("- ").or_else(|| l.strip_prefix("  "));
        match (item, in_list) {
            (Some(_), false) => out.push_str("<ul>\n"),
            (None, true) => out.push_str("</ul>\n"),
            _ => {}
        }
        in_list = item.is_some();
        match item {
            Some(i) => out.push_str(&format!("<li>{}</li>\n", esc(i))),
            None => out.push_str(&format!("<p>{}</p>\n", esc(l))),
        }
    }
    if in_list {
        out.push_str("</ul>\n");
    }
    out
}

/// The step table's column a failed criterion points at (1 latency, 2 errors, 3 goodput,
/// 4 generator), by header name.
fn criterion_columns(headers: &[String], criterion: u8, text: &str) -> Vec<usize> {
    let names: &[&str] = match criterion {
        1 if text.contains("p99") && !text.contains("p95") => &["p99"],
        1 => &["p95"],
        2 => &["failed"],
        3 => &["ok/s"],
        4 if text.contains("VU") => &["maxVU"],
        4 => &["drop"],
        _ => &[],
    };
    headers
        .iter()
        .enumerate()
        .filter(|(_, h)| names.contains(&h.as_str()))
        .map(|(i, _)| i)
        .collect()
}

/// The step table, what its marks mean (the criteria), then why steps failed: the steps that
/// place the knee (the knee and the last passing steps) in full, the others folded.
fn steps_html(r: &Report, criteria: &[String]) -> String {
    let b = content::steps_block(r);
    let headers = b
        .table
        .as_ref()
        .map(|t| t.headers.clone())
        .unwrap_or_default();
    let verdict_col = headers.len().saturating_sub(1);
    let mark = |ri: usize, ci: usize| -> Option<String> {
        let s = r.steps.get(ri)?;
        if ci == verdict_col || ci == 0 {
            // The verdict text already lists the criteria ("fail [1,3]"); the step's name is
            // marked too, so a narrow screen sees which rows failed without scrolling.
            return (!s.failures.is_empty()).then(String::new);
        }
        let mut v: Vec<String> = s
            .failures
            .iter()
            .filter(|f| criterion_columns(&headers, f.criterion, &f.text).contains(&ci))
            .map(|f| f.criterion.to_string())
            .collect();
        v.dedup();
        (!v.is_empty()).then(|| v.join(","))
    };
    let mut out = format!("<section id=\"steps\">\n<h2>{}</h2>\n", esc(&b.title));
    if let Some(t) = &b.table {
        out.push_str(&table_html_with(t, &mark, true));
    }
    out.push_str(&lines_html(criteria));
    let (legend, why) = b
        .notes
        .split_first()
        .map_or((None, &[][..]), |(a, z)| (Some(a), z));
    if let Some(l) = legend {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", esc(l)));
    }
    let key: Vec<String> = r
        .steps
        .iter()
        .filter(|s| [r.knee, r.last_passing, r.passing_below_knee].contains(&Some(s.target)))
        .map(|s| format!("{} ", s.name))
        .collect();
    let (shown, folded): (Vec<&String>, Vec<&String>) = why
        .iter()
        .partition(|n| key.iter().any(|k| n.starts_with(k)));
    let item = |n: &&String| format!("<li>{}</li>\n", esc(n));
    if !shown.is_empty() {
        out.push_str("<ul class=\"why\">\n");
        out.extend(shown.iter().map(item));
        out.push_str("</ul>\n");
    }
    if !folded.is_empty() {
        out.push_str(&format!(
            "<details><summary>Why the other {}</summary>\n<ul class=\"why\">\n",
            if folded.len() == 1 {
                "step failed or saturated".to_string()
            } else {
                format!("{} steps failed or saturated", folded.len())
            }
        ));
        out.extend(folded.iter().map(item));
        out.push_str("</ul>\n</details>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The verdict: the knee sentence as the page's lead, the other verdict lines below it.
fn verdict_html(r: &Report) -> String {
    let b = content::verdict_block(r);
    let mut out = String::from("<section id=\"verdict\" class=\"verdict\">\n");
    let (lead, rest) = b
        .lines
        .split_first()
        .map_or(("", &[][..]), |(a, z)| (a.as_str(), z));
    let class = if r.knee.is_some() { "knee" } else { "noknee" };
    out.push_str(&format!("<p class=\"lead {class}\">{}</p>\n", esc(lead)));
    out.push_str(&super::report_meta::host_warning_html(r));
    if let Some(b) = content::refine_block(r) {
        out.push_str(&format!("<p class=\"lead\">{}</p>\n", esc(&b.lines[0])));
    }
    if r.fit.is_some() {
        out.push_str("<p class=\"note\">The load was fitted to this host (<code>--fit</code>): see \"Fitted to this host\" for the article's numbers beside the fitted ones.</p>\n");
    }
    out.push_str(&lines_html(rest));
    out.push_str("</section>\n");
    out
}

/// "What this means": the knee against the article's, why they may differ, the next
/// commands (each in `<code>`, with why).
fn meaning_html(m: &crate::report::meaning::Meaning) -> String {
    let mut out = format!(
        "<section id=\"meaning\" class=\"meaning\">\n<h2>{}</h2>\n<p>{}</p>\n<p>{}</p>\n",
        crate::report::meaning::TITLE,
        esc(&m.knee),
        esc(&m.differ)
    );
    if !m.next.is_empty() {
        out.push_str("<ul class=\"next\">\n");
        for n in &m.next {
            out.push_str(&format!(
                "<li><code>{}</code> {}</li>\n",
                esc(&n.command),
                esc(&n.why)
            ));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The experiment (what it does) and the article's finding beside it.
fn experiment_html(m: Option<&Manifest>) -> String {
    let Some(m) = m else {
        return String::new();
    };
    let e = &m.experiment;
    let mut out = String::from("<section id=\"experiment\">\n<h2>Experiment</h2>\n");
    out.push_str("<div class=\"pair\">\n");
    out.push_str(&format!(
        "<div><h3>{}</h3><p>{}</p></div>\n",
        esc(&e.id),
        esc(&e.description)
    ));
    out.push_str(&format!(
        "<div class=\"finding\"><h3>The article's finding</h3><p>{}</p>{}</div>\n",
        esc(&e.finding),
        e.reference
            .as_deref()
            .map(|x| format!("<p class=\"note\">{}</p>", esc(x)))
            .unwrap_or_default()
    ));
    out.push_str("</div>\n</section>\n");
    out
}

/// The report header's lines split in two: where the data came from (source, time, what was
/// not measured), shown with the versions, and the criteria, shown with the step table.
fn split_header(r: &Report) -> (Vec<String>, Vec<String>) {
    let mut lines = content::header(r).lines;
    // The injected banner has its own place at the top of the page.
    lines.retain(|l| !l.starts_with("INJECTED"));
    let at = lines
        .iter()
        .position(|l| l.starts_with("criteria"))
        .unwrap_or(lines.len());
    let criteria = lines.split_off(at);
    (lines, criteria)
}

fn plots_html(plots: &[(&str, Result<String, String>)]) -> String {
    let mut out = String::from("<section id=\"plots\">\n<h2>Plots</h2>\n");
    out.push_str("<p class=\"note narrow\">On a narrow screen the plots keep a readable size: swipe sideways to see the later steps.</p>\n");
    for (name, svg) in plots {
        match svg {
            Ok(s) => out.push_str(&format!(
                "<figure class=\"plot\" aria-label=\"{}\">\n{}\n</figure>\n",
                esc(name),
                s.trim()
            )),
            Err(e) => out.push_str(&format!(
                "<p class=\"note\">{}: not drawn ({})</p>\n",
                esc(name),
                esc(e)
            )),
        }
    }
    out.push_str("</section>\n");
    out
}

fn claims_html(claims: &[ClaimResult]) -> String {
    let mut out = String::from("<section id=\"claims\">\n<h2>Claims (perflab verify)</h2>\n");
    out.push_str(&format!(
        "<p>{}. Claims that compare with another experiment's run are n/a here; <code>perflab verify</code> checks them.</p>\n",
        crate::verify::render::tally(claims)
    ));
    let mut t = Table::new(["claim", "says", "verdict", "measured", "expected", "why"]);
    t.left = vec![0, 1, 2, 5];
    for c in claims {
        t.push(vec![
            c.claim.clone(),
            c.text.clone(),
            c.verdict.as_str().to_string(),
            c.measured.clone(),
            c.expected.clone(),
            c.reason.clone().unwrap_or_default(),
        ]);
    }
    let fails = |ri: usize, ci: usize| -> Option<String> {
        claims
            .get(ri)
            .filter(|c| ci == 2 && c.verdict == ClaimVerdict::Fail)
            .map(|_| String::new())
    };
    out.push_str(&table_html(&t, &fails).replacen("<table>", "<table class=\"wrap claims\">", 1));
    out.push_str("</section>\n");
    out
}

/// Caveats with host sharing and steal first (the ones that change how to read everything else).
pub(crate) fn caveats_in_order(r: &Report, m: Option<&Manifest>) -> Vec<String> {
    let mut v: Vec<String> = r.warnings.clone();
    for c in m.map(|m| m.caveats.as_slice()).unwrap_or_default() {
        if !v.contains(c) {
            v.push(c.clone());
        }
    }
    let host_first = |s: &String| {
        let l = s.to_lowercase();
        !(l.contains("steal") || l.contains("shar") || l.contains("host"))
    };
    v.sort_by_key(host_first);
    v
}

fn caveats_html(r: &Report, m: Option<&Manifest>) -> String {
    let v = caveats_in_order(r, m);
    if v.is_empty() {
        return String::new();
    }
    let mut out = String::from("<section id=\"caveats\">\n<h2>Caveats</h2>\n<ul>\n");
    for c in v {
        out.push_str(&format!("<li>{}</li>\n", esc(&c)));
    }
    out.push_str("</ul>\n</section>\n");
    out
}

/// A banner naming the work injected on purpose (`stack.<lab>.burn_us`); empty for a clean run.
pub(crate) fn injected_html(injected: &[String]) -> String {
    injected
        .iter()
        .map(|i| {
            format!(
                "<p class=\"injected\">INJECTED, not a clean run: {}</p>\n",
                esc(i)
            )
        })
        .collect()
}

/// The whole page, in the order a reader needs it: what ran and the verdict, the experiment
/// beside the article's finding, the steps and plots, the claims, then the evidence behind them.
pub fn render(r: &Report, x: &Extras) -> String {
    let (provenance, criteria) = split_header(r);
    let mut body = super::report_meta::context_html(x.manifest);
    body.push_str(&injected_html(&r.injected));
    body.push_str(&meaning_html(&crate::report::meaning::meaning(
        r, x.manifest,
    )));
    body.push_str(&verdict_html(r));
    body.push_str(&experiment_html(x.manifest));
    if let Some(b) = content::fit_block(r) {
        body.push_str(&block_html(&b, "fit", &no_marks));
    }
    body.push_str(&steps_html(r, &criteria));
    if let Some(b) = content::refine_block(r) {
        body.push_str(&block_html(&b, "refine", &no_marks));
    }
    if let Some(b) = content::omission_block(r) {
        body.push_str(&block_html(&b, "omission", &no_marks));
    }
    if let Some(b) = content::recovery_block(r) {
        body.push_str(&block_html(&b, "recovery", &no_marks));
    }
    if let Some(b) = content::actions_block(r) {
        body.push_str(&block_html(&b, "actions", &no_marks));
    }
    if let Some(b) = content::trigger_block(r) {
        body.push_str(&block_html(&b, "trigger", &no_marks));
    }
    if let Some(b) = content::classes_block(r) {
        body.push_str(&block_html(&b, "classes", &no_marks));
    }
    if let Some(b) = content::usl_block(r) {
        body.push_str(&block_html(&b, "usl", &no_marks));
    }
    body.push_str(&plots_html(&x.plots));
    if x.manifest.is_some() {
        body.push_str(&claims_html(&x.claims));
    }
    body.push_str(&block_html(
        &content::persec_block(r),
        "per-second",
        &no_marks,
    ));
    for (i, b) in content::checks_blocks(r).iter().enumerate() {
        body.push_str(&block_html(b, &format!("checks-{i}"), &no_marks));
    }
    for (i, b) in content::logs_block(r)
        .into_iter()
        .chain(content::access_block(r))
        .chain(content::workers_block(r))
        .enumerate()
    {
        body.push_str(&block_html(&b, &format!("logs-{i}"), &no_marks));
    }
    body.push_str(&caveats_html(r, x.manifest));
    body.push_str(&super::report_meta::versions_html(x.manifest, &provenance));
    if let Some(g) = crate::report::glossary::glossary_block(&content::blocks(r, x.manifest)) {
        body.push_str(&block_html(&g, "glossary", &no_marks));
    }
    let title = match x.manifest {
        Some(m) => format!("{} · {}", m.experiment_id, m.run_id),
        None => r.source.title.clone(),
    };
    let title = format!("perflab report: {title}");
    html_page::page(&title, &esc(&title), &body, None)
}
