//! The index's compare pages: the rounds of one `perflab run --rounds N` (a batch: r1, r2, ...
//! created one after the other) against the previous batch of the same experiment and suite,
//! written to `out/compare/<experiment>/<A's first run>--<B's first run>.html` (never through
//! a symbolic link under out/) and linked from each row of batch B. Two runs that are not neighbours: `perflab compare A B --html FILE`.
use std::path::{Path, PathBuf};

use super::index_page::IndexRow;
use crate::analyze::Report;
use crate::rundir::Manifest;
use crate::verify::compare::{self, Run};

/// Where the compare pages go, under the out/ root.
pub(crate) const COMPARE_DIR: &str = "compare";

/// A complete run's report and manifest, as the index read them (the report without its
/// per-second rows, which the pages do not show).
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub dir: PathBuf,
    pub report: Report,
    pub manifest: Manifest,
}

impl Loaded {
    pub(crate) fn new(dir: PathBuf, mut report: Report, manifest: Manifest) -> Loaded {
        report.timeline = Vec::new();
        report.per_second = Vec::new();
        report.logs.clear();
        Loaded {
            dir,
            report,
            manifest,
        }
    }
}

/// One batch: its rows (indexes into the index's rows) and their runs, in order.
#[derive(Default)]
struct Batch {
    rows: Vec<usize>,
    runs: Vec<Loaded>,
}

impl Batch {
    fn side<'a>(&'a self, labels: &'a [String]) -> Vec<Run<'a>> {
        self.runs
            .iter()
            .zip(labels)
            .map(|(l, label)| (label.as_str(), &l.report, &l.manifest))
            .collect()
    }
}

/// The compare pages of one experiment, made as its runs are read (oldest first): the
/// complete runs with a report, whose folders are linkable (the page's path and links are made
/// of them), grouped by suite into batches. A batch starts at round 1, or wherever the round
/// number does not follow the previous run's of its suite; each batch gets a page against the
/// batch before it of the same suite. Per suite only the batch being read and the one before
/// it are held. A run is one round: a folder whose manifest has the run id of a run already
/// read is a copy, left out of the batches and named in its row's caveats.
pub(crate) struct Pages<'a> {
    out_root: &'a Path,
    /// run id -> the row of the run read first
    seen: std::collections::HashMap<String, usize>,
    /// per suite: the batch before, and the batch being read
    suites: std::collections::BTreeMap<Option<String>, (Option<Batch>, Batch)>,
    pub(crate) written: usize,
}

impl<'a> Pages<'a> {
    pub(crate) fn new(out_root: &'a Path) -> Pages<'a> {
        Pages {
            out_root,
            seen: Default::default(),
            suites: Default::default(),
            written: 0,
        }
    }

    /// The last row of `rows` is `run`'s: it joins its suite's batch or starts the next one
    /// (the batch it ends gets its page).
    pub(crate) fn add(&mut self, rows: &mut [IndexRow], run: Loaded) -> anyhow::Result<()> {
        let i = rows.len() - 1;
        if !super::linkable_run(&rows[i].experiment, &rows[i].run) {
            return Ok(());
        }
        if let Some(&first) = self.seen.get(&run.manifest.run_id) {
            let note = format!(
                "a copy of {}/{} (run id {}), counted once",
                rows[first].experiment, rows[first].run, run.manifest.run_id
            );
            rows[i].caveats.push(note);
            return Ok(());
        }
        self.seen.insert(run.manifest.run_id.clone(), i);
        let suite = rows[i].suite.clone();
        let (before, cur) = self.suites.entry(suite).or_default();
        let follows = cur
            .rows
            .last()
            .is_some_and(|&p| rows[i].round == rows[p].round + 1);
        if !follows && !cur.rows.is_empty() {
            let done = std::mem::take(cur);
            if let Some(b) = before.as_ref() {
                self.written += write_page(self.out_root, rows, b, &done)?;
            }
            *before = Some(done);
        }
        cur.rows.push(i);
        cur.runs.push(run);
        Ok(())
    }

    /// The experiment's runs are all read: each suite's last batch gets its page.
    pub(crate) fn finish(&mut self, rows: &mut [IndexRow]) -> anyhow::Result<()> {
        for (before, cur) in std::mem::take(&mut self.suites).into_values() {
            if let Some(b) = before.filter(|_| !cur.rows.is_empty()) {
                self.written += write_page(self.out_root, rows, &b, &cur)?;
            }
        }
        Ok(())
    }
}

/// A batch's verdict against the previous batch in a few words: the verdict and, when the CPU
/// signal has an estimate, B/A - 1 of the CPU per ok request ("regressed +12 %").
pub(crate) fn batch_verdict(c: &compare::RoundsComparison) -> String {
    match c.cpu.test.as_ref() {
        Some(t) => format!("{} {:+.0} %", c.verdict.as_str(), (t.ratio - 1.0) * 100.0),
        None => c.verdict.as_str().to_string(),
    }
}

/// Batch `b`'s page against batch `a` (its suite's previous batch), and `b`'s rows pointed at
/// it. Returns the pages written (1).
fn write_page(
    out_root: &Path,
    rows: &mut [IndexRow],
    a: &Batch,
    b: &Batch,
) -> anyhow::Result<usize> {
    let (ra, rb) = (&rows[a.rows[0]], &rows[b.rows[0]]);
    let name = format!("{}--{}.html", ra.run, rb.run);
    let exp = rb.experiment.clone();
    let dir = crate::atomic::create_dirs_under(out_root, &[COMPARE_DIR, &exp])?;
    let file = dir.join(&name);
    let rel = super::href([COMPARE_DIR, exp.as_str(), &name]);
    let labels = |x: &Batch| -> Vec<String> {
        x.rows
            .iter()
            .map(|i| format!("{}/{}", rows[*i].experiment, rows[*i].run))
            .collect()
    };
    let (la, lb) = (labels(a), labels(b));
    let c = compare::compare_rounds(&a.side(&la), &b.side(&lb));
    let dirs = |x: &Batch| -> Vec<PathBuf> { x.runs.iter().map(|l| l.dir.clone()).collect() };
    let page = super::compare_page::render(&c, &dirs(a), &dirs(b), &file);
    write_if_changed(&file, page.as_bytes())?;
    let verdict = (batch_verdict(&c), c.why.clone());
    for i in &b.rows {
        rows[*i].compare_href = Some(rel.clone());
        rows[*i].compare_verdict = Some(verdict.clone());
    }
    Ok(1)
}

/// Write `bytes` to `path` (atomically) unless a regular file there already holds them: the
/// index is rebuilt after every round, and its pages of older batches rarely change.
fn write_if_changed(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let same = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()
        .filter(|f| {
            f.metadata()
                .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        })
        .is_some_and(|f| {
            let mut old = Vec::with_capacity(bytes.len());
            f.take(bytes.len() as u64).read_to_end(&mut old).is_ok() && old == bytes
        });
    if !same {
        crate::atomic::write_atomic(path, bytes)?;
    }
    Ok(())
}
