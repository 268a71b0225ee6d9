//! `perflab compare TARGET --a KEY=VALUE --b KEY=VALUE` from its typed options (`TargetCompare`,
//! which the CLI fills): two configurations of an experiment or group (php, node, all, any
//! group id) compared on rounds run alternately until each experiment's verdict is decided, or
//! on the rounds already recorded (`--no-run`). Everything is checked first (bad input: exit 2,
//! nothing started); then the matrix, one row per experiment, as text, `--json` or `--html`;
//! exit 0 when no row regressed, 1 when one did, 3 when one is inconclusive and none regressed
//! (130 interrupted, 1 a harness failure too).
use crate::verify::quantities::Quantities;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::compare::{self as runner, CompareRequest, ExperimentPlan, Joining};
use crate::error::invalid;
use crate::experiment::{self as catalog_files, Catalog, Experiment};
use crate::plan::{self, CpuLayout, Resolved};
use crate::rundir::batch::CompareSide;
use crate::rundir::batch::Design;
use crate::session::interleave::Batch;
use crate::verify::compare::{Family, Settings};
use crate::verify::load::{self, LoadedRun};
use crate::verify::matrix::{self, Matrix};
use crate::verify::side::{self, SideSpec};

/// `compare TARGET --a .. --b ..` as typed options: the target, the two sides' differences and
/// the common `--set`, the planning flags, the verdict's settings and where the result goes.
#[derive(Debug, Clone)]
pub(crate) struct TargetCompare {
    /// An experiment or group id.
    pub target: String,
    /// Side A's and side B's differences from the experiment as published (`--a`, `--b`).
    pub a: Vec<String>,
    pub b: Vec<String>,
    /// `--set` on both sides.
    pub set: Vec<String>,
    pub catalog_dir: PathBuf,
    pub quick: bool,
    pub cpus: Option<String>,
    pub force_cpus: bool,
    pub no_align: bool,
    /// The verdict's settings (checked with the rest); `max_rounds` caps the rounds a side.
    pub settings: Settings,
    pub resume: bool,
    pub no_run: bool,
    /// Rounds of earlier batches (and plain runs) of the two configurations join.
    pub reuse: bool,
    /// Run all `--max-rounds` pairs, decided or not (an estimate without the early stop's bias).
    pub run_out: bool,
    /// A/A: one configuration (the experiment with `set`) on both sides, told apart by the
    /// batch's tags; `a` and `b` are empty.
    pub aa: bool,
    pub fit: bool,
    pub no_wait: bool,
    /// `--design`: turns within a round, whole rounds, or turns where they can run.
    pub design: super::design::Wanted,
    pub html: Option<PathBuf>,
    pub json: bool,
    pub out: PathBuf,
}

/// Everything about the comparison that can be wrong, found before anything starts.
struct Checked {
    experiments: Vec<Experiment>,
    sides: [SideSpec; 2],
    resolved: [Vec<Resolved>; 2],
    layout: CpuLayout,
    /// The verdict's settings for each row (the confidence split over the rows:
    /// `Settings::family`); `max_rounds` caps the rounds a side too.
    settings: Settings,
    family: Family,
}

impl Checked {
    fn fitted(&self, a: &TargetCompare, e: &Experiment) -> bool {
        a.fit && e.fit.is_some()
    }
}

fn check(a: &TargetCompare, quiet: bool) -> anyhow::Result<Checked> {
    // the target first (the first real problem), then the verdict's settings; --max-rounds
    // is the cap of the rounds a side as well as the plan the boundary accounts for
    let catalog = Catalog::load(&a.catalog_dir, &Quantities)
        .map_err(|d| anyhow::Error::new(catalog_files::invalid(&d)))?;
    let mut experiments: Vec<Experiment> = Vec::new();
    for e in catalog.expand(&a.target)? {
        if !experiments.iter().any(|k| k.id == e.id) {
            experiments.push(e.clone());
        }
    }
    a.settings.check().map_err(invalid)?;
    let sa = side::parse_side(CompareSide::A, &a.a, &a.set)?;
    let sb = side::parse_side(CompareSide::B, &a.b, &a.set)?;
    let mut pairs = Vec::new();
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for e in &experiments {
        let (ea, eb) = (sa.resolve(e)?, sb.resolve(e)?);
        let opts = plan::PlanOptions { quick: a.quick };
        ra.push(resolved(&ea, opts));
        rb.push(resolved(&eb, opts));
        pairs.push((ea, eb));
    }
    check_aa(a)?;
    if !a.aa {
        side::check_sides_differ(&sa, &sb, &pairs)?;
    }
    let (settings, family) = a.settings.family(experiments.len());
    if let Some(path) = &a.html {
        crate::html::check_page_path(path)?;
        for e in &experiments {
            crate::html::check_page_path(&row_page(path, &e.id))?;
        }
    }
    if a.fit {
        super::resolve::check_fittable(&a.target, &ra, quiet)?;
    }
    Ok(Checked {
        experiments,
        sides: [sa, sb],
        resolved: [ra, rb],
        layout: super::resolve::layout(a.cpus.as_deref(), a.force_cpus)?,
        settings,
        family,
    })
}

