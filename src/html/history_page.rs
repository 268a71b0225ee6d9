//! The history pages, `out/history/<experiment>.html` (`perflab history --pages`): per series
//! (suite × configuration) one SVG plot per figure, the points (hollow: left out of the
//! detection, slowed or host-limited), each change point a dashed line with its size, p-value
//! and the versions that changed, each version change a tick on the time axis; then the change
//! points and the flipped claims as tables. Self-contained: no script, no external resource;
//! every recorded string escaped. out/index.html links each page from its experiment.
use super::index::HISTORY_DIR;
use super::report_page::{esc, page};
use crate::history::{History, Series};
use std::path::{Path, PathBuf};

/// Write a page per experiment of `h` under `out_root/history/`, then rebuild out/index.html
/// (which links them). The paths written.
pub fn write(out_root: &Path, h: &History) -> anyhow::Result<Vec<PathBuf>> {
    let dir = out_root.join(HISTORY_DIR);
    if dir.is_symlink() {
        anyhow::bail!(
            "{}: a symlink; perflab writes its pages only into a real folder",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir)?;
    let mut exps: Vec<&str> = h.series.iter().map(|s| s.experiment.as_str()).collect();
    exps.dedup();
    let mut out = Vec::new();
    for exp in exps {
        if !crate::rundir::valid_run_name(exp) && !valid_id(exp) {
            continue;
        }
        let series: Vec<&Series> = h.series.iter().filter(|s| s.experiment == exp).collect();
        let path = dir.join(format!("{exp}.html"));
        crate::atomic::write_atomic(&path, render(exp, &series, h).as_bytes())?;
        out.push(path);
    }
    super::index::write(out_root)?;
    Ok(out)
}

/// An experiment folder's name that is safe as a file name.
fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// The page of one experiment.
pub(crate) fn render(exp: &str, series: &[&Series], h: &History) -> String {
    let mut body = format!(
        "<p class=\"note\">{} series of {} from {}; change points by E-divisive means (Apache Otava's, window {}, p {}). \
         Hollow points are left out of the detection (slowed or host-limited runs). \
         A dashed line is a change point; a tick under the axis is a change of versions. <a href=\"../index.html\">every run</a></p>\n",
        series.len(),
        esc(exp),
        esc(&h.out_root),
        h.options.window,
        h.options.max_pvalue
    );
    for s in series {
        body.push_str(&series_html(s, h.options.window));
    }
    page(
        &format!("perflab: history of {exp}"),
        &format!("history of {}", esc(exp)),
        &body,
        None,
    )
}

fn series_html(s: &Series, window: usize) -> String {
    let mut o = format!(
        "<section class=\"exp\">\n<h2>{} on {} <span class=\"note\">({}; {} points, {} judged)</span></h2>\n",
        esc(&s.experiment),
        esc(&s.suite),
        esc(&s.config),
        s.points.len(),
        s.judged
    );
    if s.too_short {
        o.push_str(&format!(
            "<p class=\"note\">too short to judge: {} judged points, the window is {window}</p>\n",
            s.judged
        ));
    }
    for m in &s.metrics {
        if m.values.iter().flatten().count() >= 1 {
            o.push_str(&format!(
                "<figure class=\"hist\">{}</figure>\n",
                plot(s, &m.name, &m.values)
            ));
        }
    }
    o.push_str(&changes_table(s));
    o.push_str("</section>\n");
    o
}

fn changes_table(s: &Series) -> String {
    let mut o = String::new();
    if !s.changes.is_empty() {
        o.push_str("<div class=\"scroll\"><table><thead><tr><th class=\"l\">figure</th><th class=\"l\">at</th><th class=\"r\">change</th><th class=\"r\">p</th><th class=\"l\">kind</th><th class=\"l\">what changed</th></tr></thead><tbody>\n");
        for c in &s.changes {
            let kind = match c.regression {
                Some(true) => "regression",
                Some(false) => "improvement",
                None => "",
            };
            o.push_str(&format!(
                "<tr><td>{}</td><td>{} ({})</td><td class=\"r\">{:+.1} %</td><td class=\"r\">{:.1e}</td><td>{kind}</td><td>{}</td></tr>\n",
                esc(&c.metric),
                esc(&c.run),
                c.created.format("%Y-%m-%d"),
                c.change_pct,
                c.pvalue,
                esc(&c.cause())
            ));
        }
        o.push_str("</tbody></table></div>\n");
    }
    for f in &s.flips {
        o.push_str(&format!(
            "<p>claim <b>{}</b> flipped: last pass {} ({}), first fail {} ({})</p>\n",
            esc(&f.claim),
            esc(&f.last_pass),
            f.last_pass_at.format("%Y-%m-%d"),
            esc(&f.first_fail),
            f.first_fail_at.format("%Y-%m-%d")
        ));
    }
    o
}

/// One figure over the series: a point per value (by position, the date under the ends),
/// change points and version changes marked.
fn plot(s: &Series, name: &str, values: &[Option<f64>]) -> String {
    let (w, h, l, b) = (640.0, 170.0, 52.0, 34.0);
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let lo = present.iter().copied().fold(f64::MAX, f64::min).min(0.0);
    let hi = present
        .iter()
        .copied()
        .fold(f64::MIN, f64::max)
        .max(lo + 1e-9)
        * 1.1;
    let n = values.len().max(2) as f64 - 1.0;
    let x = |i: usize| l + i as f64 / n * (w - l - 12.0);
    let y = |v: f64| h - b - (v - lo) / (hi - lo) * (h - b - 14.0);
    let d = |i: usize| {
        s.points
            .get(i)
            .map_or(String::new(), |p| p.created.format("%Y-%m-%d").to_string())
    };
    let mut svg = format!(
        "<svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{n_esc}\"><g font-size=\"10\" fill=\"currentColor\">\
         <line x1=\"{l}\" y1=\"{yb}\" x2=\"{xr}\" y2=\"{yb}\" stroke=\"currentColor\" stroke-opacity=\".4\"/>\
         <text x=\"4\" y=\"12\">{n_esc}</text><text x=\"{lt}\" y=\"{yt:.1}\" text-anchor=\"end\">{hi_t}</text>\
         <text x=\"{lt}\" y=\"{yb}\" text-anchor=\"end\">{lo_t}</text>\
         <text x=\"{l}\" y=\"{h}\" dy=\"-4\">{d0}</text><text x=\"{xr}\" y=\"{h}\" dy=\"-4\" text-anchor=\"end\">{d1}</text></g>\n",
        n_esc = esc(name),
        yb = h - b,
        xr = w - 12.0,
        lt = l - 4.0,
        yt = y(hi / 1.1) + 3.0,
        hi_t = short(hi / 1.1),
        lo_t = short(lo),
        d0 = esc(&d(0)),
        d1 = esc(&d(values.len().saturating_sub(1))),
    );
    for (i, p) in s.points.iter().enumerate().skip(1) {
        let diff =
            crate::history::points::components_diff(&s.points[i - 1].components, &p.components);
        if !diff.is_empty() {
            svg.push_str(&format!(
                "<line class=\"ver\" x1=\"{x:.1}\" y1=\"{y0}\" x2=\"{x:.1}\" y2=\"{y1}\" stroke=\"#9467bd\" stroke-width=\"2\"><title>{}</title></line>\n",
                esc(&diff.join(", ")),
                x = x(i),
                y0 = h - b,
                y1 = h - b + 8.0
            ));
        }
    }
    for c in s.changes.iter().filter(|c| c.metric == name) {
        svg.push_str(&format!(
            "<line class=\"cp\" x1=\"{x:.1}\" y1=\"10\" x2=\"{x:.1}\" y2=\"{yb}\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"><title>{}</title></line>\
             <text x=\"{tx:.1}\" y=\"22\" font-size=\"10\" fill=\"#d62728\">{:+.1} %</text>\n",
            esc(&format!("{} {:+.1} % at {} (p {:.1e}): {}", c.metric, c.change_pct, c.run, c.pvalue, c.cause())),
            c.change_pct,
            x = x(c.index) - 2.0,
            tx = x(c.index) + 2.0,
            yb = h - b
        ));
    }
    for (i, v) in values.iter().enumerate() {
        let (Some(v), Some(p)) = (v, s.points.get(i)) else {
            continue;
        };
        let fill = if p.flagged.is_some() {
            "none"
        } else {
            "#1f77b4"
        };
        let why = p
            .flagged
            .as_deref()
            .map(|f| format!(" ({f})"))
            .unwrap_or_default();
        svg.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{fill}\" stroke=\"#1f77b4\"><title>{}</title></circle>\n",
            x(i),
            y(*v),
            esc(&format!("{} {}: {} = {}{why}", p.run, p.created.format("%Y-%m-%d"), name, short(*v)))
        ));
    }
    svg.push_str("</svg>");
    svg
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}
