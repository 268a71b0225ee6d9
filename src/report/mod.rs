//! Renderers of a `Report`: report.txt, report.md (plots embedded), report.json, SVG plots,
//! report.html (self-contained); `index` builds out/index.html over every run.
//! Files are written atomically (temp file + rename).
pub mod content;
pub mod html;
pub mod html_page;
pub mod index;
pub mod index_page;
pub mod load;
pub mod markdown;
pub mod plots;
pub mod table;
pub mod text;

use crate::analyze::Report;
use anyhow::Context;
use std::path::Path;

pub const STEPS_SVG: &str = "plot-steps.svg";
pub const TIMELINE_SVG: &str = "plot-timeline.svg";

/// Write `path` atomically: a temp file in the same directory, then rename.
pub fn write_atomic(path: &Path, data: &[u8]) -> anyhow::Result<()> {
    crate::rundir::write_atomic(path, data).with_context(|| format!("writing {}", path.display()))
}

/// The JSON text of `report.json` (the full report; `steps`, `last_passing`, `knee` at top level).
pub fn json(r: &Report) -> String {
    crate::rundir::report::to_json(r)
}

/// Analyze a run directory and write its reports: what `perflab run` calls after measuring.
pub fn render_run_dir(dir: &Path) -> anyhow::Result<Report> {
    let inputs = load::run_dir(dir)?;
    let mut r = crate::analyze::analyze_run(inputs).map_err(|e| {
        anyhow::Error::new(crate::error::InvalidInput(format!(
            "{}: {e}",
            dir.display()
        )))
    })?;
    // The refinement's probes are in the manifest (their loads are under loads/).
    if dir.join(crate::rundir::MANIFEST_FILE).exists() {
        r.refine = crate::rundir::read_manifest(dir)?.measurements.refine;
    }
    write_all(&r, dir)?;
    Ok(r)
}

/// Write report.txt, report.md, report.json, the SVG plots and report.html into `dir`.
pub fn write_all(r: &Report, dir: &Path) -> anyhow::Result<()> {
    let steps = plots::steps_svg(r).map_err(|e| anyhow::anyhow!("drawing {STEPS_SVG}: {e}"))?;
    let timeline =
        plots::timeline_svg(r).map_err(|e| anyhow::anyhow!("drawing {TIMELINE_SVG}: {e}"))?;
    write_atomic(&dir.join(STEPS_SVG), steps.as_bytes())?;
    write_atomic(&dir.join(TIMELINE_SVG), timeline.as_bytes())?;
    write_html(r, dir, Ok(steps), Ok(timeline))?;
    write_atomic(&dir.join("report.txt"), text::render(r).as_bytes())?;
    write_atomic(
        &dir.join("report.md"),
        markdown::render(r, &[STEPS_SVG, TIMELINE_SVG]).as_bytes(),
    )?;
    crate::rundir::write_report(dir, r)?;
    Ok(())
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
        .filter(|d| d.file(crate::rundir::MANIFEST_FILE).exists())
        .map(|d| d.read_manifest())
        .transpose()?;
    let claims = manifest
        .as_ref()
        .map(|m| {
            let cat = crate::experiment::catalog::Catalog::load(
                &crate::experiment::catalog::default_dir(),
            )
            .ok();
            html::claims_of(
                r,
                m,
                &format!("{}/{}", m.experiment_id, m.run_id),
                cat.as_ref(),
            )
        })
        .unwrap_or_default();
    let extras = html::Extras {
        manifest: manifest.as_ref(),
        claims,
        plots: vec![(STEPS_SVG, steps), (TIMELINE_SVG, timeline)],
    };
    write_atomic(&dir.join(REPORT_HTML), html::render(r, &extras).as_bytes())
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
    let r = crate::verify::load::parse_report(&text).map_err(|e| {
        anyhow::Error::new(crate::error::InvalidInput(format!(
            "{}: line {}, column {}: {e} (re-analyze with `perflab report {}`)",
            p.display(),
            e.line(),
            e.column(),
            dir.display()
        )))
    })?;
    let timeline = if r.timeline.is_empty() {
        Err("report.json has no per-second timeline".to_string())
    } else {
        plots::timeline_svg(&r)
    };
    write_html(&r, dir, plots::steps_svg(&r), timeline)?;
    Ok(dir.join(REPORT_HTML))
}
