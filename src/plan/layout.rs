//! CPU layout: which host CPUs the load generator, the database and the app get (`--cpuset-cpus`).
//! Article: loadgen 0, db 1, app 2-3 on a 4-vCPU host; fewer CPUs get a documented fallback.
use crate::error::InvalidInput;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A sorted set of CPU numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuSet(Vec<u32>);

impl CpuSet {
    pub fn new(mut cpus: Vec<u32>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        CpuSet(cpus)
    }

    /// Parse a kernel/Docker CPU list such as `0-3,6`.
    pub fn parse(s: &str) -> Result<CpuSet, String> {
        crate::host::parse_cpu_list(s).map(CpuSet::new)
    }

    pub(crate) fn cpus(&self) -> &[u32] {
        &self.0
    }

    /// The CPU numbers as `sample::pin_process_to` takes them.
    pub(crate) fn indices(&self) -> Vec<usize> {
        self.0.iter().map(|c| *c as usize).collect()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    pub(crate) fn overlaps(&self, other: &CpuSet) -> bool {
        self.0.iter().any(|c| other.contains(*c))
    }

    /// Docker `--cpuset-cpus` / kernel list form: `2-3`, `0,2`, `0-3,6`.
    pub fn to_list(&self) -> String {
        crate::host::cpu_list(&self.0)
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

impl<'de> Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuSet::parse(&s).map_err(serde::de::Error::custom)
    }
}

pub use crate::lab::Slot;

/// The CPUs of each role on this host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLayout {
    pub loadgen: CpuSet,
    pub db: CpuSet,
    pub app: CpuSet,
    /// The host's online CPUs when the layout was made.
    pub online: CpuSet,
    /// `auto` or the `--cpus` text.
    pub source: String,
    /// `--force-cpus` allowed an app overlap.
    pub forced: bool,
    /// How this layout differs from the article's (goes into the manifest's caveats).
    pub caveats: Vec<String>,
}

impl CpuLayout {
    pub(crate) fn get(&self, role: Slot) -> &CpuSet {
        match role {
            Slot::Loadgen => &self.loadgen,
            Slot::Db => &self.db,
            Slot::App => &self.app,
        }
    }

    /// Docker `--cpuset-cpus` value for a role, e.g. `"2-3"`.
    pub fn cpuset(&self, role: Slot) -> String {
        self.get(role).to_list()
    }
}

/// Online CPUs of this host (`host::online_cpus`).
pub fn online_cpus() -> Result<CpuSet, String> {
    crate::host::online_cpus().map(CpuSet::new)
}

/// The default layout for the online CPUs (uses the lowest online CPUs in order).
pub fn auto(online: &CpuSet) -> Result<CpuLayout, InvalidInput> {
    let c = online.cpus();
    let one = |i: usize| CpuSet::new(vec![c[i]]);
    let (loadgen, db, app, caveats) = match c.len() {
        0 | 1 => {
            return Err(InvalidInput(format!(
                "only {} online CPU ({}): perflab needs at least 2 to keep the app apart from the load \
                 generator; run on a bigger host, or pin explicitly with --cpus loadgen=0,db=0,app=0 --force-cpus",
                c.len(),
                online
            )));
        }
        2 => (
            one(0),
            one(0),
            one(1),
            vec![format!(
                "2 online CPUs: load generator and PostgreSQL share cpu {} and the app has 1 CPU (cpu {}); \
                 the article pins k6, PostgreSQL and a 2-CPU app box apart on 4 vCPUs, so CPU-bound knees \
                 are about half the article's and k6 competes with PostgreSQL",
                c[0], c[1]
            )],
        ),
        3 => (
            one(0),
            one(1),
            one(2),
            vec![format!(
                "3 online CPUs: the app has 1 CPU (cpu {}) instead of the article's 2; CPU-bound knees \
                 are about half the article's",
                c[2]
            )],
        ),
        _ => (one(0), one(1), CpuSet::new(vec![c[2], c[3]]), Vec::new()),
    };
    Ok(CpuLayout {
        loadgen,
        db,
        app,
        online: online.clone(),
        source: "auto".into(),
        forced: false,
        caveats,
    })
}

/// The CPU layout on this host: its online CPUs (sysfs), with the `--cpus` override.
pub(crate) fn on_this_host(cpus: Option<&str>, force_cpus: bool) -> anyhow::Result<CpuLayout> {
    let online = online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(resolve(&online, cpus, force_cpus)?)
}

