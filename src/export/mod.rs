//! Exports of an experiment for other orchestrators: `k8s` (k6-operator's TestRun and an
//! Indexed Job per lab slot), and `perflab export k8s`'s context: its input checked (bad input:
//! exit 2, nothing written), the experiment planned, the k6 script read, the files written.
//! What an export does not cover is in docs/scale-out.md.
pub mod k8s;

use std::path::PathBuf;

use crate::error::{InvalidInput, invalid};
use crate::plan::Slot;
use crate::plan::planning::Planning;
use crate::run::resolve;

/// `perflab export k8s`'s input as given.
pub(crate) struct K8sInput {
    pub experiment: String,
    pub dir: PathBuf,
    pub generators: u32,
    pub registry: String,
    pub suite: String,
    pub k8s_cpus: String,
    pub planning: Planning,
}

/// `loadgen=1,db=1,app=2`: every slot once, 1 to 256 whole CPUs.
fn parse_cpus(s: &str) -> anyhow::Result<[(Slot, u32); 3]> {
    let bad = |why: String| {
        invalid(format!(
            "--k8s-cpus {}: {why}; give loadgen=N,db=N,app=N (whole CPUs, 1-256)",
            s.escape_debug()
        ))
    };
    let mut v: [(Slot, Option<u32>); 3] =
        [(Slot::Loadgen, None), (Slot::Db, None), (Slot::App, None)];
    for part in s.split(',') {
        let (k, n) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("`{part}` is not SLOT=N")))?;
        let n: u32 = n
            .trim()
            .parse()
            .ok()
            .filter(|n| (1..=256).contains(n))
            .ok_or_else(|| bad(format!("`{n}` is not a whole number of CPUs")))?;
        let slot = match k.trim() {
            "loadgen" => 0,
            "db" => 1,
            "app" => 2,
            other => return Err(bad(format!("`{other}` is not a slot"))),
        };
        if v[slot].1.replace(n).is_some() {
            return Err(bad(format!("{} given twice", k.trim())));
        }
    }
    let get = |i: usize| v[i].1.ok_or_else(|| bad("a slot is missing".into()));
    Ok([
        (Slot::Loadgen, get(0)?),
        (Slot::Db, get(1)?),
        (Slot::App, get(2)?),
    ])
}

/// Write the manifests of one experiment into a new (or empty) folder, each file's path on
/// stdout.
pub(crate) fn k8s_files(a: &K8sInput) -> anyhow::Result<()> {
    let suite: crate::images::Suite = a.suite.parse()?;
    let generators = crate::load::segments::check_count(a.generators).map_err(InvalidInput)?;
    let cpus = parse_cpus(&a.k8s_cpus)?;
    if a.registry.is_empty()
        || a.registry.len() > 200
        || !a
            .registry
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/:".contains(&b))
    {
        return Err(invalid(format!(
            "--registry {}: give a registry prefix such as registry.example:5000/perflab",
            a.registry.escape_debug()
        )));
    }
    let p = &a.planning;
    let catalog = resolve::catalog(&p.catalog_dir)?;
    let resolved = resolve::experiments(&catalog, &a.experiment, &p.set, p.options())?;
    let [r] = resolved.as_slice() else {
        return Err(invalid(format!(
            "{}: export one experiment, not a group of {}",
            a.experiment,
            resolved.len()
        )));
    };
    crate::rundir::output_path::check_dir("--dir", &a.dir)?;
    if a.dir.is_dir()
        && std::fs::read_dir(&a.dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(invalid(format!(
            "--dir {}: exists and is not an empty folder; give a new one (nothing is overwritten)",
            a.dir.display()
        )));
    }
    let script = crate::load::invocation(&r.plan, "http://x").script;
    let script_path = crate::images::recipe::repo_root()
        .join("labs/k6")
        .join(script);
    let script_text = std::fs::read_to_string(&script_path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", script_path.display()))?;
    let e = k8s::Export {
        experiment: &r.experiment,
        plan: &r.plan,
        generators,
        cpus,
        registry: a.registry.clone(),
        suite: suite.as_str().to_string(),
        script_text,
        ctx: crate::lab::StartContext {
            password: crate::docker::random_token(24),
            monitor_password: crate::docker::random_token(24),
            app_cpus: cpus[2].1 as usize,
            nofile: 65536,
            sampler_addr: "127.0.0.1".into(),
        },
    };
    let files = k8s::manifests(&e).map_err(|m| invalid(format!("{}: {m}", a.experiment)))?;
    std::fs::create_dir_all(&a.dir)?;
    for (name, text) in &files {
        crate::rundir::output_path::write_file("--dir", &a.dir.join(name), text.as_bytes())?;
        crate::out!("{}", a.dir.join(name).display());
    }
    Ok(())
}
