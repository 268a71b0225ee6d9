//! The pages people look at: `report.html` of a run (self-contained: inline CSS and SVG, no
//! script, with the run's claims from `verify`), `out/index.html` over every run and the compare
//! page of two runs or two sets of rounds. Above
//! `verify` in the pipeline, so the report floor stays below the claims.
pub mod compare_page;
pub mod index;
pub mod index_compare;
pub mod index_page;
pub mod report;
pub mod report_meta;
pub mod report_page;

use std::path::Path;

use crate::analyze::Report;
use crate::atomic::write_atomic;

/// `report::render_run_dir`, then the run's report.html beside the other reports.
pub fn render_run_dir(dir: &Path) -> anyhow::Result<Report> {
    let r = crate::report::render_run_dir(dir)?;
    let timeline = crate::report::plots::timeline_svg(&r);
    write_html(&r, dir, crate::report::plots::steps_svg(&r), timeline)?;
    Ok(r)
}

pub const REPORT_HTML: &str = "report.html";

/// Write `dir/report.html` from the report, the run's manifest (when `dir` is a run directory
/// with one: experiment, claims, versions, config) and the two plots.
pub fn write_html(
    r: &Report,
    dir: &Path,
    steps: Result<String, String>,
    timeline: Result<String, String>,
) -> anyhow::Result<()> {
    // `out/<exp>/latest` is a link: open the directory it names.
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let manifest = crate::rundir::RunDir::open(&real)
        .ok()
        // An unreadable manifest is a warning of the report (`report::load::manifest_warnings`).
        .and_then(|d| d.read_manifest().ok());
    let claims = manifest
        .as_ref()
        .map(|m| {
            let cat = crate::experiment::catalog::Catalog::load(
                &crate::experiment::catalog::default_dir(),
            )
            .ok();
            report::claims_of(
                r,
                m,
                &format!("{}/{}", m.experiment_id, m.run_id),
                cat.as_ref(),
            )
        })
        .unwrap_or_default();
    let extras = report::Extras {
        manifest: manifest.as_ref(),
        claims,
        plots: vec![
            (crate::report::STEPS_SVG, steps),
            (crate::report::TIMELINE_SVG, timeline),
        ],
    };
    Ok(write_atomic(
        &dir.join(REPORT_HTML),
        report::render(r, &extras).as_bytes(),
    )?)
}

/// `perflab report RUN --html`: report.html from the run's report.json (and manifest.json),
/// the plots redrawn from it. Returns the page's path.
pub fn rerender_html(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    let p = dir.join("report.json");
    let text = std::fs::read_to_string(&p).map_err(|e| {
        anyhow::Error::new(crate::error::InvalidInput(format!(
            "{}: {e} (no report yet: run `perflab report {}` to analyze the run)",
            p.display(),
            dir.display()
        )))
    })?;
    let r = crate::rundir::report::parse(&text).map_err(|e| {
        anyhow::Error::new(crate::error::InvalidInput(format!(
            "{}: {e:#} (re-analyze with `perflab report {}`)",
            p.display(),
            dir.display()
        )))
    })?;
    let timeline = if r.timeline.is_empty() {
        Err("report.json has no per-second timeline".to_string())
    } else {
        crate::report::plots::timeline_svg(&r)
    };
    write_html(&r, dir, crate::report::plots::steps_svg(&r), timeline)?;
    Ok(dir.join(REPORT_HTML))
}