/// Layout from `--cpus loadgen=0,db=1,app=2-3` (roles not named keep the automatic choice).
/// Rejects offline CPUs, and app overlapping loadgen/db unless `force`.
pub fn resolve(
    online: &CpuSet,
    spec: Option<&str>,
    force: bool,
) -> Result<CpuLayout, InvalidInput> {
    let Some(spec) = spec.filter(|s| !s.trim().is_empty()) else {
        return auto(online);
    };
    let mut layout = auto(online).unwrap_or_else(|_| CpuLayout {
        loadgen: online.clone(),
        db: online.clone(),
        app: online.clone(),
        online: online.clone(),
        source: String::new(),
        forced: false,
        caveats: vec![format!(
            "only {} online CPU: everything shares it",
            online.len()
        )],
    });
    let bad = |m: String| InvalidInput(format!("--cpus {spec}: {m}"));
    for (k, v) in spec_parts(spec).map_err(&bad)? {
        let slot = parse_slot(&k).map_err(&bad)?;
        let set = CpuSet::parse(&v).map_err(&bad)?;
        let offline: Vec<String> = set
            .cpus()
            .iter()
            .filter(|c| !online.contains(**c))
            .map(|c| c.to_string())
            .collect();
        if !offline.is_empty() {
            return Err(bad(format!(
                "cpu {} of {} is not online (online: {online})",
                offline.join(","),
                slot.as_str()
            )));
        }
        match slot {
            Slot::Loadgen => layout.loadgen = set,
            Slot::Db => layout.db = set,
            Slot::App => layout.app = set,
        }
    }
    layout.source = spec.to_string();
    layout.caveats.clear();
    overlap_caveats(&mut layout, force).map_err(&bad)?;
    Ok(layout)
}

/// `loadgen=0,db=1,app=2,3` as (slot, cpus) pairs: a token without `=` continues the previous
/// slot's list.
fn spec_parts(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut parts: Vec<(String, String)> = Vec::new();
    for tok in spec.split(',') {
        match tok.split_once('=') {
            Some((k, v)) => parts.push((k.trim().to_string(), v.trim().to_string())),
            None => match parts.last_mut() {
                Some((_, v)) => {
                    v.push(',');
                    v.push_str(tok.trim());
                }
                None => {
                    return Err(format!(
                        "`{tok}` names no role; write ROLE=CPUS, e.g. loadgen=0,db=1,app=2-3"
                    ));
                }
            },
        }
    }
    Ok(parts)
}

fn parse_slot(k: &str) -> Result<Slot, String> {
    if let Some(s) = Slot::ALL.into_iter().find(|s| s.as_str() == k) {
        return Ok(s);
    }
    let mut m = format!("unknown role `{k}` (roles: loadgen, db, app)");
    if let Some(s) = crate::experiment::diag::did_you_mean(k, ["loadgen", "db", "app"]) {
        m.push_str(&format!("; did you mean `{s}`?"));
    }
    Err(m)
}

/// The caveats of an explicit layout; an app overlapping the other slots is an error unless
/// `force`.
fn overlap_caveats(layout: &mut CpuLayout, force: bool) -> Result<(), String> {
    for other in [Slot::Loadgen, Slot::Db] {
        if layout.app.overlaps(layout.get(other)) {
            if !force {
                return Err(format!(
                    "app cpus {} overlap {} cpus {}: the app would compete with the {} and the knee \
                     would measure both; pick separate CPUs or add --force-cpus",
                    layout.app,
                    other.as_str(),
                    layout.get(other),
                    other.as_str()
                ));
            }
            layout.forced = true;
            layout.caveats.push(format!(
                "forced: app cpus {} overlap {} cpus {}",
                layout.app,
                other.as_str(),
                layout.get(other)
            ));
        }
    }
    if layout.loadgen.overlaps(&layout.db) {
        layout.caveats.push(format!(
            "load generator and PostgreSQL share cpu {} (article: separate CPUs)",
            layout.loadgen
        ));
    }
    if layout.app.len() != 2 {
        layout.caveats.push(format!(
            "the app has {} CPU(s) ({}) instead of the article's 2",
            layout.app.len(),
            layout.app
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_lists() {
        let s = CpuSet::parse("0-3,6\n").unwrap();
        assert_eq!(s.cpus(), &[0, 1, 2, 3, 6]);
        assert_eq!(s.to_list(), "0-3,6");
        assert_eq!(CpuSet::parse("2,3").unwrap().to_list(), "2-3");
        assert!(CpuSet::parse("3-1").is_err());
        assert!(CpuSet::parse("a").is_err());
    }
}
