//! The fuzz targets' entry functions, shared by `fuzz/fuzz_targets/*.rs` (cargo fuzz) and
//! `tests/offline/fuzz_replay.rs` (plain `cargo test`), so a corpus file exercises the same code in
//! both. Each takes arbitrary bytes and may return errors, never panic, hang or blow up memory.
#![allow(dead_code)]
use perflab::analyze::{self, Params, k6csv, samples};
use perflab::claim::expr::{ArgValue, Name, Resolve};
use perflab::claim::{Bound, compile};
use perflab::experiment::{Catalog, CatalogEntry, Experiment, catalog, groups, overrides};
use perflab::plan::{self, PlanOptions};
use perflab::rundir::samples::parse_jsonl_torn_tail;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Experiment YAML through parsing, validation and planning (normal and `--quick`).
pub fn experiment_yaml(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    if let Ok((CatalogEntry::Experiment(e), _)) = catalog::parse_entry(
        Path::new("fuzz.yaml"),
        &src,
        &perflab::verify::quantities::Quantities,
    ) {
        plan_both(&e);
    }
}

fn plan_both(e: &Experiment) {
    for quick in [false, true] {
        let p = plan::build(e, PlanOptions { quick });
        let _ = serde_json::to_string(&p).expect("a plan serializes");
    }
}

/// A k6 CSV through `perflab analyze`'s path: the reader, the analysis, its renderings.
pub fn k6_csv(data: &[u8]) {
    if let Ok(k6) = k6csv::read_k6_csv(std::io::Cursor::new(data.to_vec())) {
        analyze_and_render(k6, samples::Samples::default());
    }
}

fn analyze_and_render(k6: k6csv::K6Data, samples: samples::Samples) {
    let inputs = analyze::Inputs {
        k6,
        summary: None,
        samples,
        params: Params::new(100.0),
        logs: Default::default(),
        source: Default::default(),
        caveats: Vec::new(),
    };
    if let Ok(r) = analyze::analyze_run(inputs) {
        let _ = serde_json::to_string(&r.to_analyze_json()).expect("serializes");
        let _ = perflab::rundir::report::to_json(&r);
        let _ = perflab::report::text::render(&r, None);
        let _ = perflab::report::markdown::render(&r, None, &[]);
    }
}

/// A small real-shaped k6 CSV the sampler inputs are analysed against.
const BASE_CSV: &str = "metric_name,timestamp,metric_value,expected_response,status,extra_tags\n\
http_req_duration,1700000000100,40,true,200,stage=r0010\n\
http_req_duration,1700000001100,45,true,200,stage=r0010\n\
http_req_duration,1700000002100,900,false,500,stage=r0020\n\
http_req_duration,1700000003100,50,true,200,stage=r0020\n\
vus,1700000001000,3,,,\n";

/// Sampler JSONL: the first byte picks the sampler (cgroup, host, fpm, pg, node), the rest is the
/// file, read as `perflab report` reads it (a torn last line dropped); parsed samples go through
/// the analysis of a small run.
pub fn samples_jsonl(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut s = samples::Samples::default();
    let ok = match which % 5 {
        0 => parse_jsonl_torn_tail(&text).map(|v| s.cgroup = v.0).is_ok(),
        1 => parse_jsonl_torn_tail(&text).map(|v| s.host = v.0).is_ok(),
        2 => parse_jsonl_torn_tail(&text).map(|v| s.fpm = v.0).is_ok(),
        3 => parse_jsonl_torn_tail(&text).map(|v| s.pg = v.0).is_ok(),
        _ => parse_jsonl_torn_tail(&text).map(|v| s.node = v.0).is_ok(),
    };
    if ok {
        s.sort();
        let k6 = k6csv::read_k6_csv(std::io::Cursor::new(BASE_CSV.as_bytes().to_vec()))
            .expect("the base CSV parses");
        analyze_and_render(k6, s);
    }
}

/// `manifest.json`, a line `---`, then `report.json`: the run directory's typed readers, then
/// what `compare` and `verify` do with them (every catalog experiment's claims on the run).
pub fn run_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (m, r) = text.split_once("\n---\n").unwrap_or((&text, ""));
    let manifest = perflab::rundir::Manifest::parse(m);
    let report = perflab::rundir::report::parse(r);
    let (Ok(manifest), Ok(report)) = (manifest, report) else {
        return;
    };
    use perflab::verify::compare;
    let c = compare::compare(("a", &report, &manifest), ("b", &report, &manifest));
    let _ = compare::render_text(&c);
    let run = ("r", &report, &manifest);
    let rounds = compare::compare_rounds(&[run, run], &[run]);
    let _ = compare::render::text(&rounds);
    let _ = serde_json::to_string(&rounds).expect("a comparison serializes");
    let view = perflab::verify::RunView {
        label: "fuzz",
        report: &report,
        manifest: &manifest,
    };
    for e in experiments() {
        let _ = perflab::verify::findings::verify_run(e, view, &|_| Some(view));
    }
}

/// The catalog's experiments, parsed once.
fn experiments() -> &'static [Experiment] {
    static CAT: OnceLock<Vec<Experiment>> = OnceLock::new();
    CAT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments");
        let dir = if dir.is_dir() {
            dir
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments")
        };
        let cat =
            perflab::experiment::Catalog::load(&dir, &perflab::verify::quantities::Quantities)
                .expect("the catalog loads");
        cat.files
            .into_values()
            .filter_map(|f| match f.entry {
                CatalogEntry::Experiment(e) => Some(e),
                CatalogEntry::Group(_) => None,
            })
            .collect()
    })
}

