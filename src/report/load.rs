//! Reading a run directory (or loose files) into `analyze::Inputs`: the only file I/O of the
//! analysis. Layout: plan.json, k6/{requests.csv.gz,summary.json,k6.log} (or k6/g<i>/ per load
//! generator, merged), samples/*.jsonl.
use crate::analyze::Inputs;
use crate::analyze::k6csv::{self, K6Data};
use crate::analyze::logs::LogDigest;
use crate::analyze::merge;
use crate::analyze::model::{GeneratorSource, LoadModel, Params, Source};
use crate::analyze::samples::{self, Samples};
use crate::analyze::summary::{self, K6Summary};
use crate::error::InvalidInput;
use crate::experiment::Model;
use crate::plan::Plan;
use crate::rundir::{self, Manifest};
use anyhow::Context;
use std::path::Path;

fn invalid(msg: String) -> anyhow::Error {
    anyhow::Error::new(InvalidInput(msg))
}

/// Stream a k6 CSV (plain or gzip) from a file.
pub fn k6_csv(path: &Path) -> anyhow::Result<K6Data> {
    let f = std::fs::File::open(path).map_err(|e| {
        invalid(format!(
            "{}: {e}: give the file k6 wrote with --out csv=FILE",
            path.display()
        ))
    })?;
    k6csv::read_k6_csv(f).map_err(|e| match e {
        k6csv::CsvError::Io(_) => {
            anyhow::Error::new(e).context(format!("reading {}", path.display()))
        }
        other => invalid(format!("{}: {other}", path.display())),
    })
}

pub fn k6_summary(path: &Path) -> anyhow::Result<K6Summary> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        invalid(format!(
            "{}: {e}: give the file k6 wrote with --summary-export",
            path.display()
        ))
    })?;
    summary::parse_summary(&text).map_err(|e| {
        invalid(format!(
            "{}: {e} (pass the file k6 wrote with --summary-export)",
            path.display()
        ))
    })
}

/// What the k6 log says: (aborted by a threshold, `Insufficient VUs` seen).
pub fn k6_log_flags(text: &str) -> (bool, bool) {
    let aborted = text.contains("stopping test prematurely")
        || text.contains("test aborted")
        || text.contains("Test aborted");
    (aborted, text.contains("Insufficient VUs"))
}

/// One sampler file (missing: empty); a torn last line is dropped and its file named in `torn`.
fn jsonl<T: for<'de> serde::Deserialize<'de>>(
    path: &Path,
    torn: &mut Vec<String>,
) -> anyhow::Result<Vec<T>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (v, cut) = samples::parse_jsonl_torn_tail(&text)
        .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    if cut {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        torn.push(format!("samples/{name}"));
    }
    Ok(v)
}

/// The samplers' files under `dir/samples/` (missing files are empty).
pub fn samples(dir: &Path) -> anyhow::Result<Samples> {
    let s = dir.join("samples");
    let mut torn = Vec::new();
    Ok(Samples {
        cgroup: jsonl(&s.join("cgroup.jsonl"), &mut torn)?,
        host: jsonl(&s.join("host.jsonl"), &mut torn)?,
        fpm: jsonl(&s.join("fpm.jsonl"), &mut torn)?,
        pg: jsonl(&s.join("pg.jsonl"), &mut torn)?,
        node: jsonl(&s.join("node.jsonl"), &mut torn)?,
        hostprocs: jsonl(&s.join("hostprocs.jsonl"), &mut torn)?,
        access: access_logs(dir)?,
        torn,
    })
}

/// `logs/access/{fpm,nginx}.log` (written when the experiment turns access logs on).
fn access_logs(dir: &Path) -> anyhow::Result<crate::analyze::access::AccessLogs> {
    use crate::analyze::access;
    let read = |name: &str| -> anyhow::Result<String> {
        let p = dir.join("logs/access").join(name);
        if !p.exists() {
            return Ok(String::new());
        }
        std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
    };
    Ok(access::AccessLogs {
        fpm: access::parse_fpm(&read("fpm.log")?).0,
        nginx: access::parse_nginx(&read("nginx.log")?).0,
    })
}

