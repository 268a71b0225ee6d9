//! `perflab compare`'s arguments, and the comparison of recorded runs (`compare RUN_A RUN_B`,
//! each side one run or several comma-separated rounds): the verdict as text, `--json` or
//! `--html`, and the exit code; `compare TARGET --a .. --b ..`'s flags to the typed options of
//! `run::target`, which runs and judges the two configurations.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::catalog::{CatalogArg, PlanArgs};
use crate::error::invalid;
use crate::run::target::{self, TargetCompare};
use crate::verify::compare;
use crate::verify::load::{self, LoadedRun};

/// `perflab compare --help`'s closing text: the exit codes and where the rule is written.
pub(crate) const COMPARE_AFTER_HELP: &str = "\
Verdict: B/A of the rounds' app CPU per ok request over the steps every round passed (their \
geometric mean; else at the lowest common step), with an interval \
from Student's t on the logs at a boundary that accounts for looking after every pair of rounds \
(up to --max-rounds a side). regressed: the interval is above 1 and B/A >= 1 + --min-effect; \
improved: the mirror; same: the interval lies within +-(--margin); else inconclusive, with the \
rounds a side that would decide. See docs/regression.md.

Exit codes:
  0  no regression (same or improved)
  1  regressed
  2  bad input (unreadable run, a run twice, runs of different experiments, sides that differ in \
more than the suite and --set overrides, settings out of range); nothing compared
  3  inconclusive, and nothing regressed

With one TARGET (an experiment or group) and --a/--b, the rounds of the two configurations run \
alternately, each on a fresh stack, until each experiment's verdict is decided or --max-rounds \
a side; complete rounds of either configuration already under --out count. The exit code is \
over the experiments' rows (1 when one regressed, else 3 when one is inconclusive, else 0), \
130 when interrupted (the complete rounds are kept), 1 when a round's harness failed. \
docs/ci/regression.yml is a CI job that fails on 1.

Example:
  perflab compare 2a --a suite=trixie --b suite=forky --quick --html cmp.html";

#[derive(Debug, Args)]
#[command(after_help = COMPARE_AFTER_HELP)]
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
#[derive(Debug, Clone, Default, Args)]
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
    /// in ABBA pairs; reports the host's paired noise and the smallest change it can detect,
    /// and records it under --out for later comparisons on this host to cite
    #[arg(long)]
    pub aa: bool,
    /// How a pair is made: `rounds` (the default) runs whole rounds one after the other in ABBA
    /// order; `steps` brings both sides' stacks up side by side and lets them take turns at each
    /// load level within one round (readings seconds apart; measured noisier than rounds on a
    /// loaded host, docs/regression.md); `auto` takes turns where both stacks fit the host's
    /// memory and the load can (open model, no --fit), whole rounds otherwise, and says why
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
    /// Whether any flag of this mode was given.
    pub(crate) fn given(&self) -> bool {
        let p = &self.plan;
        !self.a.is_empty()
            || !self.b.is_empty()
            || self.resume
            || self.no_run
            || self.reuse
            || self.run_out
            || self.aa
            || self.design != Default::default()
            || self.fit
            || self.no_wait
            || p.quick
            || !p.set.is_empty()
            || p.cpus.is_some()
            || p.force_cpus
            || p.no_align
            || self.catalog.catalog.is_some()
    }
}

/// One side of `compare`: its comma-separated runs, each resolved like a RUN argument.
fn compare_side(arg: &str, out: &Path) -> anyhow::Result<Vec<LoadedRun>> {
    let parts: Vec<&str> = arg.split(',').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(invalid(format!(
            "`{arg}`: an empty run in the list; give run directories separated by commas"
        )));
    }
    parts
        .into_iter()
        .map(|p| load::resolve_run(p, out, None))
        .collect()
}

pub(crate) fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    // the runs first (the first real problem), then the settings, then where the page goes
    let ra = compare_side(&a.run_a, &a.out)?;
    let rb = compare_side(a.run_b.as_deref().unwrap_or_default(), &a.out)?;
    let settings = a.settings();
    settings.check().map_err(invalid)?;
    for (side, runs) in [("A", &ra), ("B", &rb)] {
        if runs.len() > settings.max_rounds {
            return Err(invalid(format!(
                "side {side} has {} rounds, more than the plan of --max-rounds {}: the boundary must be planned before the rounds are seen; give --max-rounds {} to judge them as one plan, or fewer rounds",
                runs.len(),
                settings.max_rounds,
                runs.len()
            )));
        }
    }
    if let Some(path) = &a.html {
        crate::html::check_page_path(path)?;
    }
    let la: Vec<String> = ra.iter().map(LoadedRun::label).collect();
    let lb: Vec<String> = rb.iter().map(LoadedRun::label).collect();
    let sa: Vec<compare::Run> = ra
        .iter()
        .zip(&la)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    let sb: Vec<compare::Run> = rb
        .iter()
        .zip(&lb)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    compare::sides::check(&sa, &sb).map_err(|e| invalid(format!("compare: {e}")))?;
    let c = compare::compare_rounds_with(&sa, &sb, &settings);
    if let Some(path) = &a.html {
        let dirs = |runs: &[LoadedRun]| runs.iter().map(|r| r.dir.clone()).collect::<Vec<_>>();
        let page = crate::html::compare_page::render(&c, &dirs(&ra), &dirs(&rb), path);
        crate::rundir::output_path::write_file("--html", path, page.as_bytes())?;
        if !a.json {
            crate::say!("wrote {}", path.display());
        }
    }
    if a.json {
        crate::out!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        crate::output::emit(&compare::render::text(&c));
    }
    Ok(ExitCode::from(compare::exit_code([c.verdict])))
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
