//! Reading a run directory (or loose files) into `analyze::Inputs`: the only file I/O of the
//! analysis, all of it through `rundir::read` (bounded, typed; what a read cut, replaced or
//! left out becomes a caveat of the report), every path from `rundir::layout`: plan.json,
//! k6/{requests.csv.gz,summary.json,k6.log} (or k6/g<i>/ per load generator, merged),
//! samples/*.jsonl, logs/.
use crate::analyze::Inputs;
use crate::analyze::k6csv::{self, K6Data};
use crate::analyze::logs::LogDigest;
use crate::analyze::merge;
use crate::analyze::model::{GeneratorSource, LoadModel, Params, Source};
use crate::analyze::samples::Samples;
use crate::analyze::samples::sources::{self, SourcePoint};
use crate::analyze::summary::{self, K6Summary};
use crate::error::invalid;
use crate::experiment::Model;
use crate::plan::Plan;
use crate::rundir::layout::{K6Dir, Layout, SampleFile};
use crate::rundir::read::{self, FileKind, ReadError, RunFile};
use crate::rundir::{self, Manifest};
use std::path::Path;

/// Stream a k6 CSV (plain or gzip) from a file, through the run directory's reader: a gzip
/// stream that breaks is analysed up to its last whole line, a concatenated one refused. Returns
/// the data and the caveats of the read.
pub fn k6_csv(f: &RunFile) -> anyhow::Result<(K6Data, Vec<String>)> {
    let fix = "give the file k6 wrote with --out csv=FILE";
    let (stream, watch) = read::k6_csv(f).map_err(|e| match e {
        ReadError::Missing(_) => invalid(format!("{}: no such file: {fix}", f.path.display())),
        other => other.into_anyhow(),
    })?;
    let piped = stream.is_gzip();
    let data = match k6csv::read_k6_text(stream, piped) {
        Ok(d) => d,
        Err(e @ k6csv::CsvError::Io(_)) => {
            return Err(anyhow::Error::new(e).context(format!("reading {}", f.path.display())));
        }
        // What was read may be bad because the stream broke, or was two files: said with it.
        Err(other) => {
            let why = watch.finish()?.join("; ");
            let why = match why.is_empty() {
                true => why,
                false => format!(" ({why})"),
            };
            return Err(invalid(format!("{}: {other}{why}", f.path.display())));
        }
    };
    Ok((data, watch.finish()?))
}

/// k6's `--summary-export` JSON, and the caveats of reading it.
pub fn k6_summary(f: &RunFile) -> anyhow::Result<(K6Summary, Vec<String>)> {
    let doc = read::doc(f).map_err(|e| match e {
        ReadError::Missing(_) => invalid(format!(
            "{}: no such file: give the file k6 wrote with --summary-export",
            f.path.display()
        )),
        other => other.into_anyhow(),
    })?;
    let s = summary::parse_summary(&doc.text).map_err(|e| {
        invalid(format!(
            "{}: {e} (pass the file k6 wrote with --summary-export)",
            f.path.display()
        ))
    })?;
    Ok((s, doc.notes.caveats()))
}

/// What the k6 log says: (aborted by a threshold, `Insufficient VUs` seen).
pub fn k6_log_flags(text: &str) -> (bool, bool) {
    let aborted = text.contains("stopping test prematurely")
        || text.contains("test aborted")
        || text.contains("Test aborted");
    (aborted, text.contains("Insufficient VUs"))
}

/// [`k6_log_flags`] of k6's log `f`, read line by line (tail-capped, invalid UTF-8 replaced),
/// with the caveats of the read.
pub(crate) fn k6_log(f: &RunFile) -> Result<((bool, bool), Vec<String>), ReadError> {
    let mut flags = (false, false);
    let notes = read::lines(f, |l| {
        let (a, i) = k6_log_flags(l);
        flags = (flags.0 || a, flags.1 || i);
    })?;
    Ok((flags, notes.caveats()))
}