/// Fill params from the run's plan (`plan.json`): the criteria, the hold, the VU cap, the
/// model and the abort guard the script applied.
pub fn params_from_plan(plan: &Plan, p: &mut Params) {
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
pub fn params_from_manifest(m: &Manifest, p: &mut Params) {
    p.app_cores = Some(m.cpu_layout.app.len() as f64);
    p.db_cpus = m.cpu_layout.db.cpus().to_vec();
    p.app_cpus = m.cpu_layout.app.cpus().to_vec();
    p.loadgen_cpus = m.cpu_layout.loadgen.cpus().to_vec();
    if p.pool_size.is_none() {
        p.pool_size = m.experiment.stack.slots();
    }
}

/// What the run's manifest should give the report and does not, as warnings naming the file and
/// what is missing: the CPU ceiling needs `cpu_layout.app`, the pool ceiling the lab's section
/// of `experiment.stack` (php `max_children`, node `pool_max` x `processes`).
pub fn manifest_warnings(dir: &Path) -> Vec<String> {
    let path = dir.join(rundir::MANIFEST_FILE);
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
    let pool_missing = match m.experiment.lab {
        crate::experiment::Lab::Php => st.php.is_none().then_some("stack.php"),
        crate::experiment::Lab::Node => st.node.is_none().then_some("stack.node"),
        crate::experiment::Lab::Demo => None,
    };
    if let Some(section) = pool_missing {
        out.push(format!(
            "{}: experiment.{section} is missing, so the report has no pool ceiling",
            path.display()
        ));
    }
    out
}

/// Digest `dir/logs/*.log` line by line (missing directory: no logs).
pub fn logs(dir: &Path) -> anyhow::Result<std::collections::BTreeMap<String, LogDigest>> {
    use std::io::BufRead;
    let mut out = std::collections::BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir.join("logs")) else {
        return Ok(out);
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("log") {
            continue;
        }
        let name = p
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let f = std::fs::File::open(&p).with_context(|| format!("opening {}", p.display()))?;
        let mut d = LogDigest::default();
        let mut r = std::io::BufReader::new(f);
        let mut buf = Vec::new();
        while r
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("reading {}", p.display()))?
            > 0
        {
            d.add_line(&String::from_utf8_lossy(&buf));
            buf.clear();
        }
        out.insert(name, d);
    }
    Ok(out)
}

