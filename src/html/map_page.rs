//! A group's recovered/stuck map as report.html (issue 44): one row per configuration, one
//! column per trigger size (the sizes `--refine` added too), each cell the newest run's outcome
//! with its requests per arrival, linked to that run's report; each row's knife edge in words;
//! the configurations' `--set` pairs. Self-contained like report.html: inline CSS, no script.
use std::path::Path;

use super::report_page::{esc, page};
use crate::analyze::trigger::Outcome;
use crate::verify::map::{self, MapRead};

/// The cells' colours (the page's own: recovered green, stuck red, n/a grey).
const STYLE: &str = "<style>td.rec{background:#d7f0d7}td.stk{background:#f5cfcf}td.na{background:#e6e6e6}\
td.none{color:#888}td.m{text-align:center;white-space:nowrap}\
@media (prefers-color-scheme: dark){td.rec{background:#1f4d1f}td.stk{background:#5c2020}td.na{background:#3a3a3a}}</style>\n";

/// From the page (`maps/<group>/<UTC time>/report.html`) up to its group's folder.
pub(crate) const UP: &str = "../";

/// The page, written in a folder of `group_dir` (`<out>/maps/<group>/`): links to the cells'
/// runs under it (`runs/...`) are relative, others absolute.
pub(crate) fn render(m: &MapRead, group_dir: &Path) -> String {
    let mut sizes: Vec<f64> = m
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(|c| c.size))
        .collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let mut body = String::from(STYLE);
    body.push_str(&format!(
        "<section id=\"lead\">\n<p class=\"lead\">Whether <b>{}</b> recovered after its trigger, by <code>{}</code> (columns) and configuration (rows): goodput back at its level before the trigger within the stated time (recovered) or not (stuck). The number is requests per arrival at the step's end; a cell links to its run. Suite {}.</p>\n</section>\n",
        esc(&m.experiment),
        esc(&m.key),
        esc(&m.suite)
    ));
    body.push_str("<section id=\"map\">\n<h2>The map</h2>\n<div class=\"scroll\"><table>\n<tr><th class=\"l\">configuration</th>");
    for s in &sizes {
        body.push_str(&format!("<th class=\"r\">{}</th>", esc(&s.to_string())));
    }
    body.push_str("<th class=\"l\">edge</th></tr>\n");
    for r in &m.rows {
        body.push_str(&format!("<tr><td class=\"l\">{}</td>", esc(&r.name)));
        for s in &sizes {
            body.push_str(&cell(r.cells.iter().find(|c| c.size == *s), group_dir));
        }
        body.push_str(&format!(
            "<td class=\"l\">{}</td></tr>\n",
            esc(&map::edge_text(r, &m.key))
        ));
    }
    body.push_str("</table></div>\n<p class=\"note\">R recovered, S stuck, n/a no steady state before the trigger (no claim either way), blank: not run. Sizes in italics were added by <code>--refine</code>.</p>\n</section>\n");
    body.push_str("<section id=\"rows\">\n<h2>The configurations</h2>\n<ul>\n");
    for r in &m.rows {
        let set = match r.set.is_empty() {
            true => format!("{} as written", m.experiment),
            false => r.set.join(" "),
        };
        body.push_str(&format!(
            "<li><b>{}</b>: <code>{}</code></li>\n",
            esc(&r.name),
            esc(&set)
        ));
    }
    body.push_str("</ul>\n</section>\n");
    let title = format!("perflab map {}: recovered or stuck", m.group);
    page(&title, &esc(&title), &body, None)
}

fn cell(c: Option<&map::Cell>, group_dir: &Path) -> String {
    let Some(c) = c else {
        return "<td class=\"m none\"></td>".into();
    };
    let Some(run) = c.runs.first() else {
        return "<td class=\"m none\">.</td>".into();
    };
    let (class, mark) = match run.outcome {
        Outcome::Recovered => ("rec", "R"),
        Outcome::Stuck => ("stk", "S"),
        Outcome::NotApplicable => ("na", "n/a"),
    };
    let amp = run
        .amplification
        .map(|a| format!(" ×{a:.1}"))
        .unwrap_or_default();
    let more = match c.runs.len() {
        1 => String::new(),
        n => {
            let same = c.runs.iter().filter(|x| x.outcome == run.outcome).count();
            format!(" ({same} of {n})")
        }
    };
    let report = run.dir.join(crate::rundir::layout::REPORT_HTML);
    let href = match report.strip_prefix(group_dir) {
        Ok(rel) => format!("{UP}{}", rel.to_string_lossy()),
        Err(_) => report.to_string_lossy().into_owned(),
    };
    let text = format!("{mark}{amp}{more}");
    let text = match c.declared {
        true => esc(&text),
        false => format!("<i>{}</i>", esc(&text)),
    };
    let title = run.why_na.as_deref().unwrap_or("");
    format!(
        "<td class=\"m {class}\" title=\"{}\"><a href=\"{}\">{text}</a></td>",
        esc(title),
        esc(&href)
    )
}
