//! `perflab capacity`: its arguments and output; the rounds it reads and their checks are
//! `verify::capacity_runs`'s.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::verify::capacity_runs;

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
    let c = capacity_runs::capacity(&capacity_runs::Input {
        out: &a.out,
        experiment: &a.experiment,
        suite: a.suite.as_deref(),
        rounds: a.rounds,
        margin: a.margin,
        peak: a.peak,
    })?;
    if a.json {
        crate::out!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        crate::output::emit(&crate::verify::capacity::render_text(&c));
    }
    Ok(ExitCode::SUCCESS)
}