/// The per-instance folders `k6/g0`, `k6/g1`, ... of a run with several load generators, in
/// instance order (empty for a single generator, whose files sit in `k6/`).
pub fn generator_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir.join("k6")) else {
        return Vec::new();
    };
    let mut v: Vec<(u32, std::path::PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let i: u32 = name.strip_prefix('g')?.parse().ok()?;
            e.path().is_dir().then(|| (i, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

fn csv_in(dir: &Path) -> Option<std::path::PathBuf> {
    ["requests.csv.gz", "requests.csv"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
}

/// The k6 data of a run: `k6/requests.csv.gz`, or every `k6/g<i>/` merged (one generator
/// each). Returns the data, the merged summary when every instance wrote one, the k6 log
/// text(s), the CSV label for the report and the per-instance sources.
#[allow(clippy::type_complexity)]
fn k6_of_run(
    dir: &Path,
) -> anyhow::Result<(
    K6Data,
    Option<K6Summary>,
    Option<String>,
    String,
    Vec<GeneratorSource>,
)> {
    let gens = generator_dirs(dir);
    if gens.is_empty() || csv_in(&dir.join("k6")).is_some() {
        let Some(csv) = csv_in(&dir.join("k6")) else {
            return Err(invalid(format!(
                "{}: no k6/requests.csv.gz: the run did not get to measure (see its status and k6/k6.log)",
                dir.display()
            )));
        };
        let k6 = k6_csv(&csv)?;
        let sum_path = dir.join("k6/summary.json");
        let summary = if sum_path.exists() {
            Some(k6_summary(&sum_path)?)
        } else {
            None
        };
        let log = std::fs::read_to_string(dir.join("k6/k6.log")).ok();
        return Ok((k6, summary, log, "k6/requests.csv.gz".into(), Vec::new()));
    }
    let mut parts = Vec::new();
    let mut sums = Vec::new();
    let mut logs = Vec::new();
    let mut sources = Vec::new();
    for g in &gens {
        let name = g
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let csv = csv_in(g).ok_or_else(|| {
            invalid(format!(
                "{}: no requests.csv.gz: load generator {name} did not get to measure (see its k6.log)",
                g.display()
            ))
        })?;
        let d = k6_csv(&csv)?;
        sources.push(GeneratorSource {
            csv: format!("k6/{name}/requests.csv.gz"),
            requests: d.requests,
            first_request_ms: d.first_request_ms,
            dropped: d.dropped_total,
        });
        parts.push(d);
        let sp = g.join("summary.json");
        if sp.exists() {
            sums.push(k6_summary(&sp)?);
        }
        if let Ok(l) = std::fs::read_to_string(g.join("k6.log")) {
            logs.push(l);
        }
    }
    let summary = (sums.len() == gens.len()).then(|| merge::merge_summaries(sums));
    let log = (!logs.is_empty()).then(|| logs.join("\n"));
    let label = format!("k6/g*/requests.csv.gz ({} generators, merged)", gens.len());
    Ok((merge::merge_k6(parts), summary, log, label, sources))
}

/// Everything `analyze_run` needs from a run directory.
pub fn run_dir(dir: &Path) -> anyhow::Result<Inputs> {
    if !dir.is_dir() {
        return Err(invalid(format!(
            "{} is not a run directory (expected k6/requests.csv.gz inside)",
            dir.display()
        )));
    }
    let (k6, summary, k6_log, csv_label, generators) = k6_of_run(dir)?;
    let mut params = Params::new(
        summary
            .as_ref()
            .and_then(K6Summary::slo_p95_ms)
            .unwrap_or(0.0),
    );
    params.slo_p99_ms = summary.as_ref().and_then(K6Summary::slo_p99_ms);
    if dir.join(rundir::PLAN_FILE).exists() {
        let plan = rundir::read_plan(dir).map_err(|e| invalid(format!("{e:#}")))?;
        params_from_plan(&plan, &mut params);
    }
    // An unreadable manifest costs the ceilings, not the report (`manifest_warnings` says so).
    if let Ok(m) = rundir::read_manifest(dir) {
        params_from_manifest(&m, &mut params);
    }
    if params.slo_p95_ms <= 0.0 {
        return Err(invalid(format!(
            "{}: no SLO: neither plan.json (slo_p95_ms) nor k6/summary.json (a per-step `p(95)<N` threshold) gives one",
            dir.display()
        )));
    }
    if let Some(log) = k6_log {
        let (aborted, insufficient) = k6_log_flags(&log);
        params.aborted = Some(aborted);
        params.insufficient_vus = insufficient;
    }
    let summary_label = summary.as_ref().map(|_| {
        if generators.is_empty() {
            "k6/summary.json".to_string()
        } else {
            "k6/g*/summary.json (counts summed)".to_string()
        }
    });
    let samples = samples(dir)?;
    let logs = logs(dir)?;
    let title = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Inputs {
        k6,
        summary,
        samples,
        params,
        logs,
        source: Source {
            title,
            summary: summary_label,
            csv: csv_label,
            generators,
            ..Default::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Catalog, CatalogEntry};
    use crate::plan::PlanOptions;

    fn experiment(id: &str) -> crate::experiment::Experiment {
        let cat = Catalog::load(Path::new("experiments")).unwrap();
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
