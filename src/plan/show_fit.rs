//! `perflab show EXP --fit`: the fitting an experiment would get before anything runs — its
//! calibration load, each rule with the published value and why, the quantities the rules read,
//! and, when an earlier fitted run of it exists under `--out`, the fitted values those
//! measured quantities give now (a preview; the run calibrates again).
use std::io::Write;

use crate::claim::fmt_num;
use crate::experiment::Experiment;
use crate::experiment::fit::FitQ;
use crate::plan::fit::{self, Quantities};

fn quantity_lines(out: &mut impl Write, q: &Quantities) -> std::io::Result<()> {
    for f in FitQ::ALL {
        if let Some(v) = q.get(f.name()) {
            let (name, meaning) = (f.name(), f.help());
            writeln!(out, "    {name:<16} {:>10}  {meaning}", fmt_num(*v))?;
        }
    }
    Ok(())
}

/// Write the fitting of `e` (which has a `fit:` section), with a preview from `last`: the
/// latest fitted run's name and the quantities it measured.
pub(crate) fn render(
    out: &mut impl Write,
    e: &Experiment,
    last: Option<(&str, &Quantities)>,
) -> std::io::Result<()> {
    let Some(f) = &e.fit else {
        writeln!(
            out,
            "{}: no `fit:` section (its claims do not depend on the host's size): run it without `--fit`; in a group run with `--fit`, it runs as published",
            e.id
        )?;
        return Ok(());
    };
    writeln!(out, "fit       {} (perflab run {} --fit)", e.id, e.id)?;
    if let Some(t) = &f.twin {
        writeln!(
            out,
            "calibrate none here: the calibration and peak probe of {t}'s newest complete fitted run (fit.twin; run `perflab run {t} --fit` first), so both run the same steps"
        )?;
    } else {
        calibration_lines(out, f)?;
    }
    let tree = serde_yaml::to_value(e).unwrap_or_default();
    for r in &f.rules {
        let published = fit::field(&tree, &r.set)
            .and_then(|v| serde_json::to_string(v).ok())
            .unwrap_or_else(|| "?".into());
        writeln!(out, "rule      {} = {}", r.set, r.to)?;
        writeln!(out, "          published {published}")?;
        writeln!(out, "          why: {}", r.why)?;
    }
    let Some((run, quantities)) = last else {
        writeln!(
            out,
            "preview   no earlier fitted run of {} under --out: the numbers come from the run's own calibration",
            e.id
        )?;
        return Ok(());
    };
    writeln!(out, "preview   with the quantities measured by {run}:")?;
    quantity_lines(out, quantities)?;
    match fit::apply(e, f, quantities) {
        Ok((_, rules)) => {
            for r in rules {
                writeln!(out, "    {} {} -> {}", r.set, r.article, r.fitted)?;
            }
        }
        Err(m) => writeln!(out, "    the rules do not apply to those numbers: {m}")?,
    }
    Ok(())
}

/// The calibration loads `f` runs: the screening one, the working point, the peak probe.
fn calibration_lines(out: &mut impl Write, f: &crate::experiment::fit::Fit) -> std::io::Result<()> {
    writeln!(
        out,
        "calibrate open load at {} rps for {} s on the warm stack, before the steps (loads/calibration/)",
        f.calibrate.rate, f.calibrate.hold_s
    )?;
    writeln!(
        out,
        "          then at half the lowest ceiling it screens, when well above it (loads/working-point/)"
    )?;
    if let Some(peak) = &f.calibrate.peak {
        writeln!(
            out,
            "peak      open load at `{peak}` requests/s for {} s with the published VUs, after the calibration (loads/peak/): peak_* quantities",
            f.calibrate.hold_s
        )?;
    }
    Ok(())
}
