//! `perflab verify --run-missing`: the rounds the verified experiments (and the ones their
//! claims compare against) lack, run through `perflab run`'s pipeline with its per-round lines
//! on stderr (stdout stays the table or the JSON), then the short targets read again.
use std::path::{Path, PathBuf};

use crate::experiment::Catalog;
use crate::plan::PlanOptions;
use crate::verify::findings::Findings;
use crate::verify::targets::{self, Recorded, Target};

/// How `--run-missing` runs the rounds it lacks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopUp {
    /// Rounds every experiment should have (`--rounds`, else 1).
    pub(crate) want: usize,
    /// `--quick`: quarter-length holds.
    pub(crate) quick: bool,
    /// `--no-align`: start k6 at once.
    pub(crate) no_align: bool,
    pub(crate) quiet: bool,
}

/// What `perflab verify` is asked (past `--quantities`).
pub(crate) struct Ask<'a> {
    /// A run directory, an experiment or group id, or `all`.
    pub target: &'a str,
    pub suite: Option<&'a str>,
    pub fit: bool,
    /// `--out` [default: a run directory's out root, else `out`].
    pub out: Option<&'a Path>,
    /// `--run-missing`: how the rounds the targets lack are run.
    pub top_up: Option<TopUp>,
}

/// The claims judged, when, on which out/ root, and whether the target was one run directory.
pub(crate) struct Judged {
    pub findings: Findings,
    pub now: chrono::DateTime<chrono::Utc>,
    pub out_root: PathBuf,
    pub single_run: bool,
}

/// The claims of `ask.target` judged on its recorded runs (the ones it lacks run first with
/// `--run-missing`).
pub(crate) fn findings(cat: &Catalog, ask: &Ask) -> anyhow::Result<Judged> {
    let as_dir = Path::new(ask.target);
    let single_run = as_dir.is_dir() && as_dir.join(crate::rundir::MANIFEST_FILE).exists();
    let out_root = targets::out_root(ask.out, as_dir, single_run)?;
    let rec = Recorded {
        out_root: &out_root,
        suite: ask.suite,
        fit: ask.fit,
    };
    let mut skipped = Vec::new();
    let found = if single_run {
        vec![targets::single_target(cat, as_dir)?]
    } else {
        self::targets(cat, ask.target, &rec, ask.top_up, &mut skipped)?
    };
    let now = chrono::Utc::now();
    let findings = crate::verify::gather::findings(&found, &rec, now, skipped);
    Ok(Judged {
        findings,
        now,
        out_root,
        single_run,
    })
}

/// `perflab verify`'s output: the claims' table (or JSON) on stdout, the runs left out on
/// stderr, and with `report_in` (`verify all`, not of one run directory) the findings report
/// written; exit 1 unless every claim passed.
pub(crate) fn print(
    j: &Judged,
    json: bool,
    report_in: Option<Option<&Path>>,
    quiet: bool,
) -> anyhow::Result<std::process::ExitCode> {
    use crate::verify::render;
    let f = &j.findings;
    if json {
        crate::output::emit(&render::json(f));
    } else {
        crate::output::emit(&render::text(&f.claims, &f.missing));
    }
    if !quiet {
        for s in &f.skipped {
            crate::say!("skipped {s}");
        }
    }
    if let Some(findings_dir) = report_in.filter(|_| !j.single_run) {
        let dir = write_report(j, findings_dir)?;
        if !quiet {
            crate::say!("findings report: {}", dir.display());
        }
    }
    Ok(if f.all_pass() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(crate::error::EXIT_FAILURE)
    })
}

/// `verify all`'s findings report, in a new folder under `findings_dir`, else under
/// <out>/verify/ (a real directory, never a link out of the out/ root).
fn write_report(j: &Judged, findings_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let parent = match findings_dir {
        Some(d) => d.to_path_buf(),
        None => crate::atomic::create_dirs_under(&j.out_root, &["verify"])?,
    };
    crate::verify::gather::write_findings(&parent, j.now, &j.findings)
}

