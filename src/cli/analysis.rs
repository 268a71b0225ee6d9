//! CLI commands for the analysis area: `perflab analyze` (any k6 CSV) and `perflab report` (a run directory).
use crate::analyze::{self, Params};
use crate::error::invalid;
use crate::report;
use crate::rundir::read::{FileKind, RunFile};
use crate::rundir::{inputs, layout};
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

/// The files `analyze` reads, in the order given, each an existing file: the first real
/// problem of `analyze missing.csv` is the missing file, not a flag.
fn check_inputs(a: &AnalyzeArgs) -> anyhow::Result<()> {
    let given = [
        ("", &a.csv),
        ("--summary ", &a.summary),
        ("--k6-log ", &a.k6_log),
    ];
    for (flag, p) in given
        .into_iter()
        .flat_map(|(f, ps)| ps.iter().map(move |p| (f, p)))
    {
        match std::fs::metadata(p) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(invalid(format!("{flag}{}: not a file", p.display()))),
            Err(e) => {
                return Err(invalid(format!(
                    "{flag}{}: {}",
                    p.display(),
                    if e.kind() == std::io::ErrorKind::NotFound {
                        "no such file".to_string()
                    } else {
                        e.to_string()
                    }
                )));
            }
        }
    }
    Ok(())
}

/// The numeric flags of `analyze`: fractions in [0, 1), positive bounded quantities.
fn check_numbers(a: &AnalyzeArgs) -> anyhow::Result<()> {
    for (what, v) in [
        ("--error-budget", a.error_budget),
        ("--goodput-tolerance", a.goodput_tolerance),
    ] {
        if !(0.0..1.0).contains(&v) {
            return Err(invalid(format!(
                "{what} {v}: give a fraction between 0 and 1 (0.01 = 1 %)"
            )));
        }
    }
    for (what, v, unit, max) in [
        ("--slo-ms", a.slo_ms, "milliseconds", 3_600_000.0),
        ("--slo-p99-ms", a.slo_p99_ms, "milliseconds", 3_600_000.0),
        ("--hold-s", a.hold_s, "seconds", 86_400.0),
        ("--max-vus", a.max_vus, "VUs", 1e9),
        ("--think-time-s", a.think_time_s, "seconds", 3_600.0),
    ] {
        if let Some(v) = v.filter(|v| !(*v > 0.0 && *v <= max)) {
            return Err(invalid(format!(
                "{what} {v}: give a positive number of {unit} (at most {max})"
            )));
        }
    }
    Ok(())
}

/// The report's source: the CSV files (merged when several) and the summaries they came with.
fn source_of(a: &AnalyzeArgs) -> analyze::model::Source {
    let names: Vec<String> = a
        .csv
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let title = match names.len() {
        1 => names[0].clone(),
        n => format!("{} ({n} runners, merged)", names.join(" + ")),
    };
    let csv_label = a
        .csv
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    analyze::model::Source {
        title,
        csv: csv_label,
        summary: (!a.summary.is_empty()).then(|| {
            a.summary
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" + ")
        }),
        ..Default::default()
    }
}

pub(crate) fn analyze(a: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    check_inputs(&a)?;
    check_numbers(&a)?;
    let mut caveats = Vec::new();
    let mut sums = Vec::new();
    for p in &a.summary {
        let (s, c) = inputs::k6_summary(&RunFile::loose(p, FileKind::K6Summary))?;
        caveats.extend(c);
        sums.push(s);
    }
    let summary = match sums.len() {
        0 => None,
        1 => sums.pop(),
        _ => Some(crate::analyze::merge::merge_summaries(sums)),
    };
    let slo = a.slo_ms.or_else(|| summary.as_ref().and_then(|s| s.slo_p95_ms())).ok_or_else(|| {
        invalid(format!(
            "{}: no SLO: pass --slo-ms N, or --summary FILE whose per-step thresholds carry `p(95)<N`",
            a.csv[0].display()
        ))
    })?;
    let slo_p99 = a
        .slo_p99_ms
        .or_else(|| summary.as_ref().and_then(|s| s.slo_p99_ms()));
    for (q, v) in [("p95", Some(slo)), ("p99", slo_p99)] {
        if let Some(v) = v.filter(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(invalid(format!(
                "{}: the summary's {q} threshold {v} ms is not a positive number: pass --slo-ms N",
                a.summary.first().unwrap_or(&a.csv[0]).display()
            )));
        }
    }
    let mut parts = Vec::new();
    for p in &a.csv {
        let (k6, c) = inputs::k6_csv(&RunFile::loose(p, FileKind::K6Csv))?;
        caveats.extend(c);
        parts.push(k6);
    }
    let k6 = crate::analyze::merge::merge_k6(parts);
    let mut params = Params::new(slo);
    params.slo_p99_ms = slo_p99;
    params.error_budget = a.error_budget;
    params.goodput_tolerance = a.goodput_tolerance;
    params.hold_s = a.hold_s;
    params.max_vus = a.max_vus;
    params.think_time_s = a.think_time_s;
    for log in &a.k6_log {
        let ((aborted, insufficient), c) =
            inputs::k6_log(&RunFile::loose(log, FileKind::K6Log)).map_err(|e| e.into_anyhow())?;
        caveats.extend(c);
        params.aborted = Some(params.aborted.unwrap_or(false) || aborted);
        params.insufficient_vus |= insufficient;
    }
    let source = source_of(&a);
    let csv_label = source.csv.clone();
    let inputs = analyze::Inputs {
        k6,
        summary,
        samples: Default::default(),
        params,
        logs: Default::default(),
        source,
        caveats,
    };
    let r = analyze::analyze_run(inputs).map_err(|e| invalid(format!("{csv_label}: {e}")))?;
    let out = if a.json {
        serde_json::to_string_pretty(&r.to_analyze_json())? + "\n"
    } else {
        report::text::render(&r, None)
    };
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
    let r = crate::html::render_run_dir(run_dir)?;
    crate::say!(
        "wrote {}, {}, {}, {}, {}, {} in {}",
        layout::REPORT_TXT,
        layout::REPORT_MD,
        layout::REPORT_FILE,
        layout::REPORT_HTML,
        report::STEPS_SVG,
        report::TIMELINE_SVG,
        run_dir.display()
    );
    let m = crate::html::run_manifest(run_dir);
    crate::output::stdout().write_all(report::text::render(&r, m.as_ref()).as_bytes())?;
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
    if !root.is_dir() {
        return Err(invalid(format!(
            "{}: no such directory (pass --out DIR, the out/ root of `perflab run`)",
            root.display()
        )));
    }
    let b = crate::html::index::write(&root)?;
    crate::say!(
        "index of {} runs, {} KB, built in {} ms",
        b.runs,
        b.bytes / 1024,
        b.millis
    );
    crate::out!("{}", b.path.display());
    Ok(ExitCode::SUCCESS)
}
