//! CLI commands for the catalog area: `list`, `show`, `validate`, the shared planning flags
//! (`--quick --set --cpus --force-cpus --no-align`) that `run` reuses, and hidden `lock-hold`.
use crate::error::InvalidInput;
use crate::experiment::{self, Catalog, CatalogEntry, Diagnostic, Lab};
pub(crate) use crate::plan::Resolved;
use crate::plan::{self, CpuLayout, PlanOptions};
use crate::report::table::Table;
use crate::verify::quantities::Quantities;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where the catalog is (shared by list/show/validate/run).
#[derive(Debug, Clone, Default, Args)]
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
        Catalog::load(&self.dir(), &Quantities)
            .map_err(|d| anyhow::Error::new(experiment::invalid(&d)))
    }
}

/// Flags that shape a plan; `perflab run` flattens the same struct.
#[derive(Debug, Clone, Default, Args)]
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
    pub(crate) fn options(&self) -> PlanOptions {
        PlanOptions { quick: self.quick }
    }

    /// The experiments `id` (experiment or group) runs, with overrides applied and planned.
    pub fn resolve(&self, catalog: &Catalog, id: &str) -> anyhow::Result<Vec<Resolved>> {
        crate::run::resolve::experiments(catalog, id, &self.set, self.options())
    }

    /// The CPU layout on this host (online CPUs from sysfs, `--cpus` override).
    pub(crate) fn layout(&self) -> anyhow::Result<CpuLayout> {
        crate::run::resolve::layout(self.cpus.as_deref(), self.force_cpus)
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

#[derive(Debug, serde::Serialize)]
struct ListItem<'a> {
    id: &'a str,
    kind: &'static str,
    lab: String,
    description: &'a str,
    finding: Option<&'a str>,
    steps: Option<&'a [u32]>,
    members: Option<&'a [String]>,
    file: String,
}

pub(crate) fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let cat = args.catalog.load()?;
    let items = list_items(&cat, args.lab.as_deref());
    let mut out = crate::output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &items)?;
        writeln!(out)?;
    } else if args.markdown {
        list_markdown(&mut out, &items)?;
    } else {
        list_text(&mut out, &items, crate::output::width())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The catalog's entries (of `only_lab`): experiments in the article's order, groups last.
fn list_items<'c>(cat: &'c Catalog, only_lab: Option<&str>) -> Vec<ListItem<'c>> {
    let mut items: Vec<ListItem> = Vec::new();
    for (id, f) in &cat.files {
        let lab = cat.lab_of(id);
        if only_lab.is_some_and(|l| l != lab) {
            continue;
        }
        let (description, finding, steps, members) = match &f.entry {
            CatalogEntry::Experiment(e) => (
                &e.description,
                Some(e.finding.as_str()),
                Some(&e.load.steps[..]),
                None,
            ),
            CatalogEntry::Group(g) => (&g.description, None, None, Some(&g.members[..])),
        };
        items.push(ListItem {
            id,
            kind: f.entry.kind(),
            lab,
            description,
            finding,
            steps,
            members,
            file: f.path.display().to_string(),
        });
    }
    // experiments in the article's order (as the `all` and `demo` groups run them), groups last
    let mut order: std::collections::HashMap<&str, usize> = Default::default();
    for e in ["all", "demo"]
        .iter()
        .filter_map(|g| cat.expand(g).ok())
        .flatten()
    {
        let next = order.len();
        order.entry(e.id.as_str()).or_insert(next);
    }
    let rank = |id: &str| order.get(id).copied().unwrap_or(usize::MAX);
    items.sort_by_key(|i| {
        (
            i.kind == "group",
            lab_rank(&i.lab),
            rank(i.id),
            i.id.to_string(),
        )
    });
    items
}

