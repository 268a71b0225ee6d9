//! `fit.twin`: a fitted run that takes its calibration from its twin's newest complete fitted
//! run (same suite, same CPU layout) instead of measuring its own, so the two run the same
//! fitted steps and their claims compare at the same rates (`diag-unix` against `diag-tcp`:
//! two calibrations of the same app box read 4.94 and 4.1 ms per request on one host and put
//! the twins' lowest steps at 54 and 65 rps).
use std::path::Path;

use anyhow::{Result, bail};

use crate::analyze::fit::FitRecord;
use crate::experiment::Experiment;
use crate::plan::layout::CpuLayout;
use crate::session::fit::Lent;
use crate::verify::load::{Want, scan};

/// The calibration `e`'s `fit.twin` lends, or `None` when `e` has no twin. No admissible run
/// of the twin is an error that says what to run first.
pub(crate) fn lent(
    out_root: &Path,
    e: &Experiment,
    suite: &str,
    layout: &CpuLayout,
) -> Result<Option<Lent>> {
    let Some(twin) = e.fit.as_ref().and_then(|f| f.twin.as_deref()) else {
        return Ok(None);
    };
    let mut admits = |m: &crate::rundir::Manifest| admissible(m, layout);
    let want = Want {
        suite: Some(suite),
        admits: &mut admits,
        limit: 1,
        together: false,
    };
    let (runs, _) = scan(out_root, twin, want);
    let Some(run) = runs.into_iter().next() else {
        bail!(
            "{} takes its calibration from {twin} (fit.twin), and {} holds no complete fitted \
             run of {twin} on suite {suite} with this CPU layout (app {}, database {}): run \
             `perflab run {twin} --fit` first (or both: `perflab run {twin} {} --fit`)",
            e.id,
            out_root.display(),
            layout.app,
            layout.db,
            e.id
        );
    };
    let label = run.label();
    let Some(fit) = run.manifest.measurements.fit else {
        bail!("{label}: no fit record");
    };
    Ok(Some(lend(label, fit)))
}

/// A run whose calibration may be lent: fitted by its own calibration, on the same app and
/// database CPUs.
fn admissible(m: &crate::rundir::Manifest, layout: &CpuLayout) -> bool {
    let own_fit = m
        .measurements
        .fit
        .as_ref()
        .is_some_and(|f| f.twin_run.is_none());
    own_fit && m.cpu_layout.app == layout.app && m.cpu_layout.db == layout.db
}

/// What a twin's fit record lends: its calibration and peak probe.
fn lend(run: String, f: FitRecord) -> Lent {
    Lent {
        run,
        calibration: f.calibration,
        peak: f.peak,
    }
}
