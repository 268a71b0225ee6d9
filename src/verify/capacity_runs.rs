//! The recorded rounds `perflab capacity` reads: the newest complete rounds of an experiment,
//! refused unless they are distinct rounds of one configuration (`verify::consistent`), into
//! the pure `verify::capacity`; every run directory left out is listed with why. Bad input
//! (exit 2): no runs, a wrong suite, fewer than 3 rounds, a peak that is not a rate.
use std::path::Path;

use super::capacity::{self, Capacity};
use super::load::{self, LoadedRun};
use crate::error::invalid;

/// What `perflab capacity` is asked.
pub(crate) struct Input<'a> {
    pub out: &'a Path,
    pub experiment: &'a str,
    pub suite: Option<&'a str>,
    pub rounds: usize,
    pub margin: f64,
    pub peak: Option<f64>,
}

/// `perflab capacity`'s output: the capacity as text, or as JSON.
pub(crate) fn render(c: &Capacity, json: bool) -> anyhow::Result<String> {
    Ok(if json {
        serde_json::to_string_pretty(c)? + "\n"
    } else {
        capacity::render_text(c)
    })
}

/// The capacity of `a.experiment` over its newest `a.rounds` complete rounds under `a.out`.
pub(crate) fn capacity(a: &Input) -> anyhow::Result<Capacity> {
    // the experiment first (the first real problem), then the flags
    let runs_dir = a.out.join(a.experiment);
    if !crate::experiment::validate::valid_id(a.experiment) || !runs_dir.is_dir() {
        return Err(invalid(format!(
            "{}: no runs of `{}` there; run `perflab run {} --rounds 3` first, or give --out DIR",
            runs_dir.display(),
            a.experiment,
            a.experiment
        )));
    }
    if let Some(s) = a.suite {
        s.parse::<crate::images::Suite>()?;
    }
    if a.rounds < 3 {
        return Err(invalid(format!(
            "--rounds {}: capacity needs at least 3 rounds (lab-spec §1)",
            a.rounds
        )));
    }
    if let Some(p) = a.peak
        && (p.is_nan() || p <= 0.0)
    {
        return Err(invalid(format!(
            "--peak {p}: give the peak rate in rps (> 0)"
        )));
    }
    let want = load::Want {
        suite: a.suite,
        admits: &mut |_| true,
        limit: a.rounds,
        together: false,
    };
    let (runs, skipped) = load::scan(a.out, a.experiment, want);
    let skipped: Vec<String> = skipped.iter().map(ToString::to_string).collect();
    let labels: Vec<String> = runs.iter().map(LoadedRun::label).collect();
    let input: Vec<(&str, _, _)> = runs
        .iter()
        .zip(&labels)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    // What was left out is said with the refusal too: it may be why too few rounds remain.
    let with_skipped = |e: String| {
        let list: String = skipped.iter().map(|s| format!("\nskipped {s}")).collect();
        invalid(format!("{e}{list}"))
    };
    if input.len() >= a.rounds {
        super::consistent::check(a.experiment, &input)
            .map_err(|e| {
                with_skipped(format!(
                    "capacity of {exp} over its newest {n} complete rounds: {e}\n\
                     remove copied run directories; for rounds of one configuration run `perflab run {exp} --rounds {n}` \
                     with the settings wanted (the newest rounds are used), or move the other runs out of {}",
                    a.out.join(a.experiment).display(),
                    exp = a.experiment,
                    n = a.rounds,
                ))
            })?;
    }
    let mut c = capacity::capacity(a.experiment, &input, a.rounds, a.margin, a.peak)
        .map_err(|e| with_skipped(e.to_string()))?;
    c.skipped = skipped;
    Ok(c)
}
