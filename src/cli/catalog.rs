//! CLI commands for the catalog area: `list`, `show`, `validate`, the shared planning flags
//! (`--quick --set --cpus --force-cpus --no-align`) that `run` reuses, and hidden `lock-hold`.
use crate::experiment::check_files;
use crate::experiment::{self, Catalog, Lab};
use crate::plan::planning::Planning;
use crate::plan::{PlanOptions, Resolved};
use crate::report::catalog as list;
use crate::verify::quantities::Quantities;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Where the catalog is (shared by list/show/validate/run).
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct CatalogArg {
    /// Catalog directory [default: $PERFLAB_CATALOG, else ./experiments]
    #[arg(long, value_name = "DIR")]
    pub catalog: Option<PathBuf>,
}

impl CatalogArg {
    pub(crate) fn dir(&self) -> PathBuf {
        self.catalog
            .clone()
            .unwrap_or_else(experiment::catalog::default_dir)
    }

    /// Load the catalog; invalid files give exit code 2.
    pub(crate) fn load(&self) -> anyhow::Result<Catalog> {
        crate::run::resolve::catalog(&self.dir())
    }
}

/// Flags that shape a plan; `perflab run` flattens the same struct.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct PlanArgs {
    /// Scale hold/ramp/warm-up down to a quarter (CI); recorded in the plan
    #[arg(long)]
    pub quick: bool,
    /// Override a load or stack field (repeatable): --set hold_s=10 --set stack.php.max_children=40
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// CPU pinning, e.g. loadgen=0,db=1,app=2-3 [default: from the host's online CPUs]
    #[arg(long, value_name = "ROLE=CPUS,...")]
    pub cpus: Option<String>,
    /// Allow the app's CPUs to overlap the load generator's or the database's
    #[arg(long)]
    pub force_cpus: bool,
    /// Start k6 at once instead of putting the first step on a minute boundary
    #[arg(long)]
    pub no_align: bool,
}

impl PlanArgs {
    /// The flags as `run::resolve` takes them, read against `catalog`.
    pub(crate) fn planning(&self, catalog: &CatalogArg) -> Planning {
        Planning {
            quick: self.quick,
            set: self.set.clone(),
            cpus: self.cpus.clone(),
            force_cpus: self.force_cpus,
            no_align: self.no_align,
            catalog_dir: catalog.dir(),
        }
    }

    /// The experiments `id` (experiment or group) runs, with overrides applied and planned.
    pub fn resolve(&self, catalog: &Catalog, id: &str) -> anyhow::Result<Vec<Resolved>> {
        let opts = PlanOptions { quick: self.quick };
        crate::run::resolve::experiments(catalog, id, &self.set, opts)
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// JSON array on stdout (id, kind, lab, description, finding, members)
    #[arg(long)]
    pub json: bool,
    /// Markdown table on stdout (the catalog table of docs/catalog.md)
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// Only this lab's entries
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Lab::ALL.map(Lab::as_str)))]
    pub lab: Option<String>,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(crate) fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let cat = args.catalog.load()?;
    let mut out = crate::output::stdout();
    list::write(
        &mut out,
        &cat,
        args.lab.as_deref(),
        args.json,
        args.markdown,
    )?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Experiment or group id (see `perflab list`)
    pub id: String,
    /// JSON on stdout: experiment, plan, CPU layout, alignment
    #[arg(long)]
    pub json: bool,
    /// How `perflab run --fit` fits it to this host: calibration, rules, and a preview from the last fitted run under --out
    #[arg(long)]
    pub fit: bool,
    /// Where earlier runs are (for the `--fit` preview)
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: std::path::PathBuf,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(crate) fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let cat = args.catalog.load()?;
    let file = cat.lookup(&args.id)?;
    let resolved = args.plan.resolve(&cat, &args.id)?;
    let p = args.plan.planning(&args.catalog);
    let mut out = crate::output::stdout();
    let fit_from = args.fit.then_some(args.out.as_path());
    list::show(&mut out, file, &resolved, &p, args.json, fit_from)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files to check [default: the whole catalog]
    pub files: Vec<PathBuf>,
    /// Do not print warnings
    #[arg(long)]
    pub no_warnings: bool,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(crate) fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let checked = check_files::check(&args.catalog.dir(), &args.files, &Quantities)?;
    if !args.no_warnings {
        for w in &checked.warnings {
            crate::say!("{w}");
        }
    }
    crate::out!("{}", checked.summary(args.files.len()));
    Ok(ExitCode::SUCCESS)
}

/// Hidden debug command: hold the host lock (tests contention between real processes).
#[derive(Debug, Args)]
pub struct LockHoldArgs {
    /// Experiment name written into the holder file
    #[arg(long, default_value = "lock-hold")]
    pub experiment: String,
    /// Seconds to hold the lock once acquired
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Fail at once when another process holds the lock
    #[arg(long)]
    pub no_wait: bool,
    /// Seconds it says it will hold the lock (what `perflab status` shows as its expected end)
    #[arg(long, value_name = "S")]
    pub expected_s: Option<u64>,
}

pub(crate) fn lock_hold(args: LockHoldArgs) -> anyhow::Result<ExitCode> {
    let purpose = crate::lock::Purpose::new(&args.experiment, args.expected_s);
    crate::lock::hold_for(purpose, args.seconds, args.no_wait)?;
    Ok(ExitCode::SUCCESS)
}

/// The values `--suite` takes, from the one list of suites (`images::Suite::ALL`) with what each
/// ships, so help and shell completions list them and the parser refuses another, naming them.
pub(crate) use crate::images::suite_values as suites;
