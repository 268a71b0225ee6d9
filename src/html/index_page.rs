//! The HTML of `out/index.html`: one table per experiment (rows of `IndexRow`), a knee (and
//! refined max sustainable rate) history plot per experiment coloured by suite, and a small inline filter script (text and suite,
//! also read from `#suite=...&q=...` on load); without JavaScript every run is listed.
use super::report_page::{PALETTE, esc, page};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// One run as the index shows it.
#[derive(Debug, Clone)]
pub(crate) struct IndexRow {
    pub experiment: String,
    /// The directory name, `20261130T035648Z-r1`.
    pub run: String,
    pub round: u32,
    pub created: DateTime<Utc>,
    pub suite: Option<String>,
    /// Short component versions (`php 8.4.27`, `postgres 17.12`, ...).
    pub versions: Vec<(String, String)>,
    /// `complete`, `failed`, `aborted`, `running`, or `unreadable` (no status.json).
    pub state: String,
    pub reason: Option<String>,
    /// The knee target and its unit; `None` with a report = no knee.
    pub knee: Option<(u32, String)>,
    pub has_report: bool,
    /// Claims by verdict (`verify::render::tally`), when the run has a report and a manifest.
    pub claims: Option<String>,
    /// Host caveats (sharing, steal, layout), from the manifest and the report.
    pub caveats: Vec<String>,
    /// The link to report.html from the out/ root (`html::href`), when present and the run's
    /// folders are linkable (`html::linkable_run`).
    pub href: Option<String>,
    /// The refined max sustainable rate (`perflab run --refine`), in the knee's unit.
    pub max_sustainable: Option<u32>,
    /// The compare page of this run's rounds against the previous rounds of the experiment,
    /// relative to the out/ root (`index_compare`).
    pub compare_href: Option<String>,
    /// That comparison's verdict in a few words ("regressed +12 %"), and why (its tooltip).
    pub compare_verdict: Option<(String, String)>,
    /// Provenance: the host that ran it (`host.hostname`) and, for its title, the CPU model,
    /// the speed reading and the matrix cell's scheduler job.
    pub host: Option<String>,
    pub host_title: Option<String>,
}

/// A cell's text for the knee column.
pub(crate) fn knee_text(r: &IndexRow) -> String {
    match (&r.knee, r.has_report) {
        (Some((k, u)), _) => format!("{k} {u}"),
        (None, true) => "no knee".into(),
        (None, false) => "-".into(),
    }
}

/// The row's searchable text (the filter matches it, lower-case).
pub(crate) fn search_text(r: &IndexRow) -> String {
    let mut s = format!(
        "{} {} {} {} {} {} {}",
        r.host.as_deref().unwrap_or(""),
        r.experiment,
        r.run,
        r.suite.as_deref().unwrap_or(""),
        r.state,
        knee_text(r),
        r.reason.as_deref().unwrap_or("")
    );
    for (k, v) in &r.versions {
        s.push_str(&format!(" {k} {v}"));
    }
    esc(&s.to_lowercase())
}

