//! Renderers of a `Report`: report.txt, report.md (plots embedded), report.json, SVG plots
//! (report.html and out/index.html, which show the claims too, are `html`'s).
//! Files are written atomically (temp file + rename).
pub mod content;
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
    // The refinement's probes are in the manifest (their loads are under loads/), and so is
    // the work injected on purpose.
    if let Ok(m) = crate::rundir::read_manifest(dir) {
        r.refine = m.measurements.refine;
        r.fit = m.measurements.fit;
        r.injected = m.experiment.stack.injected();
        r.host_speed = m.measurements.host_speed;
        if let Some(s) = &r.host_speed {
            r.warnings.extend(s.caveats());
        }
    }
    // A missing or corrupt manifest costs the ceilings: said, never silent.
    for w in load::manifest_warnings(dir) {
        crate::say!("warning: {w}");
        r.warnings.push(w);
    }
    write_all(&r, dir)?;
    Ok(r)
}

/// Write report.txt, report.md, report.json and the SVG plots into `dir`.
pub fn write_all(r: &Report, dir: &Path) -> anyhow::Result<()> {
    let steps = plots::steps_svg(r).map_err(|e| anyhow::anyhow!("drawing {STEPS_SVG}: {e}"))?;
    let timeline =
        plots::timeline_svg(r).map_err(|e| anyhow::anyhow!("drawing {TIMELINE_SVG}: {e}"))?;
    write_atomic(&dir.join(STEPS_SVG), steps.as_bytes())?;
    write_atomic(&dir.join(TIMELINE_SVG), timeline.as_bytes())?;
    write_atomic(&dir.join("report.txt"), text::render(r).as_bytes())?;
    write_atomic(
        &dir.join("report.md"),
        markdown::render(r, &[STEPS_SVG, TIMELINE_SVG]).as_bytes(),
    )?;
    crate::rundir::write_report(dir, r)?;
    Ok(())
}