/// The samplers' files under `dir/samples/` (missing files are empty); a torn last line is
/// dropped and its file named in `torn`, what else the read changed goes to `caveats`.
pub fn samples(dir: &Path, caveats: &mut Vec<String>) -> anyhow::Result<Samples> {
    let (l, mut t) = (Layout::new(dir), Vec::new());
    Ok(Samples {
        cgroup: sample_lines(&l, SampleFile::Cgroup, &mut t, caveats)?,
        host: sample_lines(&l, SampleFile::Host, &mut t, caveats)?,
        fpm: sample_lines(&l, SampleFile::Source("fpm"), &mut t, caveats)?,
        pg: sample_lines(&l, SampleFile::Source("pg"), &mut t, caveats)?,
        node: sample_lines(
            &l,
            SampleFile::Source(crate::lab::metrics::SOURCE),
            &mut t,
            caveats,
        )?,
        hostprocs: sample_lines(&l, SampleFile::HostProcs, &mut t, caveats)?,
        sources: source_rows(&l, &mut t, caveats)?,
        access: access_logs(&l, caveats)?,
        torn: t,
    })
}

/// The lines of one samples file, through the bounded reader.
fn sample_lines<T: serde::de::DeserializeOwned>(
    l: &Layout,
    s: SampleFile,
    torn: &mut Vec<String>,
    caveats: &mut Vec<String>,
) -> anyhow::Result<Vec<T>> {
    let f = l.file(l.samples(s), FileKind::Samples);
    let (v, notes, cut) = read::jsonl(&f)?;
    if cut {
        torn.push(f.label);
    }
    caveats.extend(notes.caveats());
    Ok(v)
}

/// The files of the sources the analysis reads through their registry row
/// (`analyze::samples::sources`), by source; lines without the row's columns are left out and
/// said.
fn source_rows(
    l: &Layout,
    torn: &mut Vec<String>,
    caveats: &mut Vec<String>,
) -> anyhow::Result<std::collections::BTreeMap<String, Vec<SourcePoint>>> {
    let mut out = std::collections::BTreeMap::new();
    for row in sources::ROWS {
        let file = SampleFile::Source(row.source);
        let lines: Vec<serde_json::Value> = sample_lines(l, file, torn, caveats)?;
        if lines.is_empty() {
            continue;
        }
        let (points, skipped) = sources::points(row, &lines);
        if skipped > 0 {
            caveats.push(format!(
                "samples/{}: {skipped} line(s) without its figures, left out",
                file.file()
            ));
        }
        out.insert(row.source.to_string(), points);
    }
    Ok(out)
}

/// Read the log `f` line by line into `each` when it is there; a log that is no regular file
/// is left out and said (a caveat), never a reason to lose the report.
fn optional_log(
    f: &RunFile,
    caveats: &mut Vec<String>,
    each: impl FnMut(&str),
) -> anyhow::Result<()> {
    match read::lines(f, each) {
        Ok(notes) => caveats.extend(notes.caveats()),
        Err(e) if e.is_missing() => {}
        Err(e @ (ReadError::NotRegular { .. } | ReadError::TooLarge { .. })) => {
            caveats.push(format!("{}: {}: left out", f.label, e.why()));
        }
        Err(e) => return Err(e.into_anyhow()),
    }
    Ok(())
}

