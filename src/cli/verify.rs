//! `perflab verify`: its arguments; `verify::targets` picks the recorded rounds,
//! `run::missing` runs what `--run-missing` lacks, `verify::gather` judges the claims; here the
//! table or JSON is printed, `verify all` writes the findings report, and the verdict is the
//! exit code.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::catalog::CatalogArg;
use crate::run::missing::{self, TopUp};
use crate::verify::{gather, render};

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
    #[arg(long, value_parser = super::suite::values(false))]
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
    /// List the quantities and functions claims can use, and exit
    #[arg(long)]
    pub quantities: bool,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(super) fn check_suite(s: &Option<String>) -> anyhow::Result<()> {
    if let Some(s) = s {
        s.parse::<crate::images::Suite>()?;
    }
    Ok(())
}

pub(crate) fn verify(a: VerifyArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    if a.quantities {
        crate::output::emit(&render::quantities_help());
        return Ok(ExitCode::SUCCESS);
    }
    check_suite(&a.suite)?;
    let cat = a.catalog.load()?;
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
    let missing::Judged {
        findings: f,
        now,
        out_root,
        single_run,
    } = missing::findings(&cat, &ask)?;
    if a.json {
        crate::output::emit(&render::json(&f));
    } else {
        crate::output::emit(&render::text(&f.claims, &f.missing));
    }
    if !quiet {
        for s in &f.skipped {
            crate::say!("skipped {s}");
        }
    }
    if a.target == "all" && !single_run {
        // out/verify/ is a real directory, never a link out of the out/ root
        let parent = match &a.findings_dir {
            Some(d) => d.clone(),
            None => crate::atomic::create_dirs_under(&out_root, &["verify"])?,
        };
        let dir = gather::write_findings(&parent, now, &f)?;
        if !quiet {
            crate::say!("findings report: {}", dir.display());
        }
    }
    Ok(if f.all_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::error::EXIT_FAILURE)
    })
}
