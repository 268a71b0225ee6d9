//! `load.pause:`: a freeze of the lab's app in the middle of the first step, and the closed
//! twin load that runs the same step after it (the coordinated-omission demo, `demo-pause`).
use super::diag::Diagnostic;
use super::schema::{Experiment, Script};
use std::path::Path;

/// `load.pause`'s checks: 0 < for_s < hold_s, 0 <= at_s <= hold_s - for_s, an open measured
/// load (the closed one is the twin), some VUs and a think time for the twin.
pub(crate) fn check_pause(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let Some(p) = &e.load.pause else { return };
    let err =
        |field: &str, msg: String| Diagnostic::error(file, format!("load.pause.{field}"), msg);
    let hold = f64::from(e.load.hold_s);
    if !(p.for_s > 0.0 && p.for_s < hold) {
        d.push(
            err(
                "for_s",
                format!(
                    "{} s: the pause P must be > 0 and shorter than the step D (hold_s = {} s)",
                    p.for_s, e.load.hold_s
                ),
            )
            .help("set for_s between 0 and hold_s, e.g. `for_s: 1.4` in a 30 s step"),
        );
    } else if !(p.at_s >= 0.0 && p.at_s + p.for_s <= hold) {
        d.push(
            err(
                "at_s",
                format!("{} s: the pause must start and end within the step (0 to hold_s - for_s = {} s)", p.at_s, hold - p.for_s),
            )
            .help("put it in the middle of the step: at_s = (hold_s - for_s) / 2"),
        );
    }
    if p.closed_vus == 0 || p.closed_vus > super::bounds::MAX_RATE {
        d.push(
            err(
                "closed_vus",
                format!("{}: must be 1 to {}", p.closed_vus, super::bounds::MAX_RATE),
            )
            .help("e.g. the demo server's workers"),
        );
    }
    if !(p.closed_think_time_s > 0.0 && p.closed_think_time_s.is_finite()) {
        d.push(err(
            "closed_think_time_s",
            format!("{}: must be > 0", p.closed_think_time_s),
        ));
    }
    if e.load.model != super::schema::Model::Open || e.load.script != Script::Stepped {
        d.push(
            Diagnostic::error(file, "load.model", "a pause needs the open model with `script: stepped` (its closed twin is run from `load.pause`)")
                .help("set `script: stepped` and `model: open`"),
        );
    }
}