const SCRIPT: &str = r#"
(function(){
var q=document.getElementById('q'),s=document.getElementById('suite'),n=document.getElementById('shown');
document.getElementById('filters').hidden=false;
function apply(){
 var t=q.value.trim().toLowerCase(),su=s.value,shown=0;
 document.querySelectorAll('section.exp').forEach(function(sec){
  var any=false;
  sec.querySelectorAll('tbody tr').forEach(function(tr){
   var ok=(!su||tr.dataset.suite===su)&&(!t||tr.dataset.text.indexOf(t)>=0);
   tr.hidden=!ok;if(ok){any=true;shown++;}
  });
  sec.hidden=!any;
 });
 n.textContent=shown;
}
var p=new URLSearchParams((location.hash||'').replace(/^#/,'')||location.search);
if(p.get('suite'))s.value=p.get('suite');
if(p.get('q'))q.value=p.get('q');
q.addEventListener('input',apply);s.addEventListener('change',apply);
apply();
})();
"#;

/// Colour of a suite: its position among the suites present, in the plots' palette.
fn suite_colour(suites: &[String], s: Option<&str>) -> &'static str {
    s.and_then(|s| suites.iter().position(|x| x == s))
        .map_or("#7f7f7f", |i| PALETTE[i % PALETTE.len()])
}

/// The knee of each run over time, one dot per run with a knee, coloured by suite.
fn history_svg(rows: &[&IndexRow], suites: &[String]) -> Option<String> {
    let pts: Vec<(i64, u32, &IndexRow)> = rows
        .iter()
        .filter_map(|r| {
            r.knee
                .as_ref()
                .map(|(k, _)| (r.created.timestamp(), *k, *r))
        })
        .collect();
    // The refined max sustainable rate, when the run has one: a hollow square.
    let refined: Vec<(i64, u32, &IndexRow)> = rows
        .iter()
        .filter_map(|r| r.max_sustainable.map(|m| (r.created.timestamp(), m, *r)))
        .collect();
    if pts.len() + refined.len() < 2 {
        return None;
    }
    let all = || pts.iter().chain(&refined);
    let (w, h, l, b) = (600.0, 150.0, 44.0, 22.0);
    let t0 = all().map(|p| p.0).min()? as f64;
    let t1 = (all().map(|p| p.0).max()? as f64).max(t0 + 1.0);
    let kmax = all().map(|p| p.1).max()? as f64 * 1.15;
    let x = |t: i64| l + (t as f64 - t0) / (t1 - t0) * (w - l - 12.0);
    let y = |k: u32| h - b - k as f64 / kmax * (h - b - 10.0);
    let unit = all()
        .find_map(|p| p.2.knee.as_ref())
        .map_or("", |k| k.1.as_str());
    let mut svg = format!(
        "<svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"knee history\"><g font-size=\"10\" fill=\"currentColor\">\
         <line x1=\"{l}\" y1=\"{yb}\" x2=\"{xr}\" y2=\"{yb}\" stroke=\"currentColor\" stroke-opacity=\".4\"/>\
         <line x1=\"{l}\" y1=\"10\" x2=\"{l}\" y2=\"{yb}\" stroke=\"currentColor\" stroke-opacity=\".4\"/>\
         <text x=\"{lt}\" y=\"{ytop}\" text-anchor=\"end\">{kt:.0}</text><text x=\"{lt}\" y=\"{yb}\" text-anchor=\"end\">0</text>\
         <text x=\"4\" y=\"12\">knee {unit}</text><text x=\"{xm}\" y=\"{h}\" dy=\"-4\" text-anchor=\"middle\">● knee ◻ max sustainable</text>\
         <text x=\"{l}\" y=\"{h}\" dy=\"-4\">{d0}</text><text x=\"{xr}\" y=\"{h}\" dy=\"-4\" text-anchor=\"end\">{d1}</text></g>\n",
        yb = h - b,
        xr = w - 12.0,
        xm = (w + l) / 2.0,
        lt = l - 4.0,
        ytop = y((kmax / 1.15) as u32) + 3.0,
        kt = kmax / 1.15,
        unit = esc(unit),
        d0 = DateTime::from_timestamp(t0 as i64, 0)
            .map_or(String::new(), |d| d.format("%Y-%m-%d").to_string()),
        d1 = DateTime::from_timestamp(t1 as i64, 0)
            .map_or(String::new(), |d| d.format("%Y-%m-%d").to_string()),
    );
    for (i, name) in suites.iter().enumerate() {
        let lx = l + 60.0 + 80.0 * i as f64;
        svg.push_str(&format!(
            "<circle cx=\"{lx}\" cy=\"8\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"12\" font-size=\"10\" fill=\"currentColor\">{}</text>\n",
            suite_colour(suites, Some(name)),
            lx + 7.0,
            esc(name)
        ));
    }
    for (t, k, r) in &pts {
        svg.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{} {}: knee {k}</title></circle>\n",
            x(*t),
            y(*k),
            suite_colour(suites, r.suite.as_deref()),
            esc(&r.run),
            esc(r.suite.as_deref().unwrap_or("?"))
        ));
    }
    for (t, m, r) in &refined {
        svg.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"none\" stroke-width=\"1.5\" stroke=\"{}\"><title>{} {}: max sustainable {m}</title></rect>\n",
            x(*t) - 4.0,
            y(*m) - 4.0,
            suite_colour(suites, r.suite.as_deref()),
            esc(&r.run),
            esc(r.suite.as_deref().unwrap_or("?"))
        ));
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// A caveat's first clause (up to `:` or `;`, at most 60 characters): the full text is the title.
fn short(c: &str) -> String {
    let head = c.split([':', ';']).next().unwrap_or(c);
    if head.chars().count() > 60 {
        format!("{}…", head.chars().take(60).collect::<String>())
    } else {
        head.to_string()
    }
}

fn row_html(r: &IndexRow, suites: &[String]) -> String {
    let suite = r.suite.as_deref().unwrap_or("");
    let versions: Vec<String> = r.versions.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let claims = r.claims.as_deref().map_or("-".to_string(), esc);
    let caveats = match r.caveats.as_slice() {
        [] => String::new(),
        all => format!(
            "<span title=\"{}\">{}</span>{}",
            esc(&all.join("\n")),
            esc(&short(&all[0])),
            if all.len() > 1 {
                format!(" (+{})", all.len() - 1)
            } else {
                String::new()
            }
        ),
    };
    let run = match &r.href {
        Some(h) => format!("<a href=\"{}\">{}</a>", esc(h), esc(&r.run)),
        None => esc(&r.run),
    };
    let state = match &r.reason {
        Some(why) => format!("<span title=\"{}\">{}</span>", esc(why), esc(&r.state)),
        None => esc(&r.state),
    };
    format!(
        "<tr data-suite=\"{s}\" data-text=\"{text}\"><td class=\"l\">{run}</td><td class=\"l st {state_class}\">{state}</td>\
         <td class=\"r\">{knee}</td><td class=\"r\">{maxs}</td><td class=\"l\">{claims}</td><td class=\"r\">{round}</td>\
         <td class=\"l\">{date}</td><td class=\"l\"><span class=\"sw\" style=\"background:{col}\"></span>{s}</td>\
         <td class=\"l\" title=\"{host_title}\">{host}</td><td class=\"l ver\">{ver}</td><td class=\"l\">{compare}</td><td class=\"l cav\">{caveats}</td></tr>\n",
        s = esc(suite),
        text = search_text(r),
        round = r.round,
        date = r.created.format("%Y-%m-%d %H:%M"),
        col = suite_colour(suites, r.suite.as_deref()),
        ver = esc(&versions.join(", ")),
        host = esc(r.host.as_deref().unwrap_or("-")),
        host_title = esc(r.host_title.as_deref().unwrap_or("")),
        state_class = esc(&r.state),
        knee = esc(&knee_text(r)),
        maxs = r.max_sustainable.map_or("-".to_string(), |v| v.to_string()),
        compare = compare_cell(r),
    )
}

