//! `perflab verify` and `perflab capacity`: their arguments; `run::missing` picks the recorded
//! rounds (running what `--run-missing` lacks), judges the claims and writes `verify all`'s
//! findings report, `verify::capacity_runs` reads capacity's rounds; here the table or JSON is
//! printed, and the verdict is the exit code.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::catalog::CatalogArg;
use crate::run::missing::{self, TopUp};
use crate::verify::{capacity_runs, render};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A run directory, an experiment or group id (its newest complete run), or `all`
    #[arg(default_value = "all")]
    pub target: String,
    /// Print `{"claims": [...]}` instead of the table
    #[arg(long)]
    pub json: bool,
    /// Run the experiments that have claims but no complete run (needs Docker), then verify
    #[arg(long)]
    pub run_missing: bool,
    /// With --run-missing: quarter-length holds (as `perflab run --quick`)
    #[arg(long, requires = "run_missing")]
    pub quick: bool,
    /// With --run-missing: start k6 at once instead of on a minute boundary
    #[arg(long, requires = "run_missing")]
    pub no_align: bool,
    /// Only runs made with this Debian suite's images
    #[arg(long, value_parser = super::catalog::suites(false))]
    pub suite: Option<String>,
    /// Root of the run directories [default: $PERFLAB_OUT, else ./out; for a run directory, its out root]
    #[arg(long, env = "PERFLAB_OUT")]
    pub out: Option<PathBuf>,
    /// Where `verify all` writes its findings report [default: <out>/verify/<UTC time>/]
    #[arg(long, value_name = "DIR")]
    pub findings_dir: Option<PathBuf>,
    /// With --run-missing: top up every experiment to N rounds of its configuration (claims on a knee or a max sustainable rate are judged on the median round)
    #[arg(long, requires = "run_missing", value_name = "N")]
    pub rounds: Option<u32>,
    /// Judge the experiments that have a `fit:` section on runs fitted to this host (`perflab run --fit`); with --run-missing, run them fitted
    #[arg(long)]
    pub fit: bool,
    /// With --run-missing, for a group with a `map:`: halve each row's gap between a trigger size it recovered from and one it stayed stuck at, a run at a time, to the map's resolution
    #[arg(long, requires = "run_missing")]
    pub refine: bool,
    /// List the quantities and functions claims can use, and exit
    #[arg(long)]
    pub quantities: bool,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(crate) fn verify(a: VerifyArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    if a.quantities {
        crate::output::emit(&render::quantities_help());
        return Ok(ExitCode::SUCCESS);
    }
    let cat = a.catalog.load()?;
    crate::run::map::check_refine(&cat, &a.target, a.refine)?;
    let ask = missing::Ask {
        target: &a.target,
        suite: a.suite.as_deref(),
        fit: a.fit,
        out: a.out.as_deref(),
        top_up: a.run_missing.then_some(TopUp {
            want: a.rounds.unwrap_or(1) as usize,
            quick: a.quick,
            no_align: a.no_align,
            quiet,
        }),
    };
    let judged = missing::findings(&cat, &ask)?;
    let report_in = (a.target == "all").then_some(a.findings_dir.as_deref());
    let code = missing::print(&judged, a.json, report_in, quiet)?;
    crate::run::map::after_verify(&cat, &ask, &judged.out_root, (a.refine, quiet))?;
    Ok(code)
}

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
    #[arg(long, value_parser = super::catalog::suites(false))]
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
    crate::output::emit(&capacity_runs::render(&c, a.json)?);
    Ok(ExitCode::SUCCESS)
}
