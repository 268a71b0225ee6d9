//! `perflab capacity`: lab-spec §5 reporting over >= 3 complete rounds. max sustainable = min
//! over rounds of the last passing step (offered); capacity = the goodput sustained there (ok/s,
//! min over rounds: a passing step may serve up to 5 % under what it offered) x margin; nodes = ceil(peak /
//! capacity) + 1; database checks (connections, DB CPU per request). Rounds that disagree by
//! more than one step mean the host is too noisy for a stable SLO knee. Pure.
use crate::analyze::model::{LoadModel, Report};
use crate::claim::fmt_num;
use crate::report::table::{Block, Table, blocks_text};
use crate::rundir::Manifest;
use serde::Serialize;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum CapacityError {
    #[error(
        "capacity needs at least {need} complete rounds of {exp}; found {found}: run `perflab run {exp} --rounds {need}`"
    )]
    TooFewRounds {
        exp: String,
        need: usize,
        found: usize,
    },
    #[error("capacity is for open-model experiments (steps in rps); {0} steps VUs")]
    ClosedModel(String),
    #[error("margin {0} must be in (0, 1] (lab-spec: 0.6-0.8)")]
    Margin(f64),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundRow {
    pub run: String,
    pub last_passing: Option<u32>,
    /// Position of the last passing step in the experiment's steps.
    pub index: Option<usize>,
    pub knee: Option<u32>,
    /// The goodput (ok/s) the last passing step sustained.
    pub ok_per_s: Option<f64>,
    /// PostgreSQL CPU per successful request at the last passing step (ms).
    pub db_cpu_ms_per_req: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DbCheck {
    pub connections_per_node: u32,
    pub nodes: u64,
    pub max_connections: u32,
    pub connections_ok: bool,
    pub db_cpu_ms_per_req: Option<f64>,
    pub db_cores: usize,
    /// peak x DB CPU per request (cores).
    pub db_cores_needed: Option<f64>,
    /// DB cores x margin.
    pub db_cores_budget: f64,
    pub cpu_ok: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    pub experiment: String,
    pub rounds: Vec<RoundRow>,
    pub max_sustainable: Option<u32>,
    /// The goodput sustained at the rounds' last passing steps (min over rounds): what
    /// capacity planning reads.
    pub max_sustainable_ok_per_s: Option<f64>,
    /// Steps between the lowest and highest last-passing step.
    pub spread_steps: Option<usize>,
    pub noisy: bool,
    pub margin: f64,
    pub capacity_per_s: Option<f64>,
    pub peak_per_s: Option<f64>,
    pub nodes: Option<u64>,
    pub db: Option<DbCheck>,
    /// Run directories of the experiment left out, each with why (not complete, unreadable,
    /// another suite).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Compute over `runs` (newest first; all are used, at least `min_rounds`).
pub fn capacity(
    exp: &str,
    runs: &[(&str, &Report, &Manifest)],
    min_rounds: usize,
    margin: f64,
    peak: Option<f64>,
) -> Result<Capacity, CapacityError> {
    if !(margin > 0.0 && margin <= 1.0) {
        return Err(CapacityError::Margin(margin));
    }
    if runs.len() < min_rounds {
        return Err(CapacityError::TooFewRounds {
            exp: exp.to_string(),
            need: min_rounds,
            found: runs.len(),
        });
    }
    if runs.iter().any(|r| r.1.model == LoadModel::Closed) {
        return Err(CapacityError::ClosedModel(exp.to_string()));
    }
    let rounds: Vec<RoundRow> = runs
        .iter()
        .map(|(label, r, m)| round_row(label, r, m))
        .collect();
    let all_pass = rounds.iter().all(|r| r.last_passing.is_some());
    let max_sustainable = if all_pass {
        rounds.iter().filter_map(|r| r.last_passing).min()
    } else {
        None
    };
    // a round with no passing step sits one below the lowest step
    let idx: Vec<i64> = rounds
        .iter()
        .map(|r| r.index.map(|i| i as i64).unwrap_or(-1))
        .collect();
    let spread = idx
        .iter()
        .max()
        .zip(idx.iter().min())
        .map(|(a, b)| (a - b) as usize);
    let goodput = if all_pass {
        rounds
            .iter()
            .map(|r| r.ok_per_s)
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::min))
    } else {
        None
    };
    let capacity = goodput.map(|g| g * margin);
    let nodes = match (peak, capacity) {
        (Some(p), Some(c)) if c > 0.0 => Some((p / c).ceil() as u64 + 1),
        _ => None,
    };
    let db = db_check(runs[0].2, &rounds, nodes, peak, margin);
    Ok(Capacity {
        experiment: exp.to_string(),
        rounds,
        max_sustainable,
        max_sustainable_ok_per_s: goodput,
        spread_steps: spread,
        noisy: spread.is_some_and(|s| s > 1),
        margin,
        capacity_per_s: capacity,
        peak_per_s: peak,
        nodes,
        db,
        skipped: Vec::new(),
    })
}

/// One round: its last passing step (and that step's index), knee, database CPU per request.
fn round_row(label: &str, r: &Report, m: &Manifest) -> RoundRow {
    let step = r
        .last_passing
        .and_then(|t| r.steps.iter().find(|s| s.target == t));
    RoundRow {
        run: label.to_string(),
        last_passing: r.last_passing,
        index: r
            .last_passing
            .and_then(|t| m.experiment.load.steps.iter().position(|x| *x == t)),
        knee: r.knee,
        ok_per_s: step.map(|s| s.ok_per_s),
        db_cpu_ms_per_req: step.and_then(|s| {
            let pg = s.server.as_ref()?.cpu_pct.get("pg")?;
            (s.ok_per_s > 0.0).then(|| pg / 100.0 / s.ok_per_s * 1000.0)
        }),
    }
}

