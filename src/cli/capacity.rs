//! `perflab capacity`: the newest complete rounds of an experiment, refused unless they are
//! distinct rounds of one configuration (`verify::consistent`), into the pure
//! `verify::capacity`; every run directory left out is listed with why.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::verify::check_suite;
use crate::error::invalid;
use crate::verify::capacity;
use crate::verify::load::{self, LoadedRun};

#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// Experiment id
    pub experiment: String,
    /// Share of the max sustainable rate to plan with (lab-spec: 0.6-0.8)
    #[arg(long, default_value_t = 0.7)]
    pub margin: f64,
    /// Peak rate to plan for (rps): prints the nodes and the database checks
    #[arg(long)]
    pub peak: Option<f64>,
    /// Newest complete rounds to use (at least 3)
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Only runs made with this Debian suite's images
    #[arg(long, value_parser = super::suite::values(false))]
    pub suite: Option<String>,
    #[arg(long, env = "PERFLAB_OUT", default_value = "out")]
    pub out: PathBuf,
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn capacity(a: CapacityArgs) -> anyhow::Result<ExitCode> {
    // the experiment first (the first real problem), then the flags
    let runs_dir = a.out.join(&a.experiment);
    if !crate::experiment::validate::valid_id(&a.experiment) || !runs_dir.is_dir() {
        return Err(invalid(format!(
            "{}: no runs of `{}` there; run `perflab run {} --rounds 3` first, or give --out DIR",
            runs_dir.display(),
            a.experiment,
            a.experiment
        )));
    }
    check_suite(&a.suite)?;
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
        suite: a.suite.as_deref(),
        admits: &mut |_| true,
        limit: a.rounds,
    };
    let (runs, skipped) = load::scan(&a.out, &a.experiment, want);
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
        crate::verify::consistent::check(&a.experiment, &input)
            .map_err(|e| {
                with_skipped(format!(
                    "capacity of {exp} over its newest {n} complete rounds: {e}\n\
                     remove copied run directories; for rounds of one configuration run `perflab run {exp} --rounds {n}` \
                     with the settings wanted (the newest rounds are used), or move the other runs out of {}",
                    a.out.join(&a.experiment).display(),
                    exp = a.experiment,
                    n = a.rounds,
                ))
            })?;
    }
    let mut c = capacity::capacity(&a.experiment, &input, a.rounds, a.margin, a.peak)
        .map_err(|e| with_skipped(e.to_string()))?;
    c.skipped = skipped;
    if a.json {
        crate::out!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        crate::output::emit(&capacity::render_text(&c));
    }
    Ok(ExitCode::SUCCESS)
}
