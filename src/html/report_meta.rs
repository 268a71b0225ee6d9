//! The run's context on `report.html`: the line under the title (experiment, round, time,
//! suite, CPUs), the host-sharing warning in the verdict, and the closing section (versions,
//! where the data came from, k6's own dashboard when it was saved, the resolved config).
use super::report_page::esc;
use super::table::{no_marks, table_html};
use crate::analyze::Report;
use crate::report::table::Table;
use crate::rundir::Manifest;
use crate::rundir::layout::K6_DIR;

/// "exp1 · round 1 · 2026-11-30 22:51 UTC · trixie · 2 CPUs (k6 0, db 0, app 1)": what ran,
/// when and on what, before anything else.
pub(crate) fn context_html(m: Option<&Manifest>) -> String {
    let Some(m) = m else {
        return String::new();
    };
    let mut parts = vec![
        esc(&m.experiment_id),
        format!("round {}", m.round),
        esc(&m.created.format("%Y-%m-%d %H:%M UTC").to_string()),
    ];
    if let Some(s) = &m.suite() {
        parts.push(esc(s));
    }
    let l = &m.cpu_layout;
    parts.push(format!(
        "{} CPUs (k6 {}, db {}, app {})",
        m.host.online_cpu_count,
        esc(&l.loadgen.to_list()),
        esc(&l.db.to_list()),
        esc(&l.app.to_list())
    ));
    if let Some(n) = m.measurements.generators.as_ref().filter(|g| g.count > 1) {
        parts.push(format!("{} load generators", n.count));
    }
    format!("<p class=\"ctx\">{}</p>\n", parts.join(" · "))
}

/// The host was not the lab's alone (other processes, hypervisor steal): said in the verdict,
/// since it changes how every number below reads.
pub(crate) fn host_warning_html(r: &Report) -> String {
    r.checks
        .host_share
        .as_ref()
        .map(crate::analyze::run::host_share_warnings)
        .unwrap_or_default()
        .iter()
        .map(|w| format!("<p class=\"warn\">⚠ {}</p>\n", esc(w)))
        .collect()
}

/// The pages k6's web dashboard exported (`--k6-dashboard`), as path segments below the run
/// directory (`k6`, the generator's folder, the file).
pub(crate) fn dashboard_files(m: &Manifest) -> Vec<Vec<String>> {
    let Some(g) = &m.measurements.generators else {
        return Vec::new();
    };
    let Some(file) = &g.k6_dashboard else {
        return Vec::new();
    };
    g.instances
        .iter()
        .map(|i| match i.out.as_deref() {
            Some(K6_DIR) | None => vec![K6_DIR.into(), file.clone()],
            Some(sub) => vec![K6_DIR.into(), sub.into(), file.clone()],
        })
        .collect()
}

/// The closing section: who made the run with what, where the data came from (`provenance`:
/// the report's source lines), k6's dashboard, the resolved experiment and the host.
pub(crate) fn versions_html(m: Option<&Manifest>, provenance: &[String]) -> String {
    let mut out = String::from("<section id=\"versions\">\n<h2>Versions and config</h2>\n");
    for l in provenance {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", esc(l)));
    }
    let Some(m) = m else {
        out.push_str("</section>\n");
        return out;
    };
    out.push_str(&format!(
        "<p>run {} (round {}), created {}; perflab {}</p>\n",
        esc(&m.run_id),
        m.round,
        esc(&m.created.format("%Y-%m-%d %H:%M:%SZ").to_string()),
        esc(&perflab_version(m))
    ));
    let dashboards = dashboard_files(m);
    if !dashboards.is_empty() {
        let links: Vec<String> = dashboards
            .iter()
            .map(|f| {
                format!(
                    "<a href=\"{}\">{}</a>",
                    esc(&super::report_page::href(f)),
                    esc(&f.join("/"))
                )
            })
            .collect();
        out.push_str(&format!(
            "<p>k6's own web dashboard (<code>--k6-dashboard</code>), beside this report: {}</p>\n",
            links.join(", ")
        ));
    }
    let mut t = Table::new(["component", "version"]);
    t.left = vec![0, 1];
    for (k, v) in &m.components {
        t.push(vec![k.clone(), v.clone()]);
    }
    out.push_str(&table_html(&t, &no_marks).replace("<table>", "<table class=\"wrap\">"));
    let config = serde_yaml::to_string(&m.experiment).unwrap_or_default();
    out.push_str(&format!(
        "<details><summary>Config: the resolved experiment{}</summary>\n<pre>{}</pre>\n</details>\n",
        if m.overrides.is_empty() {
            String::new()
        } else {
            esc(&format!(" (--set {})", m.overrides.join(" --set ")))
        },
        esc(&config)
    ));
    let host = serde_json::to_string_pretty(&(&m.host, &m.cpu_layout)).unwrap_or_default();
    out.push_str(&format!(
        "<details><summary>Host and CPU layout</summary>\n<pre>{}</pre>\n</details>\n",
        esc(&host)
    ));
    out.push_str("</section>\n");
    out
}

fn perflab_version(m: &Manifest) -> String {
    format!(
        "{}{}{}",
        m.perflab.version,
        m.perflab
            .git_commit
            .as_deref()
            .map(|c| format!(", commit {}", c.chars().take(12).collect::<String>()))
            .unwrap_or_default(),
        if m.perflab.git_dirty == Some(true) {
            ", uncommitted changes"
        } else {
            ""
        }
    )
}