/// `logs/access/{fpm,nginx}.log` (written when the experiment turns access logs on), parsed a
/// megabyte of lines at a time.
fn access_logs(
    l: &Layout,
    caveats: &mut Vec<String>,
) -> anyhow::Result<crate::analyze::access::AccessLogs> {
    use crate::analyze::access;
    fn parsed<T>(
        f: &RunFile,
        caveats: &mut Vec<String>,
        parse: fn(&str) -> (Vec<T>, usize),
        t: fn(&T) -> i64,
    ) -> anyhow::Result<Vec<T>> {
        let (mut out, mut chunk) = (Vec::new(), String::new());
        optional_log(f, caveats, |l| {
            chunk.push_str(l);
            chunk.push('\n');
            if chunk.len() >= 1 << 20 {
                out.extend(parse(&chunk).0);
                chunk.clear();
            }
        })?;
        out.extend(parse(&chunk).0);
        out.sort_by_key(t);
        Ok(out)
    }
    let at = |server: &str| l.file(l.access_log(server), FileKind::AccessLog);
    Ok(access::AccessLogs {
        fpm: parsed(&at("fpm"), caveats, access::parse_fpm, |r| r.t)?,
        nginx: parsed(&at("nginx"), caveats, access::parse_nginx, |r| r.t)?,
    })
}

/// Fill params from the run's plan (`plan.json`): the criteria, the hold, the VU cap, the
/// model and the abort guard the script applied.
pub(crate) fn params_from_plan(plan: &Plan, p: &mut Params) {
    p.slo_p95_ms = plan.slo_p95_ms;
    p.slo_p99_ms = plan.slo_p99_ms.or(p.slo_p99_ms);
    p.error_budget = plan.error_budget;
    p.hold_s = Some(plan.hold_s as f64);
    p.max_vus = Some(plan.vus.max_vus as f64);
    p.think_time_s = plan.think_time_s.or(p.think_time_s);
    p.abort_p95_ms = Some(plan.abort.p95_ms);
    p.model = Some(match plan.model {
        Model::Open => LoadModel::Open,
        Model::Closed => LoadModel::Closed,
    });
}

/// Fill what only the run's manifest knows: the app box's cores (`cpu_layout.app`) and the
/// worker or pool size (`experiment.stack`).
pub(crate) fn params_from_manifest(m: &Manifest, p: &mut Params) {
    p.app_cores = Some(m.cpu_layout.app.len() as f64);
    p.db_cpus = m.cpu_layout.db.cpus().to_vec();
    p.app_cpus = m.cpu_layout.app.cpus().to_vec();
    p.loadgen_cpus = m.cpu_layout.loadgen.cpus().to_vec();
    if p.pool_size.is_none() {
        p.pool_size = m.experiment.stack.slots();
    }
    p.actions = m.measurements.actions.clone();
}

/// What the run's manifest should give the report and does not, as warnings naming the file and
/// what is missing: the CPU ceiling needs `cpu_layout.app`, the pool ceiling the lab's section
/// of `experiment.stack` (php `max_children`, node `pool_max` x `processes`).
pub(crate) fn manifest_warnings(dir: &Path) -> Vec<String> {
    let path = Layout::new(dir).manifest();
    let lost = "so the report has no CPU ceiling (needs cpu_layout.app) and no pool ceiling (needs experiment.stack)";
    let m = match rundir::read_manifest(dir) {
        Ok(m) => m,
        Err(_) if !path.exists() => {
            return vec![format!("{} is missing, {lost}", path.display())];
        }
        Err(e) => {
            return vec![format!(
                "{} cannot be read ({}), {lost}",
                path.display(),
                format!("{e:#}").replace('\n', " ")
            )];
        }
    };
    let mut out = Vec::new();
    if m.cpu_layout.app.is_empty() {
        out.push(format!(
            "{}: cpu_layout.app is empty, so the report has no CPU ceiling",
            path.display()
        ));
    }
    let st = &m.experiment.stack;
    let lab = m.experiment.lab;
    if !st.has(lab) {
        out.push(format!(
            "{}: experiment.stack.{lab} is missing, so the report has no pool ceiling",
            path.display()
        ));
    }
    out
}