/// CLI strings: the first line is a `--cpus` value, each further line a `--set KEY=VALUE`
/// applied to a catalog experiment (the first byte picks which), then planned.
pub fn cli_strings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let cpus = lines.next().unwrap_or("");
    let _ = perflab::host::parse_cpu_list(cpus);
    let online = plan::CpuSet::new((0..8).collect());
    for force in [false, true] {
        let _ = plan::layout::resolve(&online, Some(cpus), force);
    }
    let sets: Vec<String> = lines.map(str::to_string).collect();
    let exps = experiments();
    let e = &exps[data.first().copied().unwrap_or(0) as usize % exps.len()];
    if let Ok((e, _)) = overrides::apply(e, &sets) {
        plan_both(&e);
    }
}

/// Every name worth its length, every call the sum of its numbers: an evaluation that reads
/// whatever an expression names.
struct AnyValue;

impl Resolve for AnyValue {
    type Err = String;
    fn name(&mut self, n: &Name) -> Result<f64, String> {
        Ok(n.text.len() as f64 - 4.0)
    }
    fn call(&mut self, _: &str, args: &[ArgValue<'_>]) -> Result<f64, String> {
        Ok(args
            .iter()
            .map(|a| match a {
                ArgValue::Num(v) => *v,
                ArgValue::Str(s) => s.len() as f64,
            })
            .sum())
    }
}

/// One expression (claim or fit language): parsed, printed, checked for constant faults and
/// evaluated; then compiled and validated as a claim's value and bound on a catalog experiment
/// with a `fit:`, and checked, evaluated and applied as its first fit rule and its peak probe.
pub fn expression(data: &[u8]) {
    let text = String::from_utf8_lossy(data).into_owned();
    if let Ok(e) = perflab::claim::parse(&text) {
        let _ = (
            e.to_string(),
            e.names().len(),
            e.calls().len(),
            e.as_number(),
        );
        let _ = (e.constant_fault(), e.eval(&mut AnyValue));
    }
    let base = experiments()
        .iter()
        .find(|e| e.fit.is_some() && !e.expect.is_empty())
        .expect("a catalog experiment with fit rules and claims");
    let mut x = base.clone();
    let c = &mut x.expect[0];
    (c.value, c.min, c.max) = (text.clone(), Some(Bound::Expr(text.clone())), None);
    (c.equals, c.near, c.within) = (None, None, None);
    let _ = compile(c);
    let d = perflab::experiment::validate::check_experiment(Path::new("fuzz.yaml"), &x);
    let _ = perflab::experiment::diag::render(&d);
    let mut q = perflab::plan::fit::published(base, 1, 1);
    for (i, f) in perflab::experiment::fit::FitQ::ALL.iter().enumerate() {
        q.entry(f.name().to_string()).or_insert(1.5 + i as f64);
    }
    let _ = perflab::plan::fit::evaluate(&text, &q);
    let mut fit = base.fit.clone().expect("has a fit");
    fit.rules[0].to = text.clone();
    fit.calibrate.peak = Some(text);
    let mut y = base.clone();
    y.fit = Some(fit.clone());
    let _ = perflab::experiment::validate::check_experiment(Path::new("fuzz.yaml"), &y);
    let _ = perflab::plan::fit::apply(base, &fit, &q);
}

/// Catalog files separated by `---` lines, each named after its `id:` (else `doc<N>`), loaded
/// as one catalog (a group bomb, cycles, deep nesting); every entry's lab and extent read and
/// every entry within bounds expanded, never past the member bound.
pub fn catalog(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let sources = text.split("\n---\n").enumerate().map(|(i, doc)| {
        let id = doc.lines().find_map(|l| l.strip_prefix("id:"));
        let id = id.map_or_else(|| format!("doc{i}"), |v| v.trim().to_string());
        (PathBuf::from(format!("{id}.yaml")), Ok(doc.to_string()))
    });
    let cat = match Catalog::from_sources(
        Path::new("fuzz"),
        sources,
        &perflab::verify::quantities::Quantities,
    ) {
        Ok(cat) => cat,
        Err(d) => {
            let _ = perflab::experiment::diag::render(&d);
            return;
        }
    };
    for id in cat.files.keys() {
        let _ = (cat.lab_of(id), cat.extent(id));
        if let Ok(v) = cat.expand(id) {
            assert!(
                v.len() as u64 <= groups::MAX_MEMBERS,
                "{id} expands to {}",
                v.len()
            );
        }
    }
}

/// A matrix plan file's text: parsed as `matrix run` and `matrix status` read it; one that
/// parses renders back to the same cells and gives the runners' commands and Slurm script.
pub fn plan_file(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        perflab::matrix::planfile::fuzz_text(text);
    }
}

/// A hosts file's text (`matrix run --hosts`): every login it yields is one line GNU parallel
/// takes as an `--sshlogin`, never an option, a comment or two lines.
pub fn hosts_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(logins) = perflab::matrix::hosts::parse_hosts(text) {
        assert!(!logins.is_empty() && logins.len() <= perflab::matrix::hosts::MAX_HOSTS);
        for l in &logins {
            assert!(
                !l.is_empty()
                    && l.len() <= perflab::matrix::hosts::MAX_LOGIN
                    && !l.starts_with('-')
                    && !l.contains('#')
                    && !l.chars().any(char::is_control),
                "{l:?}"
            );
        }
        let mut sorted = logins.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), logins.len(), "a login twice");
    }
}
