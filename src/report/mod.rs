//! Renderers of a `Report`: report.txt, report.md (plots embedded), report.json, SVG plots
//! (report.html and out/index.html, which show the claims too, are `html`'s).
//! Files are written atomically (temp file + rename).
pub(crate) mod catalog;
pub mod content;
pub mod glossary;
pub(crate) mod loose;
pub mod markdown;
pub mod meaning;
pub mod plots;
pub mod table;
pub mod text;

use crate::analyze::Report;
use anyhow::Context;
use std::path::Path;

use crate::rundir::inputs;
use crate::rundir::layout::{REPORT_MD, REPORT_TXT};
pub use crate::rundir::layout::{STEPS_SVG, TIMELINE_SVG};

/// Write `path` atomically: a temp file in the same directory, then rename.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> anyhow::Result<()> {
    crate::rundir::write_atomic(path, data).with_context(|| format!("writing {}", path.display()))
}

/// The JSON text of `report.json` (the full report; `steps`, `last_passing`, `knee` at top level).
pub fn json(r: &Report) -> String {
    crate::rundir::report::to_json(r)
}

/// Analyze a run directory and write its reports: what `perflab run` calls after measuring.
pub fn render_run_dir(dir: &Path) -> anyhow::Result<Report> {
    let r = analyse_run_dir(dir)?;
    let m = crate::rundir::read_manifest(dir).ok();
    write_all(&r, m.as_ref(), dir)?;
    Ok(r)
}

/// Analyze a run directory: its report, with what only the manifest knows (the refinement, the
/// fit, the injected work, the host's speed) and the warnings of a missing or corrupt manifest.
/// Nothing is written.
pub fn analyse_run_dir(dir: &Path) -> anyhow::Result<Report> {
    let inputs = inputs::run_dir(dir)?;
    let mut r = crate::analyze::analyze_run(inputs)
        .map_err(|e| crate::error::invalid(format!("{}: {e}", dir.display())))?;
    // The refinement's probes are in the manifest (their loads are under loads/), and so is
    // the work injected on purpose.
    if let Ok(m) = crate::rundir::read_manifest(dir) {
        r.refine = m.measurements.refine;
        r.omission = m.measurements.omission;
        // the measured load's trigger, judged over the run's seconds
        r.trigger = (m.measurements.triggers.first())
            .map(|t| crate::analyze::trigger::judge(t, &r.timeline));
        r.journeys = m.experiment.load.drop.is_some();
        if let Some(f) = &mut r.refine {
            f.fill_goodput(r.steps.iter().map(|s| (s.target, s.ok_per_s)));
        }
        r.fit = m.measurements.fit;
        r.injected = m.experiment.stack.injected();
        r.host_speed = m.measurements.host_speed;
        if let Some(s) = &r.host_speed {
            r.warnings.extend(s.caveats());
        }
    }
    // A missing or corrupt manifest costs the ceilings: said, never silent.
    for w in inputs::manifest_warnings(dir) {
        crate::say!("warning: {w}");
        r.warnings.push(w);
    }
    Ok(r)
}

/// report.txt, report.md, report.json and the SVG plots of `r`, rendered in memory (file name,
/// bytes): a failure here writes nothing. `m`: the run's manifest (see `text::render`).
pub(crate) fn rendered(
    r: &Report,
    m: Option<&crate::rundir::Manifest>,
) -> anyhow::Result<Vec<(&'static str, Vec<u8>)>> {
    let steps = plots::steps_svg(r).map_err(|e| anyhow::anyhow!("drawing {STEPS_SVG}: {e}"))?;
    let timeline =
        plots::timeline_svg(r).map_err(|e| anyhow::anyhow!("drawing {TIMELINE_SVG}: {e}"))?;
    Ok(vec![
        (STEPS_SVG, steps.into_bytes()),
        (TIMELINE_SVG, timeline.into_bytes()),
        (REPORT_TXT, text::render(r, m).into_bytes()),
        (
            REPORT_MD,
            markdown::render(r, m, &[STEPS_SVG, TIMELINE_SVG]).into_bytes(),
        ),
        (
            crate::rundir::REPORT_FILE,
            crate::rundir::report::to_json(r).into_bytes(),
        ),
    ])
}

/// Write rendered files into `dir`, each atomically.
pub(crate) fn write_files(dir: &Path, files: &[(&str, Vec<u8>)]) -> anyhow::Result<()> {
    for (name, bytes) in files {
        write_atomic(&dir.join(name), bytes)?;
    }
    Ok(())
}

/// Write report.txt, report.md, report.json and the SVG plots into `dir` (all rendered first).
pub(crate) fn write_all(
    r: &Report,
    m: Option<&crate::rundir::Manifest>,
    dir: &Path,
) -> anyhow::Result<()> {
    write_files(dir, &rendered(r, m)?)
}