/// `--aa` runs one configuration on both sides: no `--a`/`--b`, and no `--reuse` (recorded
/// rounds of one configuration cannot be told into two sides but by a batch's tags).
fn check_aa(a: &TargetCompare) -> anyhow::Result<()> {
    if !a.aa {
        return Ok(());
    }
    if !a.a.is_empty() || !a.b.is_empty() {
        return Err(invalid(format!(
            "--aa runs one configuration on both sides, but --a/--b declare a difference ({}); drop them and give the configuration with --set",
            a.a.iter()
                .chain(&a.b)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    if a.reuse {
        return Err(invalid(
            "--aa with --reuse: recorded rounds of one configuration cannot be split into two sides; an A/A batch runs its own rounds (--no-run judges the newest one)".to_string(),
        ));
    }
    Ok(())
}

fn resolved(e: &Experiment, opts: plan::PlanOptions) -> Resolved {
    Resolved {
        experiment: e.clone(),
        plan: plan::build(e, opts),
        warnings: Vec::new(),
    }
}

/// Each experiment's recorded rounds of both sides and the batch new rounds join: a new batch
/// from no rounds; `--resume` and `--no-run`: the newest recorded batch of these sides and its
/// rounds (bad input when the target has none); `--reuse`: every complete round of the two
/// configurations joins (the newest `--max-rounds`), unpaired unless they are one batch's.
fn plans(
    a: &TargetCompare,
    c: &Checked,
    (skipped, quiet): (&mut Vec<String>, bool),
) -> anyhow::Result<Vec<(ExperimentPlan, [Vec<LoadedRun>; 2])>> {
    let new_id = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let from_batch = a.resume || a.no_run;
    let mut out = Vec::new();
    for (i, e) in c.experiments.iter().enumerate() {
        let design = design_of(a, c, i)?;
        let profile = (a.quick, c.fitted(a, e));
        let newest = match from_batch {
            true => c
                .sides
                .iter()
                .filter_map(|s| runner::newest_batch_of(&a.out, (e, s), profile))
                .max(),
            false => None,
        };
        let joining = match (a.reuse, &newest) {
            (true, _) => Joining::All,
            (false, Some(b)) => Joining::Batch(b),
            (false, None) => Joining::Fresh,
        };
        let mut pick = |s: &SideSpec| {
            let how = (joining, c.settings.max_rounds);
            runner::joining_rounds(&a.out, (e, s), profile, how, &mut *skipped)
        };
        let (ra, rb) = (pick(&c.sides[0]), pick(&c.sides[1]));
        one_build(e, [&ra, &rb])?;
        if !a.no_run {
            one_design(e, design.0, [&ra, &rb])?;
        }
        let plan = ExperimentPlan {
            id: e.id.clone(),
            batch: Batch {
                id: newest.clone().unwrap_or_else(|| new_id.clone()),
                declared_a: c.sides[0].declared.clone(),
                declared_b: c.sides[1].declared.clone(),
            },
            recorded_a: ra.iter().map(|r| r.dir.clone()).collect(),
            recorded_b: rb.iter().map(|r| r.dir.clone()).collect(),
            design,
        };
        out.push((plan, [ra, rb]));
    }
    let none = from_batch && !a.reuse && out.iter().all(|(p, _)| p.batch.id == new_id);
    if none && a.resume {
        return Err(invalid(format!(
            "--resume: no comparison batch of {} with these sides under {}; run it without --resume",
            a.target,
            a.out.display()
        )));
    }
    if none && !quiet {
        crate::say!(
            "--no-run: no comparison batch of {} with these sides under {}; --reuse judges every recorded round of the two configurations",
            a.target,
            a.out.display()
        );
    }
    Ok(out)
}

/// How the pairs of experiment `i` are made (`--design`): bad input when turns are asked for
/// and cannot run.
fn design_of(
    a: &TargetCompare,
    c: &Checked,
    i: usize,
) -> anyhow::Result<(crate::rundir::batch::Design, Option<String>)> {
    let e = &c.experiments[i];
    let sides = (&c.resolved[0][i], &c.resolved[1][i]);
    let app_cpus = c.layout.get(crate::lab::Slot::App).len();
    let host = (app_cpus, crate::host::mem_available());
    super::design::choose(a.design, sides, c.fitted(a, e), host).map_err(invalid)
}

/// Each side's joining rounds are of one configuration, image build included (`--reuse` can
/// bring rounds of older images; a resumed batch, rounds of images rebuilt since): bad input
/// naming the rounds and what differs.
fn one_build(e: &Experiment, sides: [&[LoadedRun]; 2]) -> anyhow::Result<()> {
    for (name, rounds) in ["A", "B"].into_iter().zip(sides) {
        let labels = matrix::labels(rounds);
        crate::verify::compare::sides::one_configuration(name, &matrix::as_runs(rounds, &labels))
            .map_err(|why| invalid(format!("compare {}: {why}", e.id)))?;
    }
    Ok(())
}

/// One side's `perflab run` request: its suite, its overrides, its configurations.
fn side_request(a: &TargetCompare, c: &Checked, i: usize, quiet: bool) -> super::RunRequest {
    let s = &c.sides[i];
    super::RunRequest {
        target: format!("compare {} {}", a.target, s.describe()),
        resolved: c.resolved[i].clone(),
        overrides: s.sets.clone(),
        layout: c.layout.clone(),
        rounds: 1,
        suite: s.suite,
        align: !a.no_align,
        wait: wait(a),
        out_root: a.out.clone(),
        quiet,
        no_samplers: false,
        generators: 1,
        placement: Default::default(),
        refine: None,
        fit: a.fit,
        k6_dashboard: false,
        run_name: None,
        live: None,
    }
}

fn wait(a: &TargetCompare) -> crate::lock::Wait {
    match a.no_wait {
        true => crate::lock::Wait::NoWait,
        false => crate::lock::Wait::Block,
    }
}

/// How running the rounds ended (nothing ran with `--no-run`).
#[derive(Default)]
struct Ran {
    interrupted: bool,
    harness_failed: bool,
    /// Per experiment id: the complete rounds of each side after the loop.
    dirs: BTreeMap<String, [Vec<PathBuf>; 2]>,
}

fn run_rounds(
    a: &TargetCompare,
    c: &Checked,
    plans: Vec<ExperimentPlan>,
    quiet: bool,
) -> anyhow::Result<Ran> {
    super::resolve::check_out_root(&a.out)?;
    let mut req = CompareRequest {
        target: format!("compare {}", a.target),
        a: side_request(a, c, 0, quiet),
        b: side_request(a, c, 1, quiet),
        experiments: plans,
        settings: c.settings,
        run_out: a.run_out,
        wait: wait(a),
        quiet,
        labels: [c.sides[0].describe(), c.sides[1].describe()],
    };
    together_rates(&mut req, a.quick)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut progress = crate::images::build_progress(quiet);
    let s = rt.block_on(runner::execute(req, &mut progress))?;
    Ok(Ran {
        interrupted: s.interrupted,
        harness_failed: s.harness_failed,
        dirs: s
            .experiments
            .into_iter()
            .map(|(id, done)| (id, [done.a, done.b]))
            .collect(),
    })
}

/// Pairs loaded together run each side at half the experiment's rates
/// (`plan::turns::together`), every round of the batch alike (a side catching up too), so the
/// steps of both sides match. Their `plan.json` holds the halved rates and their tag says
/// `together`: `verify`, `capacity`, `history` and `--reuse` leave such rounds out
/// (`verify::load::scan`), only their own batch counts them.
fn together_rates(req: &mut CompareRequest, quick: bool) -> anyhow::Result<()> {
    for (i, p) in req.experiments.iter().enumerate() {
        if p.design.0 != Design::Together {
            continue;
        }
        for side in [&mut req.a, &mut req.b] {
            let r = &mut side.resolved[i];
            let e = crate::plan::turns::together(&r.experiment).map_err(invalid)?;
            r.plan = plan::build(&e, plan::PlanOptions { quick });
        }
    }
    Ok(())
}

/// A resumed batch goes on in its own design: rounds loaded together (half the rates) and
/// rounds at the experiment's rates never meet in one batch.
fn one_design(e: &Experiment, design: Design, sides: [&[LoadedRun]; 2]) -> anyhow::Result<()> {
    let rounds: Vec<&LoadedRun> = sides.iter().flat_map(|s| s.iter()).collect();
    let n = rounds
        .iter()
        .filter(|r| load::loaded_together(&r.manifest))
        .count();
    let want = design == Design::Together;
    if rounds.is_empty() || (want && n == rounds.len()) || (!want && n == 0) {
        return Ok(());
    }
    let batch = if want {
        "at the experiment's rates"
    } else {
        "loaded together (--design together)"
    };
    Err(invalid(format!(
        "compare {}: {} of the batch's {} round(s) ran {batch}; resume it with the design it was made with (--design {})",
        e.id,
        if want { rounds.len() - n } else { n },
        rounds.len(),
        if want { "rounds or steps" } else { "together" }
    )))
}

/// The runs side `s`'s claims compare against (`against:`): the median round of that
/// experiment on the side's suite.
fn against_runs(
    a: &TargetCompare,
    e: &Experiment,
    s: &SideSpec,
    skipped: &mut Vec<String>,
) -> BTreeMap<String, LoadedRun> {
    let mut out = BTreeMap::new();
    for id in e.expect.iter().filter_map(|c| c.against.as_deref()) {
        let suite = Some(s.suite.as_str());
        if !out.contains_key(id)
            && let Some(r) = crate::verify::targets::against_run(&a.out, id, suite, a.fit, skipped)
        {
            out.insert(id.to_string(), r);
        }
    }
    out
}

fn load_all(dirs: &[PathBuf]) -> anyhow::Result<Vec<LoadedRun>> {
    dirs.iter().map(|d| load::load_run(d)).collect()
}

/// The matrix over the experiments: each one's rounds (those the loop ended with, else the
/// recorded ones).
fn build_matrix(
    a: &TargetCompare,
    c: &Checked,
    recorded: Vec<[Vec<LoadedRun>; 2]>,
    ran: &Ran,
    skipped: &mut Vec<String>,
) -> anyhow::Result<Matrix> {
    let mut rows = Vec::new();
    for (e, rec) in c.experiments.iter().zip(recorded) {
        let [ra, rb] = match ran.dirs.get(&e.id) {
            Some([da, db]) => [load_all(da)?, load_all(db)?],
            None => rec,
        };
        let (xa, xb) = (
            against_runs(a, e, &c.sides[0], skipped),
            against_runs(a, e, &c.sides[1], skipped),
        );
        let side = |rounds, against| matrix::Side { rounds, against };
        rows.push(matrix::row(e, side(&ra, &xa), side(&rb, &xb), &c.settings));
    }
    let [da, db] = [c.sides[0].describe(), c.sides[1].describe()];
    Ok(matrix::matrix(&a.target, &da, &db, rows, c.family))
}

/// Where `--html FILE` puts experiment `id`'s compare page: `FILE-<id>.html` beside it.
fn row_page(path: &Path, id: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "compare".into());
    path.with_file_name(format!("{stem}-{id}.html"))
}

/// `--html FILE`: the matrix page, and beside it each row's compare page (`FILE-<exp>.html`),
/// each written under the output-path rule (`rundir::output_path`).
fn write_html(path: &Path, m: &Matrix) -> anyhow::Result<()> {
    let mut links = Vec::new();
    for r in &m.rows {
        let Some(cmp) = &r.comparison else {
            links.push(None);
            continue;
        };
        let file = row_page(path, &r.experiment);
        let page = crate::html::compare_page::render(cmp, &r.dirs_a, &r.dirs_b, &file);
        write_file(&file, &page)?;
        links.push(file.file_name().map(|n| n.to_string_lossy().into_owned()));
    }
    write_file(path, &crate::html::matrix_page::render(m, &links))
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::rundir::output_path::write_file("--html", path, text.as_bytes())
}

/// Check, run (unless `--no-run`), judge and print `compare TARGET`; the exit code over the rows.
pub(crate) fn compare_target(a: TargetCompare, quiet: bool) -> anyhow::Result<ExitCode> {
    let c = check(&a, quiet)?;
    let mut skipped = Vec::new();
    let (plans, recorded): (Vec<_>, Vec<_>) =
        plans(&a, &c, (&mut skipped, quiet))?.into_iter().unzip();
    let batches: BTreeMap<String, String> = plans
        .iter()
        .map(|p| (p.id.clone(), p.batch.id.clone()))
        .collect();
    let ran = match a.no_run {
        true => Ran::default(),
        false => run_rounds(&a, &c, plans, quiet)?,
    };
    let mut m = build_matrix(&a, &c, recorded, &ran, &mut skipped)?;
    let recorded_calibrations = match a.aa {
        true => super::calibration::record(&a.out, &mut m, &batches, &c.sides[0].describe())?,
        false => {
            super::calibration::cite(&a.out, &mut m);
            Vec::new()
        }
    };
    if let Some(path) = &a.html {
        write_html(path, &m)?;
        if !a.json {
            crate::say!("wrote {}", path.display());
        }
    }
    if a.json {
        crate::out!("{}", serde_json::to_string_pretty(&m)?);
    } else {
        if let [row] = m.rows.as_slice()
            && let Some(cmp) = &row.comparison
        {
            crate::output::emit(&crate::verify::compare::render::text(cmp));
        }
        crate::output::emit(&matrix::render_text(&m));
    }
    if !quiet {
        for s in &skipped {
            crate::say!("skipped {s}");
        }
        for line in &recorded_calibrations {
            crate::say!("calibration: {line}");
        }
    }
    Ok(ExitCode::from(if ran.interrupted {
        130
    } else if ran.harness_failed {
        crate::error::EXIT_FAILURE
    } else {
        m.summary.exit_code
    }))
}