/// Digest `dir/logs/*.log` line by line (missing directory: no logs); what reading them changed
/// or left out goes to `caveats`.
pub(crate) fn logs(
    dir: &Path,
    caveats: &mut Vec<String>,
) -> anyhow::Result<std::collections::BTreeMap<String, LogDigest>> {
    let (l, mut out) = (Layout::new(dir), std::collections::BTreeMap::new());
    let Ok(rd) = std::fs::read_dir(l.logs_dir()) else {
        return Ok(out);
    };
    let mut files: Vec<(String, RunFile)> = rd
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".log").unwrap_or(&name).to_string();
            (stem, l.file(l.logs_dir().join(&name), FileKind::Log))
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (stem, f) in files {
        let mut d = LogDigest::default();
        optional_log(&f, caveats, |l| d.add_line(l))?;
        out.insert(stem, d);
    }
    Ok(out)
}

/// The per-instance folders `k6/g0`, `k6/g1`, ... of a run with several load generators, in
/// instance order (empty for a single generator, whose files sit in `k6/`).
pub(crate) fn generator_dirs(dir: &Path) -> Vec<K6Dir> {
    let l = Layout::new(dir);
    let Ok(rd) = std::fs::read_dir(&l.k6().path) else {
        return Vec::new();
    };
    let mut v: Vec<(u32, K6Dir)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let i: u32 = name.strip_prefix('g')?.parse().ok()?;
            e.path().is_dir().then(|| (i, l.generator_named(&name)))
        })
        .collect();
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, k)| k).collect()
}

/// `requests.csv.gz` (or a plain `requests.csv`) of the generator folder `k`, when there.
fn csv_in(l: &Layout, k: &K6Dir) -> Option<RunFile> {
    k.csv_candidates()
        .into_iter()
        .map(|p| l.file(p, FileKind::K6Csv))
        .find(|f| f.path.exists())
}

/// The k6 files of a run, read.
struct K6Run {
    data: K6Data,
    /// The merged summary, when every instance wrote one.
    summary: Option<K6Summary>,
    /// [`k6_log_flags`] over the k6 log(s), when any could be read.
    flags: Option<(bool, bool)>,
    /// The CSV label for the report.
    label: String,
    /// The per-instance sources of several generators.
    sources: Vec<GeneratorSource>,
}

/// What one k6 instance wrote: its data, its summary, and what its log says (when it could be
/// read).
type K6Instance = (K6Data, Option<K6Summary>, Option<(bool, bool)>);

/// The CSV, summary and log of one k6 instance in `k` (`k6`, `k6/g0`); a log that cannot be
/// read is a caveat.
fn k6_instance(
    l: &Layout,
    k: &K6Dir,
    csv: &RunFile,
    caveats: &mut Vec<String>,
) -> anyhow::Result<K6Instance> {
    let (data, c) = k6_csv(csv)?;
    caveats.extend(c);
    let sum = l.file(k.summary(), FileKind::K6Summary);
    let summary = match sum.path.exists() {
        true => {
            let (s, c) = k6_summary(&sum)?;
            caveats.extend(c);
            Some(s)
        }
        false => None,
    };
    let log = l.file(k.log(), FileKind::K6Log);
    let flags = match k6_log(&log) {
        Ok((flags, c)) => {
            caveats.extend(c);
            Some(flags)
        }
        Err(e) if e.is_missing() => None,
        Err(e) => {
            caveats.push(format!("{}: {}: left out", log.label, e.why()));
            None
        }
    };
    Ok((data, summary, flags))
}