/// The catalog table of docs/catalog.md.
fn list_markdown(out: &mut impl Write, items: &[ListItem<'_>]) -> std::io::Result<()> {
    writeln!(
        out,
        "| id | kind | lab | steps / members | article finding |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    for i in items {
        let steps = match (i.steps, i.members) {
            (Some(s), _) => s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            (_, Some(m)) => m.join(", "),
            _ => String::new(),
        };
        let what = i.finding.unwrap_or(i.description).replace('|', "\\|");
        let line = format!(
            "| `{}` | {} | {} | {} | {} |",
            i.id, i.kind, i.lab, steps, what
        );
        writeln!(out, "{}", crate::report::table::md_text(&line))?;
    }
    Ok(())
}

/// The aligned table of `perflab list`, fitted to `width` columns: the steps or members and
/// the finding wrap onto continuation lines.
fn list_text(out: &mut impl Write, items: &[ListItem<'_>], width: usize) -> std::io::Result<()> {
    let headers = ["ID", "KIND", "LAB", "STEPS / MEMBERS", "FINDING (article)"];
    let cells: Vec<[String; 5]> = items
        .iter()
        .map(|i| {
            let steps = match (i.steps, i.members) {
                (Some(s), _) => s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                (_, Some(m)) => m.join(" "),
                _ => String::new(),
            };
            [
                i.id.to_string(),
                i.kind.to_string(),
                i.lab.clone(),
                steps,
                i.finding.unwrap_or(i.description).to_string(),
            ]
        })
        .collect();
    let natural = |c: usize| {
        cells
            .iter()
            .map(|r| r[c].chars().count())
            .chain([headers[c].len()])
            .max()
            .unwrap_or(0)
    };
    // id, kind and lab whole; the steps a third of the rest (10 to 24 wide); the finding the
    // other two thirds
    let mut w: Vec<usize> = (0..3).map(natural).collect();
    let avail = width.saturating_sub(w.iter().sum::<usize>() + 2 * 4);
    let steps = natural(3).min(24).min((avail / 3).max(10));
    w.push(steps);
    w.push(avail.saturating_sub(steps).max(16));
    let mut t = Table::new(headers);
    t.left = (0..5).collect();
    t.widths = Some(w.clone());
    for r in &cells {
        let steps = crate::output::wrap(&r[3], w[3]);
        let finding = crate::output::wrap(&r[4], w[4]);
        for k in 0..steps.len().max(finding.len()) {
            let first = |c: usize| if k == 0 { r[c].clone() } else { String::new() };
            let line = |v: &[String]| v.get(k).cloned().unwrap_or_default();
            t.push(vec![
                first(0),
                first(1),
                first(2),
                line(&steps),
                line(&finding),
            ]);
        }
    }
    out.write_all(t.to_text().as_bytes())
}

/// `Lab::ALL`'s order; anything else after.
fn lab_rank(lab: &str) -> usize {
    Lab::ALL
        .iter()
        .position(|l| l.as_str() == lab)
        .unwrap_or(Lab::ALL.len())
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
    let layout = args.plan.layout();
    let layout = match (&args.plan.cpus, layout) {
        (Some(_), Err(e)) => return Err(e),
        (_, l) => l.map_err(|e| e.to_string()),
    };
    let now = chrono::Utc::now();
    let mut out = crate::output::stdout();
    if let CatalogEntry::Group(g) = &file.entry {
        return show_group(&mut out, g, &resolved, args.json).map(|_| ExitCode::SUCCESS);
    }
    let r = &resolved[0];
    let alignment = plan::align(now, &r.plan, !args.plan.no_align);
    if args.json {
        let v = serde_json::json!({
            "id": r.experiment.id,
            "kind": "experiment",
            "file": file.path.display().to_string(),
            "experiment": r.experiment,
            "overrides": args.plan.set,
            "plan": r.plan,
            "cpu_layout": layout.as_ref().ok(),
            "cpu_layout_error": layout.as_ref().err(),
            "alignment_if_started_now": alignment,
            "warnings": r.warnings.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    super::show::render_experiment(&mut out, &file.path, r, &layout, &alignment)?;
    if args.fit {
        writeln!(out)?;
        let last = super::show_fit::last_fit(&args.out, &r.experiment.id);
        super::show_fit::render(&mut out, &r.experiment, last.as_ref())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn show_group(
    out: &mut impl Write,
    g: &experiment::Group,
    members: &[Resolved],
    json: bool,
) -> anyhow::Result<()> {
    let total: u32 = members.iter().map(|r| r.plan.total_s).sum();
    if json {
        let v = serde_json::json!({
            "id": g.id,
            "kind": "group",
            "description": g.description,
            "members": g.members,
            "runs": members.iter().map(|r| serde_json::json!({
                "id": r.experiment.id, "lab": r.experiment.lab, "total_s": r.plan.total_s,
                "steps": r.experiment.load.steps,
            })).collect::<Vec<_>>(),
            "total_load_s": total,
        });
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{}  (group)\n  {}\n", g.id, g.description)?;
    writeln!(out, "runs, in order, each on a fresh stack:")?;
    for (i, r) in members.iter().enumerate() {
        writeln!(
            out,
            "  {:>2}. {:<12} {:<5} {:>6}  steps {}",
            i + 1,
            r.experiment.id,
            r.experiment.lab.as_str(),
            super::show::mmss(r.plan.total_s),
            r.experiment
                .load
                .steps
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )?;
    }
    writeln!(
        out,
        "\nload time {} in total (plus stack start, warm-up requests, minute alignment and teardown per run)",
        super::show::mmss(total)
    )?;
    Ok(())
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
    let dir = args.catalog.dir();
    let (cat, given) = if args.files.is_empty() {
        (Catalog::load(&dir, &Quantities), None)
    } else {
        for f in &args.files {
            if !f.is_file() {
                return Err(InvalidInput(format!("{}: no such file", f.display())).into());
            }
        }
        // check the given files together with the rest of the catalog (group members)
        let stems: Vec<_> = args
            .files
            .iter()
            .filter_map(|f| f.file_stem().map(|s| s.to_owned()))
            .collect();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                    .filter(|p| p.file_stem().is_none_or(|s| !stems.iter().any(|g| g == s)))
                    .collect()
            })
            .unwrap_or_default();
        paths.extend(args.files.iter().cloned());
        (
            Catalog::from_files(&dir, &paths, &Quantities),
            Some(&args.files),
        )
    };
    let mine = |d: &&Diagnostic| given.is_none_or(|g| g.iter().any(|f| Path::new(f) == d.file));
    match cat {
        Err(diags) => {
            let errs: Vec<Diagnostic> = diags.iter().filter(mine).cloned().collect();
            if errs.iter().any(Diagnostic::is_error) {
                return Err(experiment::invalid(&errs).into());
            }
            // errors only in files not asked about
            let other: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
            tracing::warn!(
                "other catalog files have errors:\n{}",
                crate::output::plain(&experiment::diag::render(&other))
            );
            crate::out!("ok: {} file(s)", args.files.len());
            Ok(ExitCode::SUCCESS)
        }
        Ok(cat) => {
            let warnings: Vec<&Diagnostic> =
                cat.warnings().into_iter().filter(|d| mine(d)).collect();
            if !args.no_warnings {
                for w in &warnings {
                    crate::say!("{w}");
                }
            }
            let checked: Vec<&experiment::CatalogFile> = cat
                .files
                .values()
                .filter(|f| given.is_none_or(|g| g.contains(&f.path)))
                .collect();
            let groups = checked
                .iter()
                .filter(|f| matches!(f.entry, CatalogEntry::Group(_)))
                .count();
            crate::out!(
                "ok: {} file(s) valid ({} experiments, {} groups), {} warning(s)",
                checked.len(),
                checked.len() - groups,
                groups,
                warnings.len()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
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
    let path = crate::lock::lock_path();
    let wait = if args.no_wait {
        crate::lock::Wait::NoWait
    } else {
        crate::lock::Wait::Block
    };
    let purpose = crate::lock::Purpose::new(&args.experiment, args.expected_s);
    let lock = crate::lock::acquire(&path, purpose, wait, |h| {
        crate::say!("{}", crate::lock::waiting_message(h));
    })?;
    let mut out = crate::output::stdout();
    writeln!(
        out,
        "locked pid {} at {}",
        std::process::id(),
        chrono::Utc::now().to_rfc3339()
    )?;
    out.flush()?;
    std::thread::sleep(std::time::Duration::from_secs_f64(args.seconds.max(0.0)));
    drop(lock);
    writeln!(out, "released at {}", chrono::Utc::now().to_rfc3339())?;
    Ok(ExitCode::SUCCESS)
}