/// The experiments `target` names with their newest complete runs; with `top_up`
/// (`--run-missing`), the ones without are run first.
fn targets<'c>(
    cat: &'c Catalog,
    target: &str,
    rec: &Recorded<'_>,
    top_up: Option<TopUp>,
    skipped: &mut Vec<String>,
) -> anyhow::Result<Vec<Target<'c>>> {
    let mut found = targets::targets(cat, target, rec, skipped)?;
    if let Some(opts) = top_up {
        self::top_up(cat, &mut found, rec, opts, skipped)?;
    }
    Ok(found)
}

/// Run the rounds the targets and their `against:` experiments lack, then read the targets
/// that had too few again.
pub(crate) fn top_up(
    cat: &Catalog,
    targets: &mut [Target<'_>],
    rec: &Recorded<'_>,
    opts: TopUp,
    skipped: &mut Vec<String>,
) -> anyhow::Result<()> {
    let ids = targets::missing_rounds(cat, targets, opts.want, &mut |e| {
        rec.rounds(e, skipped).len()
    });
    if !ids.is_empty() {
        run_missing(cat, &ids, rec, opts)?;
    }
    for t in targets.iter_mut().filter(|t| t.1.len() < opts.want) {
        t.1 = rec.rounds(t.0, skipped);
    }
    Ok(())
}

/// Run the missing experiments through the `perflab run` pipeline (one batch per count of
/// rounds).
fn run_missing(
    cat: &Catalog,
    ids: &[(String, u32)],
    rec: &Recorded<'_>,
    opts: TopUp,
) -> anyhow::Result<()> {
    let quiet = opts.quiet;
    let mut counts: Vec<u32> = ids.iter().map(|x| x.1).collect();
    counts.sort_unstable();
    counts.dedup();
    for rounds in counts {
        let these: Vec<&str> = ids
            .iter()
            .filter(|x| x.1 == rounds)
            .map(|x| x.0.as_str())
            .collect();
        let mut resolved = Vec::new();
        for id in &these {
            let plan = PlanOptions { quick: opts.quick };
            resolved.extend(super::resolve::experiments(cat, id, &[], plan)?);
        }
        let req = super::RunRequest {
            target: format!("verify --run-missing ({})", these.join(", ")),
            resolved,
            overrides: Vec::new(),
            layout: super::resolve::layout(None, false)?,
            rounds,
            suite: rec.suite.unwrap_or("trixie").parse()?,
            align: !opts.no_align,
            wait: crate::lock::Wait::Block,
            out_root: rec.out_root.to_path_buf(),
            quiet,
            no_samplers: false,
            generators: 1,
            placement: Default::default(),
            refine: None,
            fit: rec.fit,
            k6_dashboard: false,
            run_name: None,
            live: None,
        };
        if !quiet {
            crate::say!(
                "running {rounds} more round(s) of {} experiment(s): {}",
                these.len(),
                these.join(", ")
            );
        }
        execute_quietly(req, quiet)?;
    }
    Ok(())
}

/// `perflab run`'s pipeline with its per-round lines on stderr (stdout is the table / JSON).
pub(super) fn execute_quietly(req: super::RunRequest, quiet: bool) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut progress = crate::images::build_progress(quiet);
    let summary = {
        let _to_stderr = StdoutToStderr::new();
        rt.block_on(super::execute(req, &mut progress))?
    };
    if summary.interrupted {
        anyhow::bail!("interrupted while running the missing experiments");
    }
    Ok(())
}

/// While alive, file descriptor 1 points at stderr (restored on drop).
struct StdoutToStderr(Option<libc::c_int>);

impl StdoutToStderr {
    fn new() -> Self {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // SAFETY: plain descriptor calls on the process's own fds 1 and 2.
        let saved = unsafe { libc::dup(1) };
        if saved < 0 || unsafe { libc::dup2(2, 1) } < 0 {
            return StdoutToStderr(None);
        }
        StdoutToStderr(Some(saved))
    }
}

impl Drop for StdoutToStderr {
    fn drop(&mut self) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        if let Some(fd) = self.0 {
            // SAFETY: restores fd 1 from the copy made in `new`.
            unsafe {
                libc::dup2(fd, 1);
                libc::close(fd);
            }
        }
    }
}
