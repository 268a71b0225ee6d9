//! `out/index.html`: every run directory under an out/ root at a glance, one row per run,
//! grouped by experiment, read through the typed readers (status, manifest, report.json).
use super::index_page::IndexRow;
use crate::analyze::Report;
use crate::experiment::catalog::Catalog;
use crate::rundir::{self, Manifest, RunDir, RunState};
use crate::verify::quantities::Quantities;
use chrono::Utc;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) const INDEX_HTML: &str = "index.html";

/// The folder of the pages under out/.
pub(crate) const HISTORY_DIR: &str = "history";

/// The page of experiment `exp` under `out_root`, when it was written.
pub(crate) fn page_of(out_root: &Path, exp: &str) -> Option<String> {
    let name = format!("{exp}.html");
    out_root
        .join(HISTORY_DIR)
        .join(&name)
        .is_file()
        .then(|| super::report_page::href([HISTORY_DIR, name.as_str()]))
}

/// What building the index did.
#[derive(Debug, Clone)]
pub struct IndexBuilt {
    pub path: PathBuf,
    pub runs: usize,
    pub bytes: usize,
    pub millis: u128,
}

fn state_str(s: RunState) -> &'static str {
    match s {
        RunState::Running => "running",
        RunState::Complete => "complete",
        RunState::Failed => "failed",
        RunState::Aborted => "aborted",
    }
}

fn is_host_caveat(c: &str) -> bool {
    let l = c.to_lowercase();
    ["steal", "shar", "host", "cpus", "noisy"]
        .iter()
        .any(|k| l.contains(k))
}

/// A row, with the run's report and manifest when both could be read (for the compare pages).
pub(crate) fn load_row(
    run: &RunDir,
    catalog: Option<&Catalog>,
) -> (IndexRow, Option<(Report, Manifest)>) {
    let status = run.status().ok();
    let manifest = run.read_manifest().ok();
    let report = crate::rundir::read_report(&run.path).ok();
    let mut caveats: Vec<String> = manifest
        .iter()
        .flat_map(|m| m.caveats.iter())
        .chain(report.iter().flat_map(|r| r.warnings.iter()))
        .filter(|c| is_host_caveat(c))
        .cloned()
        .collect();
    caveats.dedup();
    let claims = match (&report, &manifest) {
        (Some(r), Some(m)) => {
            let label = format!("{}/{}", run.experiment_id, run.name());
            let c = super::report::claims_of(r, m, &label, catalog);
            (!c.is_empty()).then(|| crate::verify::render::tally(&c))
        }
        _ => None,
    };
    let html = run.file(super::REPORT_HTML);
    let name = run.name();
    let linkable = super::linkable_run(&run.experiment_id, &name);
    let row = IndexRow {
        experiment: run.experiment_id.clone(),
        run: name.clone(),
        round: run.round,
        created: run.created,
        suite: manifest.as_ref().and_then(crate::verify::load::suite_of),
        versions: manifest
            .as_ref()
            .map(|m| {
                crate::verify::findings::key_versions(&m.experiment.lab.to_string(), &m.components)
            })
            .unwrap_or_default(),
        state: status
            .as_ref()
            .map_or("unreadable", |s| state_str(s.state))
            .to_string(),
        reason: status.and_then(|s| s.reason),
        knee: report
            .as_ref()
            .and_then(|r| r.knee.map(|k| (k, r.unit().to_string()))),
        has_report: report.is_some(),
        claims,
        caveats,
        href: (linkable && html.is_file())
            .then(|| super::href([run.experiment_id.as_str(), &name, super::REPORT_HTML])),
        max_sustainable: report
            .as_ref()
            .and_then(|r| r.refine.as_ref())
            .and_then(|f| f.max_sustainable),
        compare_href: None,
        compare_verdict: None,
        host: manifest.as_ref().and_then(|m| m.host.hostname.clone()),
        host_title: manifest.as_ref().map(host_title),
    };
    (row, report.zip(manifest))
}

/// The host's CPU model, its compute speed before the loads and the cell's scheduler job.
fn host_title(m: &Manifest) -> String {
    let mut t = m.host.cpu_model.clone().unwrap_or_else(|| "CPU ?".into());
    if let Some(c) = m
        .measurements
        .host_speed
        .as_ref()
        .and_then(|s| s.before.compute())
    {
        t.push_str(&format!(", compute {c:.0} Mops/s"));
    }
    if let Some(job) = m.measurements.cell.as_ref().and_then(|c| c.job.as_ref()) {
        t.push_str(&format!(", {job}"));
    }
    t
}

/// Every run under `out_root`, one experiment after the other, each read once: its row, and
/// (a complete run) its report and manifest handed to the compare pages, which hold only the
/// batch being read and the one before it per suite. A row holds no report, so the index's
/// memory does not grow with the reports of out/.
fn load_rows(out_root: &Path) -> anyhow::Result<Vec<IndexRow>> {
    let catalog = Catalog::load(&crate::experiment::catalog::default_dir(), &Quantities).ok();
    let mut rows = Vec::new();
    for exp in rundir::experiments(out_root) {
        let mut pages = super::index_compare::Pages::new(out_root);
        for run in rundir::list_runs(out_root, Some(&exp)) {
            let (row, loaded) = load_row(&run, catalog.as_ref());
            let complete = row.state == "complete";
            rows.push(row);
            if let Some((report, manifest)) = loaded.filter(|_| complete) {
                let l = super::index_compare::Loaded::new(run.path.clone(), report, manifest);
                pages.add(&mut rows, l)?;
            }
        }
        pages.finish(&mut rows)?;
    }
    Ok(rows)
}

/// `perflab index`: [`write`] on an existing out/ root (else bad input, exit 2), its size and
/// time said on stderr.
pub(crate) fn write_root(out_root: &Path) -> anyhow::Result<IndexBuilt> {
    if !out_root.is_dir() {
        return Err(crate::error::invalid(format!(
            "{}: no such directory (pass --out DIR, the out/ root of `perflab run`)",
            out_root.display()
        )));
    }
    let b = write(out_root)?;
    let (runs, kb, ms) = (b.runs, b.bytes / 1024, b.millis);
    crate::say!("index of {runs} runs, {kb} KB, built in {ms} ms");
    Ok(b)
}

/// Build `out_root/index.html` over every run directory, and the compare pages it links.
pub fn write(out_root: &Path) -> anyhow::Result<IndexBuilt> {
    let t0 = Instant::now();
    let rows = load_rows(out_root)?;
    let history = |exp: &str| page_of(out_root, exp);
    let page = super::index_page::render(&rows, Utc::now(), &history);
    let path = out_root.join(INDEX_HTML);
    crate::atomic::write_atomic(&path, page.as_bytes())?;
    Ok(IndexBuilt {
        path,
        runs: rows.len(),
        bytes: page.len(),
        millis: t0.elapsed().as_millis(),
    })
}

/// After a `perflab run` round: rebuild the index; a failure is a note, never the run's.
pub(crate) fn rebuild_after_round(out_root: &Path) {
    if let Err(e) = write(out_root) {
        crate::say!(
            "note: {} not rebuilt: {e:#}",
            out_root.join(INDEX_HTML).display()
        );
    }
}
