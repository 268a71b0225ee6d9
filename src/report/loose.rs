//! `perflab analyze`: the report of loose k6 files (one or several per-request CSVs, their
//! `--summary-export`s and logs), no run directory: the files and flags checked (bad input,
//! exit 2), read through the bounded reader, merged, analyzed.
use std::path::PathBuf;

use crate::analyze::model::Report;
use crate::analyze::{self, Params};
use crate::error::invalid;
use crate::rundir::inputs;
use crate::rundir::read::{FileKind, RunFile};

/// The files and analysis settings `perflab analyze` is given.
pub(crate) struct Input {
    pub csv: Vec<PathBuf>,
    pub summary: Vec<PathBuf>,
    pub slo_ms: Option<f64>,
    pub slo_p99_ms: Option<f64>,
    pub error_budget: f64,
    pub goodput_tolerance: f64,
    pub hold_s: Option<f64>,
    pub max_vus: Option<f64>,
    pub think_time_s: Option<f64>,
    pub k6_log: Vec<PathBuf>,
}

/// The files `analyze` reads, in the order given, each an existing file: the first real
/// problem of `analyze missing.csv` is the missing file, not a flag.
fn check_inputs(a: &Input) -> anyhow::Result<()> {
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
fn check_numbers(a: &Input) -> anyhow::Result<()> {
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
fn source_of(a: &Input) -> analyze::model::Source {
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

/// `perflab analyze`'s output: the report's text, or with `json` its JSON object.
pub(crate) fn render(a: &Input, json: bool) -> anyhow::Result<String> {
    let r = analyze(a)?;
    Ok(if json {
        serde_json::to_string_pretty(&r.to_analyze_json())? + "\n"
    } else {
        super::text::render(&r, None)
    })
}

/// The report of `a`'s files (bad input, exit 2: a missing file, a flag out of range, no SLO,
/// files the analysis refuses).
fn analyze(a: &Input) -> anyhow::Result<Report> {
    check_inputs(a)?;
    check_numbers(a)?;
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
    let source = source_of(a);
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
    analyze::analyze_run(inputs).map_err(|e| invalid(format!("{csv_label}: {e}")))
}