/// The compare cell: the batch's verdict against the previous batch, linking to the page.
fn compare_cell(r: &IndexRow) -> String {
    let Some(h) = r.compare_href.as_ref() else {
        return String::new();
    };
    let (text, why) = r
        .compare_verdict
        .clone()
        .unwrap_or_else(|| ("compare".to_string(), String::new()));
    let class = text.split(' ').next().unwrap_or("");
    format!(
        "<a class=\"cv cv-{}\" href=\"{}\" title=\"these rounds against the previous rounds: {}\">{}</a>",
        esc(class),
        esc(h),
        esc(&why),
        esc(&text)
    )
}

/// The whole index page over `rows` (any order; shown newest first within each experiment).
pub(crate) fn render(
    rows: &[IndexRow],
    generated: DateTime<Utc>,
    history: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut suites: Vec<String> = rows.iter().filter_map(|r| r.suite.clone()).collect();
    suites.sort();
    suites.dedup();
    let mut by_exp: BTreeMap<&str, Vec<&IndexRow>> = BTreeMap::new();
    for r in rows {
        by_exp.entry(r.experiment.as_str()).or_default().push(r);
    }
    let mut body = format!(
        "<p class=\"note\">{} runs of {} experiments, built {}. A run's name links to its self-contained {}; hover a caveat for its full text. \
         \"vs previous\" is the verdict of these rounds against the previous rounds of the experiment and suite \
         (B/A of the CPU per ok request, Student's t on the logs at 99 %: regressed, improved, same or inconclusive; hover for why, click for the page); \
         any two runs or sets of rounds: <code>perflab compare RUN-A[,RUN-A2...] RUN-B[,...] --html FILE</code>.</p>\n",
        rows.len(),
        by_exp.len(),
        generated.format("%Y-%m-%d %H:%M:%SZ"),
        super::REPORT_HTML,
    );
    body.push_str("<div class=\"filters\" id=\"filters\" hidden><label>filter <input id=\"q\" type=\"search\" placeholder=\"text: exp1, complete, php 8.4\"></label> <label>suite <select id=\"suite\"><option value=\"\">all</option>");
    for s in &suites {
        body.push_str(&format!("<option>{}</option>", esc(s)));
    }
    body.push_str(&format!(
        "</select></label> <span class=\"note\"><span id=\"shown\">{}</span> shown</span></div>\n",
        rows.len()
    ));
    for (exp, mut runs) in by_exp {
        runs.sort_by_key(|r| std::cmp::Reverse((r.created, r.run.clone())));
        body.push_str(&format!(
            "<section class=\"exp\" id=\"exp-{e}\">\n<h2>{e} <span class=\"note\">({} run{}){}</span></h2>\n",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            history(exp).map_or(String::new(), |h| format!(" <a href=\"{}\">history</a>", esc(&h))),
            e = esc(exp)
        ));
        if let Some(svg) = history_svg(&runs, &suites) {
            body.push_str(&format!("<figure class=\"hist\">{svg}</figure>\n"));
        }
        body.push_str("<div class=\"scroll\"><table>\n<thead><tr><th class=\"l\">run</th><th class=\"l\">status</th><th class=\"r\">knee</th><th class=\"r\" title=\"refined (perflab run --refine)\">max sustainable</th><th class=\"l\">claims</th><th class=\"r\">round</th><th class=\"l\">date (UTC)</th><th class=\"l\">suite</th><th class=\"l\" title=\"the machine that ran it (hover: CPU model, speed reading, scheduler job)\">host</th><th class=\"l\">versions</th><th class=\"l\">vs previous</th><th class=\"l\">host caveats</th></tr></thead>\n<tbody>\n");
        for r in &runs {
            body.push_str(&row_html(r, &suites));
        }
        body.push_str("</tbody></table></div>\n</section>\n");
    }
    page(
        "perflab: every run",
        "perflab: every run",
        &body,
        Some(SCRIPT),
    )
}
