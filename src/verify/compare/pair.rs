//! One run against one run: the steps side by side (p95, ok/s, failed %, verdict), the knee
//! shift, and what differs between the runs: component versions, the resolved experiment
//! config, the overrides and the CPU layout. Pure.
use crate::analyze::model::{Report, StepReport};
use crate::claim::fmt_num;
use crate::report::table::{Block, Table, blocks_text};
use crate::rundir::Manifest;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One step of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub p95_ms: f64,
    pub ok_per_s: f64,
    pub failed_pct: f64,
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPair {
    pub target: u32,
    pub a: Option<Side>,
    pub b: Option<Side>,
}

/// A value that differs: key, A's, B's (None = absent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub key: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub unit: String,
    pub steps: Vec<StepPair>,
    pub knee_a: Option<u32>,
    pub knee_b: Option<u32>,
    pub last_passing_a: Option<u32>,
    pub last_passing_b: Option<u32>,
    /// Steps between the knees (B - A) on the union of the step lists, when both have one.
    pub knee_shift_steps: Option<i64>,
    pub versions: Vec<Diff>,
    pub config: Vec<Diff>,
}

fn side(s: &StepReport) -> Side {
    Side {
        p95_ms: s.p95_ms,
        ok_per_s: s.ok_per_s,
        failed_pct: s.failed_rate * 100.0,
        verdict: s.verdict.as_str().to_string(),
    }
}

/// Flatten JSON into `path -> scalar text` (objects by key, arrays by index).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let items: Vec<String> = a.iter().map(scalar).collect();
            out.insert(prefix.to_string(), format!("[{}]", items.join(", ")));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn diffs(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<Diff> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| Diff {
            key: k.clone(),
            a: a.get(k).cloned(),
            b: b.get(k).cloned(),
        })
        .collect()
}

/// What of a manifest counts as config: the experiment as resolved (without its prose and
/// claims), the overrides, the CPU layout.
fn config_map(m: &Manifest) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut e = serde_json::to_value(&m.experiment).unwrap_or(Value::Null);
    if let Some(o) = e.as_object_mut() {
        for k in [
            "description",
            "finding",
            "reference",
            "notes",
            "expect",
            "kind",
        ] {
            o.remove(k);
        }
    }
    flatten("experiment", &e, &mut out);
    out.insert("overrides".into(), format!("[{}]", m.overrides.join(", ")));
    for (k, v) in [
        ("loadgen", &m.cpu_layout.loadgen),
        ("db", &m.cpu_layout.db),
        ("app", &m.cpu_layout.app),
        ("online", &m.cpu_layout.online),
    ] {
        out.insert(format!("cpu_layout.{k}"), v.to_list());
    }
    out.insert(
        "host.cpu_model".into(),
        m.host.cpu_model.clone().unwrap_or_default(),
    );
    out
}

/// Compare two runs.
pub fn compare(a: (&str, &Report, &Manifest), b: (&str, &Report, &Manifest)) -> Comparison {
    let targets: BTreeSet<u32> =
        a.1.steps
            .iter()
            .chain(b.1.steps.iter())
            .map(|s| s.target)
            .collect();
    let find = |r: &Report, t: u32| r.steps.iter().find(|s| s.target == t).map(side);
    let steps: Vec<StepPair> = targets
        .iter()
        .map(|t| StepPair {
            target: *t,
            a: find(a.1, *t),
            b: find(b.1, *t),
        })
        .collect();
    let idx = |k: Option<u32>| k.and_then(|k| targets.iter().position(|t| *t == k));
    let knee_shift_steps = match (idx(a.1.knee), idx(b.1.knee)) {
        (Some(x), Some(y)) => Some(y as i64 - x as i64),
        _ => None,
    };
    Comparison {
        a: a.0.to_string(),
        b: b.0.to_string(),
        unit: a.1.unit().to_string(),
        steps,
        knee_a: a.1.knee,
        knee_b: b.1.knee,
        last_passing_a: a.1.last_passing,
        last_passing_b: b.1.last_passing,
        knee_shift_steps,
        versions: diffs(&a.2.components, &b.2.components),
        config: diffs(&config_map(a.2), &config_map(b.2)),
    }
}

fn opt(v: Option<u32>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "none".into())
}

/// Both runs' steps side by side: p95, goodput, failures, verdicts.
pub(crate) fn steps_table(c: &Comparison) -> Table {
    let mut t = Table::new([
        c.unit.as_str(),
        "p95 A",
        "p95 B",
        "ok/s A",
        "ok/s B",
        "fail% A",
        "fail% B",
        "verdict A",
        "verdict B",
    ]);
    t.left = vec![7, 8];
    t.widths = Some(vec![6, 9, 9, 8, 8, 7, 7, 9, 9]);
    t.gaps = vec!["  ", " ", "  ", " ", "  ", " ", "  ", " "];
    let cell = |s: &Option<Side>, f: &dyn Fn(&Side) -> String| {
        s.as_ref().map(f).unwrap_or_else(|| "-".into())
    };
    for p in &c.steps {
        t.push(vec![
            p.target.to_string(),
            cell(&p.a, &|s| fmt_num(s.p95_ms.round())),
            cell(&p.b, &|s| fmt_num(s.p95_ms.round())),
            cell(&p.a, &|s| format!("{:.1}", s.ok_per_s)),
            cell(&p.b, &|s| format!("{:.1}", s.ok_per_s)),
            cell(&p.a, &|s| format!("{:.2}", s.failed_pct)),
            cell(&p.b, &|s| format!("{:.2}", s.failed_pct)),
            cell(&p.a, &|s| s.verdict.clone()),
            cell(&p.b, &|s| s.verdict.clone()),
        ]);
    }
    t
}

/// The comparison as text.
pub fn render_text(c: &Comparison) -> String {
    let mut b = Block::new("");
    b.lines = vec![format!("A: {}", c.a), format!("B: {}", c.b), String::new()];
    b.table = Some(steps_table(c));
    let shift = match c.knee_shift_steps {
        Some(0) => " (same step)".to_string(),
        Some(n) => format!(" ({n:+} step{})", if n.abs() == 1 { "" } else { "s" }),
        None => String::new(),
    };
    b.notes.push(String::new());
    b.notes.push(format!(
        "knee: A {} -> B {}{shift}; last passing: A {} -> B {}",
        opt(c.knee_a),
        opt(c.knee_b),
        opt(c.last_passing_a),
        opt(c.last_passing_b)
    ));
    b.notes.extend(diff_notes(c));
    blocks_text(&[b])
}

/// The versions and config that differ, as text lines (each list after an empty line).
pub(crate) fn diff_notes(c: &Comparison) -> Vec<String> {
    let mut notes = Vec::new();
    for (title, list) in [("versions", &c.versions), ("config", &c.config)] {
        notes.push(String::new());
        if list.is_empty() {
            notes.push(format!("{title}: identical"));
            continue;
        }
        notes.push(format!("{title} that differ:"));
        for d in list {
            notes.push(format!(
                "  {}: {} -> {}",
                d.key,
                d.a.as_deref().unwrap_or("(absent)"),
                d.b.as_deref().unwrap_or("(absent)")
            ));
        }
    }
    notes
}