/// The k6 data of a run: `k6/requests.csv.gz`, or every `k6/g<i>/` merged (one generator
/// each); what reading the files changed goes to `caveats`.
fn k6_of_run(dir: &Path, caveats: &mut Vec<String>) -> anyhow::Result<K6Run> {
    let (l, gens) = (Layout::new(dir), generator_dirs(dir));
    let (k6, csv_label) = (l.k6(), |k: &K6Dir| l.rel(&k.requests_csv_gz()));
    if gens.is_empty() || csv_in(&l, &k6).is_some() {
        let Some(csv) = csv_in(&l, &k6) else {
            return Err(invalid(format!(
                "{}: no {}: the run did not get to measure (see its status and {})",
                dir.display(),
                csv_label(&k6),
                l.rel(&k6.log())
            )));
        };
        let (data, summary, flags) = k6_instance(&l, &k6, &csv, caveats)?;
        return Ok(K6Run {
            data,
            summary,
            flags,
            label: csv_label(&k6),
            sources: Vec::new(),
        });
    }
    let (mut parts, mut sums, mut sources) = (Vec::new(), Vec::new(), Vec::new());
    let mut flags: Option<(bool, bool)> = None;
    for g in &gens {
        let name = g
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let csv = csv_in(&l, g).ok_or_else(|| {
            invalid(format!(
                "{}: no requests.csv.gz: load generator {name} did not get to measure (see its k6.log)",
                g.path.display()
            ))
        })?;
        let (d, sum, f) = k6_instance(&l, g, &csv, caveats)?;
        sources.push(GeneratorSource {
            csv: csv_label(g),
            requests: d.requests,
            first_request_ms: d.first_request_ms,
            dropped: d.dropped_total,
        });
        parts.push(d);
        sums.extend(sum);
        if let Some((a, i)) = f {
            let (a0, i0) = flags.unwrap_or_default();
            flags = Some((a0 || a, i0 || i));
        }
    }
    Ok(K6Run {
        data: merge::merge_k6(parts),
        summary: (sums.len() == gens.len()).then(|| merge::merge_summaries(sums)),
        flags,
        label: format!(
            "{} ({} generators, merged)",
            csv_label(&l.generator_named("g*")),
            gens.len()
        ),
        sources,
    })
}

