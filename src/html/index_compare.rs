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

/// A complete run's report and manifest, as the index read them.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub dir: PathBuf,
    pub report: Report,
    pub manifest: Manifest,
}

/// The batches of complete runs with a report: indexes into `rows` (oldest first), grouped by
/// experiment and suite, each batch's rounds in order. A batch starts at round 1, or wherever
/// the round number does not follow the previous run's.
pub(crate) fn batches(rows: &[IndexRow], loaded: &[Option<Loaded>]) -> Vec<Vec<usize>> {
    // Only runs whose folders are linkable: the page's path and links are made of them.
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|i| {
            loaded[*i].is_some() && super::linkable_run(&rows[*i].experiment, &rows[*i].run)
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

fn side<'a>(batch: &[usize], loaded: &'a [Option<Loaded>], labels: &'a [String]) -> Vec<Run<'a>> {
    batch
        .iter()
        .filter_map(|i| {
            let l = loaded[*i].as_ref()?;
            Some((labels[*i].as_str(), &l.report, &l.manifest))
        })
        .collect()
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
/// the rows' `compare_href`. Returns the pages written.
pub(crate) fn write_pages(
    out_root: &Path,
    rows: &mut [IndexRow],
    loaded: &[Option<Loaded>],
) -> anyhow::Result<usize> {
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{}/{}", r.experiment, r.run))
        .collect();
    let batches = batches(rows, loaded);
    let mut written = 0;
    for pair in batches.windows(2) {
        let (pa, pb) = (&pair[0], &pair[1]);
        let (ra, rb) = (&rows[pa[0]], &rows[pb[0]]);
        if ra.experiment != rb.experiment || ra.suite != rb.suite {
            continue;
        }
        let name = format!("{}--{}.html", ra.run, rb.run);
        let dir = crate::atomic::create_dirs_under(out_root, &[COMPARE_DIR, &rb.experiment])?;
        let file = dir.join(&name);
        let rel = super::href([COMPARE_DIR, rb.experiment.as_str(), &name]);
        let c = compare::compare_rounds(&side(pa, loaded, &labels), &side(pb, loaded, &labels));
        let dirs = |b: &[usize]| -> Vec<PathBuf> {
            b.iter()
                .filter_map(|i| loaded[*i].as_ref().map(|l| l.dir.clone()))
                .collect()
        };
        let page = super::compare_page::render(&c, &dirs(pa), &dirs(pb), &file);
        crate::atomic::write_atomic(&file, page.as_bytes())?;
        written += 1;
        let verdict = (batch_verdict(&c), c.why.clone());
        for i in pb {
            rows[*i].compare_href = Some(rel.clone());
            rows[*i].compare_verdict = Some(verdict.clone());
        }
    }
    Ok(written)
}
