//! The matrix page (`perflab compare GROUP --a ... --b ... --html FILE`): the summary line,
//! both sides as declared, one row per experiment (a regressed verdict marked) with its name
//! linking to that experiment's compare page, and each row's why. Self-contained like
//! report.html: inline CSS, no script, no URL.
use super::report_page::{esc, page};
use super::table::table_html;
use crate::verify::compare::Verdict;
use crate::verify::matrix::{self, Matrix};

/// The page; `links[i]` is the href of row `i`'s compare page, when one was written.
pub(crate) fn render(m: &Matrix, links: &[Option<String>]) -> String {
    let mut body = format!(
        "<section id=\"verdict\" class=\"verdict\">\n<p class=\"lead\">{}</p>\n<p>A = {}<br>B = {}</p>\n</section>\n",
        esc(&m.summary.line),
        esc(&m.a),
        esc(&m.b)
    );
    let t = matrix::table(m);
    let verdict_col = t.headers.len() - 1;
    let regressed = |r: usize, c: usize| {
        (c == verdict_col && m.rows[r].verdict == Verdict::Regressed).then(String::new)
    };
    let mut html = table_html(&t, &regressed);
    // The table renderer escapes cells: put the links in after it, one per experiment name.
    for (row, href) in m.rows.iter().zip(links) {
        let Some(href) = href else { continue };
        let cell = format!("<td class=\"l\">{}</td>", esc(&row.experiment));
        let link = format!(
            "<td class=\"l\"><a href=\"{}\">{}</a></td>",
            esc(href),
            esc(&row.experiment)
        );
        html = html.replacen(&cell, &link, 1);
    }
    body.push_str("<section id=\"matrix\">\n<h2>Experiments</h2>\n");
    body.push_str(&html);
    body.push_str("</section>\n<section id=\"why\">\n<h2>Why</h2>\n");
    for r in &m.rows {
        body.push_str(&format!(
            "<p><b>{}</b> ({}): {}</p>\n",
            esc(&r.experiment),
            esc(r.verdict.as_str()),
            esc(&r.why)
        ));
    }
    body.push_str("</section>\n");
    let title = format!("perflab compare {}: B against A", m.target);
    page(&title, &esc(&title), &body, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::matrix::Row;

    fn row(id: &str, v: Verdict) -> Row {
        Row {
            experiment: id.into(),
            lab: "node".into(),
            rounds_a: 2,
            rounds_b: 2,
            verdict: v,
            why: format!("because <{id}>"),
            decided: true,
            rounds_needed: None,
            cpu_step: Some(50),
            cpu_ratio: Some(1.2),
            cpu_interval: None,
            max_sustainable_a: Some(125.0),
            max_sustainable_b: Some(100.0),
            max_sustainable_change_pct: Some(-20.0),
            claims_changed: Vec::new(),
            processes: Vec::new(),
            runs_a: Vec::new(),
            runs_b: Vec::new(),
            dirs_a: Vec::new(),
            dirs_b: Vec::new(),
            comparison: None,
            calibration: None,
        }
    }

    #[test]
    fn rows_link_their_compare_page_and_a_regression_is_marked() {
        let m = matrix::matrix(
            "all",
            "A (published, trixie)",
            "B (suite=forky)",
            vec![row("2a", Verdict::Regressed), row("exp1", Verdict::Same)],
            crate::verify::compare::Settings::default().family(2).1,
        );
        let page = render(&m, &[Some("cmp-2a.html".into()), None]);
        assert!(page.contains("<a href=\"cmp-2a.html\">2a</a>"), "{page}");
        assert!(page.contains("<td class=\"l\">exp1</td>"), "{page}");
        assert!(
            page.contains("<td class=\"l fail\">regressed</td>"),
            "{page}"
        );
        assert!(page.contains("<td class=\"l\">same</td>"), "{page}");
        assert!(page.contains("because &lt;2a&gt;"), "{page}");
        assert!(page.contains(&esc(&m.summary.line)), "{page}");
        assert!(!page.contains("http"), "no URL");
    }
}