/// The database checks for `nodes` nodes at `peak` (None without a pool size or a peak).
fn db_check(
    m: &Manifest,
    rounds: &[RoundRow],
    nodes: Option<u64>,
    peak: Option<f64>,
    margin: f64,
) -> Option<DbCheck> {
    let per_node =
        crate::lab::descriptor(m.experiment.lab).connections_per_node(&m.experiment.stack);
    let db_ms = rounds
        .iter()
        .filter_map(|r| r.db_cpu_ms_per_req)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    match (per_node, nodes) {
        (Some(conn), Some(n)) => {
            let max_connections = m.experiment.stack.postgres.max_connections;
            let db_cores = m.cpu_layout.db.len();
            let needed = db_ms.zip(peak).map(|(ms, p)| p * ms / 1000.0);
            let budget = db_cores as f64 * margin;
            Some(DbCheck {
                connections_per_node: conn,
                nodes: n,
                max_connections,
                connections_ok: n * conn as u64 <= max_connections as u64,
                db_cpu_ms_per_req: db_ms,
                db_cores,
                db_cores_needed: needed,
                db_cores_budget: budget,
                cpu_ok: needed.map(|x| x <= budget),
            })
        }
        _ => None,
    }
}

fn opt(v: Option<u32>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "none".into())
}

/// The capacity plan as text.
pub fn render_text(c: &Capacity) -> String {
    let mut b = Block::new(&format!(
        "capacity of {} over {} rounds",
        c.experiment,
        c.rounds.len()
    ));
    b.table = Some(rounds_table(c));
    sustainable_lines(&mut b.notes, c);
    if let Some(d) = &c.db {
        db_lines(&mut b.notes, d);
    }
    b.notes
        .extend(c.skipped.iter().map(|s| format!("skipped {s}")));
    blocks_text(&[b])
}

/// One line per round: its last passing step, knee and database CPU per request.
fn rounds_table(c: &Capacity) -> Table {
    let mut t = Table::headless(7);
    t.indent = "  ";
    t.left = vec![0, 1, 3, 5, 6];
    t.widths = Some(vec![40, 0, 5, 0, 5, 0, 0]);
    t.gaps = vec![" ", " ", "  ", " ", "  ", " "];
    for r in &c.rounds {
        t.push(vec![
            r.run.clone(),
            "last passing".into(),
            opt(r.last_passing),
            "knee".into(),
            opt(r.knee),
            "pg CPU/req".into(),
            r.db_cpu_ms_per_req
                .map(|x| format!("{x:.2} ms"))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

/// The max sustainable rate, the noise warning, the capacity and the nodes for the peak.
fn sustainable_lines(out: &mut Vec<String>, c: &Capacity) {
    let spread = c
        .spread_steps
        .map(|s| format!("{s} step{}", if s == 1 { "" } else { "s" }))
        .unwrap_or_else(|| "-".into());
    match c.max_sustainable {
        None => {
            out.push(format!(
                "max sustainable: none (a round has no passing step; spread {spread})"
            ));
        }
        Some(m) => {
            let g = c.max_sustainable_ok_per_s.map_or(String::new(), |g| {
                format!(" offered, {} ok/s sustained", fmt_num(g))
            });
            out.push(format!(
                "max sustainable: {m} rps{g} (min over rounds; spread {spread})"
            ));
        }
    }
    if c.noisy {
        out.push("WARNING: the rounds disagree by more than one step: this host is too noisy for a stable SLO knee; treat the number below as a lower bound, not a capacity".into());
    }
    if let Some(cap) = c.capacity_per_s {
        out.push(format!(
            "capacity: {} rps = {} ok/s x margin {} (the goodput sustained, not the offered rate: a passing step may serve up to 5 % less than it offers)",
            fmt_num(cap),
            c.max_sustainable_ok_per_s.map_or("-".into(), fmt_num),
            fmt_num(c.margin)
        ));
    }
    if let (Some(p), Some(n), Some(cap)) = (c.peak_per_s, c.nodes, c.capacity_per_s) {
        out.push(format!(
            "nodes for peak {} rps: ceil({} / {}) + 1 = {n}",
            fmt_num(p),
            fmt_num(p),
            fmt_num(cap)
        ));
    }
}

/// The database checks: connections of every node, CPU at the peak.
fn db_lines(out: &mut Vec<String>, d: &DbCheck) {
    out.push(format!(
        "database connections: {} nodes x {} = {} {} max_connections {} ({})",
        d.nodes,
        d.connections_per_node,
        d.nodes * d.connections_per_node as u64,
        if d.connections_ok { "<=" } else { ">" },
        d.max_connections,
        if d.connections_ok {
            "ok; PostgreSQL reserves 3 of them for superusers"
        } else {
            "TOO MANY: a pooler or fewer workers per node"
        }
    ));
    match (d.db_cpu_ms_per_req, d.db_cores_needed, d.cpu_ok) {
        (Some(ms), Some(need), Some(ok)) => {
            out.push(format!("database CPU: peak x {ms:.2} ms/req = {need:.2} cores {} {} DB core(s) x margin = {:.2} ({})",
                if ok { "<=" } else { ">" },
                d.db_cores,
                d.db_cores_budget,
                if ok {
                    "ok"
                } else {
                    "TOO MUCH: the database is the bottleneck"
                }
            ));
        }
        _ => {
            out.push(
                "database CPU: not measured (no pg CPU samples at the last passing steps)".into(),
            );
        }
    }
}
