//! CLI commands for the analysis area: `perflab analyze` (any k6 CSV: `report::loose`),
//! `perflab report` (a run directory) and `perflab index`.
use crate::error::invalid;
use crate::report;
use crate::rundir::layout;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// k6 per-request CSV (`--out csv=FILE`, plain or .gz), tagged by labs/k6/stepped.js or
    /// breakpoint.js; several (N runners of one test, e.g. k6-operator's) are merged as
    /// `run --generators` merges its instances
    #[arg(required = true, num_args = 1..=crate::load::segments::MAX_GENERATORS as usize * 4)]
    pub csv: Vec<PathBuf>,
    /// k6 `--summary-export` JSON: SLO from its per-step thresholds, and a cross-check
    /// (repeatable: one per CSV, merged into counts)
    #[arg(long)]
    pub summary: Vec<PathBuf>,
    /// SLO on each step's p95 (ms); default: the summary's per-step `p(95)<N` threshold.
    #[arg(long)]
    pub slo_ms: Option<f64>,
    /// Optional SLO on each step's p99 (ms).
    #[arg(long)]
    pub slo_p99_ms: Option<f64>,
    /// Error budget as a fraction (0.01 = 1 %).
    #[arg(long, default_value_t = 0.01)]
    pub error_budget: f64,
    /// How far ok/s may fall below sent/s (fraction).
    #[arg(long, default_value_t = 0.05)]
    pub goodput_tolerance: f64,
    /// Step hold length (s); default: inferred from the request start times.
    #[arg(long)]
    pub hold_s: Option<f64>,
    /// The generator's VU cap (maxVUs): steps reaching it fail criterion 4.
    #[arg(long)]
    pub max_vus: Option<f64>,
    /// Closed model think time (s) for the coordinated-omission estimate.
    #[arg(long)]
    pub think_time_s: Option<f64>,
    /// k6's log (aborts, `Insufficient VUs`); repeatable, one per runner
    #[arg(long)]
    pub k6_log: Vec<PathBuf>,
    /// Print the JSON object (steps, last_passing, knee, dropped_iterations) instead of the report.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn analyze(a: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let input = report::loose::Input {
        csv: a.csv,
        summary: a.summary,
        slo_ms: a.slo_ms,
        slo_p99_ms: a.slo_p99_ms,
        error_budget: a.error_budget,
        goodput_tolerance: a.goodput_tolerance,
        hold_s: a.hold_s,
        max_vus: a.max_vus,
        think_time_s: a.think_time_s,
        k6_log: a.k6_log,
    };
    let out = report::loose::render(&input, a.json)?;
    crate::output::stdout().write_all(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (out/<experiment>/<run>): re-renders report.txt, report.md, report.json,
    /// report.html and the plots.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: Option<PathBuf>,
    /// Re-render report.html alone from the run's report.json and manifest.json (no re-analysis;
    /// works on a run whose raw k6 data is gone) and print its path.
    #[arg(long)]
    pub html_only: bool,
    /// Not for `report`: `--html FILE` writes a page to FILE in `compare`; here it is
    /// `--html-only` (report.html always lives in the run directory).
    #[arg(long, hide = true, num_args = 0..=1, value_name = "FILE")]
    pub html: Option<Option<PathBuf>>,
}

/// The run directory `report` works on, or the clear error of the old `--html` spelling.
fn report_dir(a: &ReportArgs) -> anyhow::Result<&PathBuf> {
    if let Some(given) = &a.html {
        let dir = a.run_dir.as_ref().or(given.as_ref());
        let dir = dir.map_or("RUN_DIR".into(), |d| d.display().to_string());
        return Err(invalid(format!(
            "report --html: `--html FILE` means \"write the page to FILE\" (as in compare), and \
             {} always lives in the run directory; to re-render it alone, use \
             `perflab report {dir} --html-only`",
            layout::REPORT_HTML
        )));
    }
    a.run_dir
        .as_ref()
        .ok_or_else(|| invalid("give the run directory: perflab report out/<experiment>/<run>"))
}

pub(crate) fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let run_dir = report_dir(&a)?;
    if a.html_only {
        let path = crate::html::rerender_html(run_dir)?;
        crate::out!("{}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let text = crate::html::rerender_all(run_dir)?;
    crate::output::stdout().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The out/ root whose run directories are listed [default: $PERFLAB_OUT, else ./out]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `perflab index`: rebuild out/index.html and print its path.
pub(crate) fn index(a: IndexArgs) -> anyhow::Result<ExitCode> {
    let root = a.out.unwrap_or_else(crate::rundir::default_out_root);
    let b = crate::html::index::write_root(&root)?;
    crate::out!("{}", b.path.display());
    Ok(ExitCode::SUCCESS)
}
