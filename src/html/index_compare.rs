//! The index's compare pages: the rounds of one `perflab run --rounds N` (a batch: r1, r2, ...
//! created one after the other) against the previous batch of the same experiment and suite,
//! written to `out/compare/<experiment>/<A's first run>--<B's first run>.html` (never through
//! a symbolic link under out/) and linked from each row of batch B. Two runs that are not neighbours: `perflab compare A B --html FILE`.
use std::path::{Path, PathBuf};

use super::index::IndexRow;
use crate::analyze::Report;
use crate::rundir::Manifest;
use crate::verify::compare::{self, Run};

/// Where the compare pages go, under the out/ root.
pub(crate) const COMPARE_DIR: &str = "compare";

/// A complete run's report and manifest, read again for its batch's compare pages (the report
/// without its per-second rows, which the pages do not show).
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub dir: PathBuf,
    pub report: Report,
    pub manifest: Manifest,
}

impl Loaded {
    /// The run at `dir` (`None` when it no longer reads).
    fn read(dir: &Path) -> Option<Loaded> {
        let mut report = crate::rundir::read_report(dir).ok()?;
        report.timeline = Vec::new();
        report.per_second = Vec::new();
        report.logs.clear();
        Some(Loaded {
            dir: dir.to_path_buf(),
            report,
            manifest: crate::rundir::read_manifest(dir).ok()?,
        })
    }
}

/// The batches of complete runs with a report (`comparable[i]`: row i's folder): indexes into
/// `rows` (oldest first), grouped by experiment and suite, each batch's rounds in order. A
/// batch starts at round 1, or wherever the round number does not follow the previous run's.
pub(crate) fn batches(rows: &[IndexRow], comparable: &[Option<PathBuf>]) -> Vec<Vec<usize>> {
    // Only runs whose folders are linkable: the page's path and links are made of them.
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|i| {
            comparable[*i].is_some() && super::linkable_run(&rows[*i].experiment, &rows[*i].run)
        })
        .collect();
    order.sort_by(|a, b| {
        let (x, y) = (&rows[*a], &rows[*b]);
        (&x.experiment, &x.suite, x.created, &x.run).cmp(&(
            &y.experiment,
            &y.suite,
            y.created,
            &y.run,
        ))
    });
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in order {
        let r = &rows[i];
        let follows = out.last().and_then(|b| b.last()).is_some_and(|&p| {
            let q = &rows[p];
            q.experiment == r.experiment && q.suite == r.suite && r.round == q.round + 1
        });
        match out.last_mut() {
            Some(b) if follows => b.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

fn side<'a>(loaded: &'a [Loaded], labels: &'a [String]) -> Vec<Run<'a>> {
    loaded
        .iter()
        .zip(labels)
        .map(|(l, label)| (label.as_str(), &l.report, &l.manifest))
        .collect()
}

/// A batch's runs read again, and their labels.
fn read_batch(
    batch: &[usize],
    rows: &[IndexRow],
    comparable: &[Option<PathBuf>],
) -> (Vec<Loaded>, Vec<String>) {
    batch
        .iter()
        .filter_map(|i| {
            let l = Loaded::read(comparable[*i].as_deref()?)?;
            Some((l, format!("{}/{}", rows[*i].experiment, rows[*i].run)))
        })
        .unzip()
}

/// A batch's verdict against the previous batch in a few words: the verdict and, when the CPU
/// signal has an estimate, B/A - 1 of the CPU per ok request ("regressed +12 %").
pub(crate) fn batch_verdict(c: &compare::RoundsComparison) -> String {
    match c.cpu.test.as_ref() {
        Some(t) => format!("{} {:+.0} %", c.verdict.as_str(), (t.ratio - 1.0) * 100.0),
        None => c.verdict.as_str().to_string(),
    }
}

/// Write every batch's page against the previous batch of its experiment and suite, and set
/// the rows' `compare_href`. Returns the pages written. Two batches are held at a time (each
/// run is read at most twice: as batch B, then as the next page's batch A).
pub(crate) fn write_pages(
    out_root: &Path,
    rows: &mut [IndexRow],
    comparable: &[Option<PathBuf>],
) -> anyhow::Result<usize> {
    let batches = batches(rows, comparable);
    let mut written = 0;
    // the batch read last: the next page's A when it is its previous batch
    let mut held: Option<(usize, (Vec<Loaded>, Vec<String>))> = None;
    for (k, pair) in batches.windows(2).enumerate() {
        let (pa, pb) = (&pair[0], &pair[1]);
        let (ra, rb) = (&rows[pa[0]], &rows[pb[0]]);
        if ra.experiment != rb.experiment || ra.suite != rb.suite {
            continue;
        }
        let name = format!("{}--{}.html", ra.run, rb.run);
        let dir = crate::atomic::create_dirs_under(out_root, &[COMPARE_DIR, &rb.experiment])?;
        let file = dir.join(&name);
        let rel = super::href([COMPARE_DIR, rb.experiment.as_str(), &name]);
        let a = match held.take() {
            Some((i, read)) if i == k => read,
            _ => read_batch(pa, rows, comparable),
        };
        let b = read_batch(pb, rows, comparable);
        let c = compare::compare_rounds(&side(&a.0, &a.1), &side(&b.0, &b.1));
        let dirs = |l: &[Loaded]| -> Vec<PathBuf> { l.iter().map(|l| l.dir.clone()).collect() };
        let page = super::compare_page::render(&c, &dirs(&a.0), &dirs(&b.0), &file);
        crate::atomic::write_atomic(&file, page.as_bytes())?;
        written += 1;
        let verdict = (batch_verdict(&c), c.why.clone());
        for i in pb {
            rows[*i].compare_href = Some(rel.clone());
            rows[*i].compare_verdict = Some(verdict.clone());
        }
        held = Some((k + 1, b));
    }
    Ok(written)
}