/// Everything `analyze_run` needs from a run directory.
pub fn run_dir(dir: &Path) -> anyhow::Result<Inputs> {
    let l = Layout::new(dir);
    if !dir.is_dir() {
        return Err(invalid(format!(
            "{} is not a run directory (expected {} inside)",
            dir.display(),
            l.rel(&l.k6().requests_csv_gz())
        )));
    }
    let mut caveats = Vec::new();
    let k6 = k6_of_run(dir, &mut caveats)?;
    let summary = k6.summary;
    let mut params = Params::new(
        summary
            .as_ref()
            .and_then(K6Summary::slo_p95_ms)
            .unwrap_or(0.0),
    );
    params.slo_p99_ms = summary.as_ref().and_then(K6Summary::slo_p99_ms);
    if l.plan().exists() {
        let plan = rundir::read_plan(dir).map_err(|e| invalid(format!("{e:#}")))?;
        params_from_plan(&plan, &mut params);
    }
    // An unreadable manifest costs the ceilings, not the report (`manifest_warnings` says so).
    let manifest = rundir::read_manifest(dir).ok();
    if let Some(m) = &manifest {
        params_from_manifest(m, &mut params);
    }
    if params.slo_p95_ms <= 0.0 {
        return Err(invalid(format!(
            "{}: no SLO: neither {} (slo_p95_ms) nor {} (a per-step `p(95)<N` threshold) gives one",
            dir.display(),
            l.rel(&l.plan()),
            l.rel(&l.k6().summary())
        )));
    }
    if let Some((aborted, insufficient)) = k6.flags {
        params.aborted = Some(aborted);
        params.insufficient_vus = insufficient;
    }
    let summary_label = summary.as_ref().map(|_| {
        if k6.sources.is_empty() {
            l.rel(&l.k6().summary())
        } else {
            format!(
                "{} (counts summed)",
                l.rel(&l.generator_named("g*").summary())
            )
        }
    });
    let samples = samples(dir, &mut caveats)?;
    let logs = logs(dir, &mut caveats)?;
    // The run's own name, so that a copied or renamed run directory reports the same.
    let title = match &manifest {
        Some(m) => m.run_id.clone(),
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    Ok(Inputs {
        k6: k6.data,
        summary,
        samples,
        params,
        logs,
        source: Source {
            title,
            summary: summary_label,
            csv: k6.label,
            generators: k6.sources,
            ..Default::default()
        },
        caveats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Catalog, CatalogEntry};
    use crate::plan::PlanOptions;

    fn experiment(id: &str) -> crate::experiment::Experiment {
        let cat = Catalog::load(
            Path::new("experiments"),
            &crate::verify::quantities::Quantities,
        )
        .unwrap();
        let CatalogEntry::Experiment(e) = &cat.get(id).unwrap().entry else {
            panic!("{id}")
        };
        e.clone()
    }

    #[test]
    fn params_come_from_the_plan_and_the_manifest() {
        let mut e = experiment("1c");
        let node = e.stack.node.as_mut().unwrap();
        (node.processes, node.pool_max) = (2, 10);
        let plan = crate::plan::build(&e, PlanOptions { quick: true });
        let out = tempfile::tempdir().unwrap();
        let run = rundir::RunDir::create(out.path(), &e.id, 1).unwrap();
        let layout =
            crate::plan::layout::auto(&crate::plan::CpuSet::parse("0-3").unwrap()).unwrap();
        let m = Manifest::new(&run, e.clone(), vec![], plan.clone(), layout.clone());
        let mut p = Params::new(0.0);
        params_from_plan(&plan, &mut p);
        params_from_manifest(&m, &mut p);
        assert_eq!(p.slo_p95_ms, e.load.slo_p95_ms);
        assert_eq!(p.hold_s, Some(plan.hold_s as f64));
        assert!(plan.hold_s < e.load.hold_s, "--quick scales the hold");
        assert_eq!(p.max_vus, Some(plan.vus.max_vus as f64));
        assert_eq!(p.model, Some(LoadModel::Open));
        assert_eq!(p.abort_p95_ms, Some(plan.abort.p95_ms));
        assert_eq!(p.app_cores, Some(layout.app.len() as f64));
        assert_eq!(p.pool_size, Some(20), "2 processes x pool 10");
        let closed = crate::plan::build(&experiment("demo-closed"), PlanOptions::default());
        params_from_plan(&closed, &mut p);
        assert_eq!(
            (p.model, p.think_time_s),
            (Some(LoadModel::Closed), Some(1.0))
        );
    }

    #[test]
    fn a_manifest_without_its_labs_section_has_no_pool_ceiling() {
        let out = tempfile::tempdir().unwrap();
        let layout =
            crate::plan::layout::auto(&crate::plan::CpuSet::parse("0-3").unwrap()).unwrap();
        for id in ["exp1", "1c", "demo-open"] {
            let mut e = experiment(id);
            let plan = crate::plan::build(&e, PlanOptions { quick: true });
            let run = rundir::RunDir::create(out.path(), &e.id, 1).unwrap();
            let m = Manifest::new(&run, e.clone(), vec![], plan.clone(), layout.clone());
            run.write_manifest(&m).unwrap();
            assert!(manifest_warnings(&run.path).is_empty(), "{id}");
            e.stack = Default::default();
            let m = Manifest::new(&run, e.clone(), vec![], plan, layout.clone());
            run.write_manifest(&m).unwrap();
            let w = manifest_warnings(&run.path);
            assert_eq!(w.len(), 1, "{id}: {w:?}");
            let want = format!(
                "experiment.stack.{} is missing, so the report has no pool ceiling",
                e.lab
            );
            assert!(w[0].ends_with(&want), "{id}: {w:?}");
        }
    }

    #[test]
    fn k6_log_abort_and_insufficient_vus() {
        let log = r#"time="2026-11-30T00:46:54Z" level=error msg="thresholds on metrics 'http_req_duration' were crossed; at least one has abortOnFail enabled, stopping test prematurely"
time="2026-11-30T00:47:06Z" level=warning msg="Insufficient VUs, reached 6 active VUs and cannot initialize more""#;
        assert_eq!(k6_log_flags(log), (true, true));
        assert_eq!(
            k6_log_flags("level=warning msg=\"Request Failed\""),
            (false, false)
        );
    }
}
