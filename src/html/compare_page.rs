//! The compare page (`perflab compare A B --html FILE`, and the index's "compare" links): the
//! verdict and why first, the work injected on purpose, both sides' rounds linked to their
//! report.html, the two signals, the first rounds' steps side by side, and the versions and
//! config that differ. Self-contained like report.html: inline CSS, no script, no URL.
use std::path::{Component, Path, PathBuf};

use super::report::{block_html, injected_html};
use super::report_page::{esc, page};
use super::table::{no_marks, table_html};
use crate::report::table::{Block, Table};
use crate::verify::compare::render::{
    capacity_line, cpu_line, decided_line, latency_line, round_header, round_rows, rule_line,
};
use crate::verify::compare::{Diff, Rounds, RoundsComparison, Verdict, pair, rounds};

/// `to` relative to the directory `from` (both made absolute first), as path segments: `..`
/// to climb, then the names down to `to` (for `html::href`).
pub(crate) fn relative(from: &Path, to: &Path) -> Vec<String> {
    let abs = |p: &Path| -> PathBuf {
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if p.is_absolute() {
            p
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        }
    };
    let (from, to) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts
}

/// The link from the page's directory `here` to a run's report.html, when the run's folders
/// are linkable (`html::linkable_run`); otherwise the run is listed as text.
fn report_link(here: &Path, dir: &Path) -> Option<String> {
    let name = |p: Option<&Path>| -> Option<String> { Some(p?.file_name()?.to_str()?.to_string()) };
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (exp, run) = (name(real.parent())?, name(Some(&real))?);
    super::linkable_run(&exp, &run)
        .then(|| super::href(relative(here, &dir.join(super::REPORT_HTML))))
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Regressed => "v-regressed",
        Verdict::Improved => "v-improved",
        Verdict::Same => "v-same",
        Verdict::Inconclusive => "v-inconclusive",
    }
}

/// Both sides' rounds, each run's name a link to its report.html (when it has one).
fn rounds_html(c: &RoundsComparison, links: [&[Option<String>]; 2]) -> String {
    let cpu_head = rounds::cpu_head(&c.cpu.steps);
    let mut out = String::from("<section id=\"rounds\">\n<h2>Rounds</h2>\n");
    let mut t = Table::new(round_header(&cpu_head));
    t.left = vec![0, 1];
    let sides: [(&str, &Rounds); 2] = [("A", &c.rounds_a), ("B", &c.rounds_b)];
    let mut hrefs = Vec::new();
    for ((name, r), l) in sides.into_iter().zip(links) {
        for row in round_rows(name, r) {
            t.push(row);
        }
        hrefs.extend(l.iter().cloned());
    }
    // The table renderer escapes cells: put the links in after it, one per run name.
    let mut html = table_html(&t, &no_marks);
    for (row, href) in t.rows.iter().zip(&hrefs) {
        let Some(href) = href else { continue };
        let cell = format!("<td class=\"l\">{}</td>", esc(&row[1]));
        let link = format!(
            "<td class=\"l\"><a href=\"{}\">{}</a></td>",
            esc(href),
            esc(&row[1])
        );
        html = html.replacen(&cell, &link, 1);
    }
    out.push_str(&html);
    out.push_str("</section>\n");
    out
}

fn diffs_html(title: &str, id: &str, list: &[Diff]) -> String {
    let mut b = Block::new(title);
    if list.is_empty() {
        b.lines.push("identical".into());
    } else {
        let mut t = Table::new(["key", "A", "B"]);
        t.left = vec![0, 1, 2];
        for d in list {
            let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(absent)".into());
            t.push(vec![d.key.clone(), v(&d.a), v(&d.b)]);
        }
        b.table = Some(t);
    }
    block_html(&b, id, &no_marks)
}

/// The page. `dirs_a` / `dirs_b` are the rounds' run directories (for the links), `file` is
/// where the page will be written (links are relative to its directory).
pub(crate) fn render(
    c: &RoundsComparison,
    dirs_a: &[PathBuf],
    dirs_b: &[PathBuf],
    file: &Path,
) -> String {
    let here = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let links = |dirs: &[PathBuf]| -> Vec<Option<String>> {
        dirs.iter().map(|d| report_link(here, d)).collect()
    };
    let (la, lb) = (links(dirs_a), links(dirs_b));
    let unit = c.first.unit.as_str();
    let mut body = format!(
        "<section id=\"verdict\" class=\"verdict {}\">\n<p class=\"lead\">Verdict: {}</p>\n<p>{}</p>\n</section>\n",
        verdict_class(c.verdict),
        esc(&c.verdict.as_str().to_uppercase()),
        esc(&c.why)
    );
    for (name, r) in [("A", &c.rounds_a), ("B", &c.rounds_b)] {
        let lines: Vec<String> = r
            .injected
            .iter()
            .map(|i| format!("in {name}: {i}"))
            .collect();
        body.push_str(&injected_html(&lines));
    }
    let mut signals = Block::new("Signals");
    signals.lines = vec![
        cpu_line(&c.cpu, unit, &c.rounds_a, &c.rounds_b),
        latency_line(&c.latency, unit, (&c.rounds_a, &c.rounds_b)),
        capacity_line(&c.capacity, unit, &c.rounds_a, &c.rounds_b),
        c.host_speed.line(),
    ];
    if !c.moved.is_empty() {
        signals
            .lines
            .insert(0, format!("moved: {}", c.moved.join(", ")));
    }
    signals.lines.push(c.steal.line());
    signals.lines.push(decided_line(c));
    signals.notes.push(format!(
        "Rule: B/A of the rounds' CPU per ok request over the steps every round passed (their \
         geometric mean; the lowest step measured in every round when they share fewer than \
         two), and of their latency of ok requests ({}), each with an interval from Student's t on the logs; {}; a regression \
         whose max sustainable rate rose, or on a host more than 15 % slower (host speed probe) \
         or with more steal beyond the rounds' noise, is inconclusive (docs/regression.md).",
        if crate::verify::compare::latency::over_passing_steps(&c.latency) {
            "loaded together: the p95 over the steps every round passed"
        } else {
            "the median at the busiest step every round passed"
        },
        rule_line(c).trim_start_matches("rule: ")
    ));
    body.push_str(&block_html(&signals, "signals", &no_marks));
    body.push_str(&super::compare_plot::rounds_plot(c, unit));
    body.push_str(&rounds_html(c, [&la, &lb]));
    let mut steps = Block::new("Steps of the first rounds, side by side");
    steps.lines = vec![format!("A: {}", c.first.a), format!("B: {}", c.first.b)];
    steps.table = Some(pair::steps_table(&c.first));
    body.push_str(&block_html(&steps, "steps", &no_marks));
    body.push_str(&diffs_html(
        "Versions that differ",
        "versions",
        &c.first.versions,
    ));
    body.push_str(&diffs_html(
        "Config that differs",
        "config",
        &c.first.config,
    ));
    let title = format!("perflab compare: {} vs {}", c.first.a, c.first.b);
    page(&title, &esc(&title), &body, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_then_descend() {
        let r = relative(
            Path::new("/o/compare/2a"),
            Path::new("/o/2a/r1/report.html"),
        );
        assert_eq!(r, ["..", "..", "2a", "r1", "report.html"]);
        assert_eq!(
            relative(Path::new("/o"), Path::new("/o/x.html")),
            ["x.html"]
        );
        let odd = relative(Path::new("/o/c"), Path::new("/o/javascript:x#?/r.html"));
        assert_eq!(super::super::href(odd), "./../javascript%3Ax%23%3F/r.html");
    }
}
