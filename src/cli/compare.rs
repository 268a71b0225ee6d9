//! `perflab compare`'s arguments; the comparison of recorded runs (`compare RUN_A RUN_B`, each
//! side one run or several comma-separated rounds: `run::recorded`) printed as text or
//! `--json`, and its exit code; `compare TARGET --a .. --b ..`'s flags to the typed options of
//! `run::target`, which runs and judges the two configurations.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::catalog::{CatalogArg, PlanArgs};
use crate::error::invalid;
use crate::run::recorded;
use crate::run::target::{self, TargetCompare};
use crate::verify::compare;

#[derive(Debug, Args)]
#[command(after_help = compare::HELP)]
pub struct CompareArgs {
    /// Side A: a run directory, an experiment id (its newest complete run), or several run
    /// directories separated by commas (rounds)
    pub run_a: String,
    /// Side B, as side A. Omitted: RUN_A is an experiment or group (php, node, all, ...) whose
    /// two configurations --a and --b declare; their rounds run alternately until decided
    pub run_b: Option<String>,
    /// Chance of no false `regressed` or `improved` over the whole plan of rounds (0.8-0.999)
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Smallest change in % that counts as regressed or improved
    #[arg(long, value_name = "PCT", default_value_t = 3.0)]
    pub min_effect: f64,
    /// `same` when the whole interval lies within +-PCT %
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub margin: f64,
    /// The plan the boundary accounts for: a look after every pair, up to N rounds a side
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_rounds: usize,
    /// Print the verdict, both sides' rounds and signals, and the differences as JSON
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as a self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[arg(long, env = "PERFLAB_OUT", default_value = "out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub exp: ExpArgs,
}

impl CompareArgs {
    /// The verdict's settings from the flags (checked where they are used).
    fn settings(&self) -> compare::Settings {
        compare::Settings {
            confidence: self.confidence,
            min_effect_pct: self.min_effect,
            margin_pct: self.margin,
            max_rounds: self.max_rounds,
        }
    }
}

/// The flags of `compare TARGET --a ... --b ...` (flattened into `compare`'s).
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct ExpArgs {
    /// With one TARGET: side A's difference from the experiment as published (repeatable):
    /// suite=forky, or any --set key such as stack.node.burn_us=1000 [default: as published, trixie]
    #[arg(long = "a", value_name = "KEY=VALUE")]
    pub a: Vec<String>,
    /// Side B's difference, as --a
    #[arg(long = "b", value_name = "KEY=VALUE")]
    pub b: Vec<String>,
    /// Go on with the newest batch of this comparison (its id and round numbers), e.g. after
    /// Ctrl-C; the complete rounds of both configurations under --out count either way
    #[arg(long)]
    pub resume: bool,
    /// Run nothing: judge the newest comparison batch of both configurations under --out (with
    /// --reuse: every complete round of them)
    #[arg(long)]
    pub no_run: bool,
    /// Let recorded rounds of the two configurations join (earlier batches and plain runs, the
    /// newest --max-rounds a side, of one image build a side); without it a comparison counts
    /// only its own batch's rounds
    #[arg(long)]
    pub reuse: bool,
    /// Run all --max-rounds pairs even when decided earlier: the estimate of a batch that stops
    /// at its first decided look reads high; one run out does not (the verdict is the same test)
    #[arg(long)]
    pub run_out: bool,
    /// A/A calibration: the same configuration (the experiment with --set) on both sides, run
    /// in pairs as --design makes them; reports the host's paired noise and the smallest change
    /// it can detect, and records it under --out for later comparisons on this host to cite
    #[arg(long)]
    pub aa: bool,
    /// How a pair is made: `auto` (the default) loads both sides together where two stacks fit
    /// the host's memory and the load can (open model, no --fit), whole rounds otherwise, and
    /// says why; `together` brings both sides' stacks up side by side on the same CPUs and loads
    /// them at the same time, each at half the plan's rates (the quietest pairs measured,
    /// docs/regression.md); `steps` lets them take turns at each load level instead; `rounds`
    /// runs whole rounds one after the other in ABBA order
    #[arg(long, value_enum, default_value_t)]
    pub design: crate::run::design::Wanted,
    /// Calibrate, then fit the published numbers to this host, on both sides (as `run --fit`)
    #[arg(long)]
    pub fit: bool,
    /// Fail at once when another perflab run holds the host lock
    #[arg(long)]
    pub no_wait: bool,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

impl ExpArgs {
    /// Whether any flag of this mode was given (each flag's default means "not given").
    pub(crate) fn given(&self) -> bool {
        *self != Self::default()
    }
}

pub(crate) fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let r = recorded::Recorded {
        run_a: &a.run_a,
        run_b: a.run_b.as_deref().unwrap_or_default(),
        out: &a.out,
        settings: a.settings(),
        html: a.html.as_deref(),
        json: a.json,
    };
    recorded::compare(&r)
}

/// `compare` with one TARGET (or any flag of that mode): two configurations run alternately.
pub(crate) fn wants_target(a: &CompareArgs) -> bool {
    a.run_b.is_none() || a.exp.given()
}

/// `compare TARGET --a .. --b ..`: the flags as `TargetCompare`, then `run::target`.
pub(crate) fn compare_target(a: CompareArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    if let Some(b) = &a.run_b {
        return Err(invalid(format!(
            "`compare {} {b}` compares recorded runs; --a/--b and the flags that run rounds take one TARGET (an experiment or group): give either two RUN arguments or one TARGET",
            a.run_a
        )));
    }
    let (x, p) = (&a.exp, &a.exp.plan);
    let t = TargetCompare {
        target: a.run_a.clone(),
        a: x.a.clone(),
        b: x.b.clone(),
        set: p.set.clone(),
        catalog_dir: x.catalog.dir(),
        quick: p.quick,
        cpus: p.cpus.clone(),
        force_cpus: p.force_cpus,
        no_align: p.no_align,
        settings: a.settings(),
        resume: x.resume,
        no_run: x.no_run,
        reuse: x.reuse,
        run_out: x.run_out,
        aa: x.aa,
        design: x.design,
        fit: x.fit,
        no_wait: x.no_wait,
        html: a.html.clone(),
        json: a.json,
        out: a.out.clone(),
    };
    target::compare_target(t, quiet)
}
