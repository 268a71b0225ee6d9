//! A group's recovered/stuck map (issue 44), read from the recorded runs: for each row (a
//! configuration) and each trigger size, the complete runs of the map's experiment made with
//! exactly that row's `--set` pairs and that size (`config::Config`, the one notion of a
//! configuration), their outcome after the trigger, and where each row's knife edge lies
//! between a size it recovered from and the smallest it stayed stuck at. Sizes `--refine` added
//! are found the same way. Which size `--refine` runs next is decided here ([`next_size`]);
//! the runs themselves are `run::map`'s. I/O only through `load::scan`.
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::config::{Config, normalized};
use super::load::{self, LoadedRun, Want};
use crate::analyze::trigger::Outcome;
use crate::experiment::{Experiment, MapRow, TriggerMap, map_check};

/// Which runs count for a cell: their suite, and their profile (`Some(true)`: `--quick` only;
/// `None`: either, the full ones first).
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    pub suite: String,
    pub quick: Option<bool>,
}

/// One run of a cell: where, and what its trigger came to.
#[derive(Debug, Clone, Serialize)]
pub struct CellRun {
    pub dir: PathBuf,
    pub quick: bool,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_na: Option<String>,
    /// Requests per arrival over the step's last seconds.
    pub amplification: Option<f64>,
    /// Goodput at the step's end over goodput before the trigger.
    pub goodput_ratio: Option<f64>,
}

/// One size of one row: its runs, newest first (none: not run yet).
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub size: f64,
    /// Declared in the map (false: added by `--refine`).
    pub declared: bool,
    pub runs: Vec<CellRun>,
}

impl Cell {
    /// The newest run's outcome.
    pub fn outcome(&self) -> Option<Outcome> {
        self.runs.first().map(|r| r.outcome)
    }
}

/// Where a row's outcome turns, from its newest runs (n/a cells left out).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    /// Recovered at `below`, stuck at `at` (the smallest stuck size): the edge lies between.
    Between { below: f64, at: f64 },
    /// Stuck from the smallest size run.
    StuckFrom(f64),
    /// Recovered up to the largest size run.
    RecoveredTo(f64),
    /// No cell with an outcome yet.
    Unknown,
}

/// One configuration of the map.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    pub set: Vec<String>,
    pub cells: Vec<Cell>,
    pub edge: Edge,
    /// A size recovered above the smallest stuck one (the row's outcome is not one edge).
    pub not_monotone: bool,
    /// The cells' newest outcomes counted: recovered, stuck, n/a, not run.
    pub tally: [usize; 4],
}

/// The whole map as read.
#[derive(Debug, Clone, Serialize)]
pub struct MapRead {
    pub group: String,
    pub experiment: String,
    pub key: String,
    pub resolution: f64,
    pub suite: String,
    pub rows: Vec<Row>,
}

/// The map of `group` read from `out_root` for `profile`.
pub(crate) fn read(
    out_root: &std::path::Path,
    group: &str,
    map: &TriggerMap,
    e: &Experiment,
    profile: &Profile,
) -> MapRead {
    let mut found: Vec<BTreeMap<u64, Vec<CellRun>>> = vec![BTreeMap::new(); map.rows.len()];
    let wanted: Vec<BTreeMap<String, String>> = (map.rows.iter())
        .map(|r| normalized(&r.set, e.lab))
        .collect();
    let key = normalized(&[format!("{}=0", map.size.key)], e.lab)
        .into_keys()
        .next()
        .unwrap_or_default();
    let mut admits = |m: &crate::rundir::Manifest| {
        let c = Config::of(m);
        !c.fitted && c.suite == profile.suite && profile.quick.is_none_or(|q| q == c.quick)
    };
    let (runs, _) = load::scan(out_root, &e.id, Want::all(None, &mut admits));
    for run in runs {
        let c = Config::of(&run.manifest);
        let mut rest = c.overrides.clone();
        let Some(size) = rest.remove(&key).and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        let Some(row) = wanted.iter().position(|w| *w == rest) else {
            continue;
        };
        if !declared_admits(map, row, size, e, profile, &c) {
            continue;
        }
        found[row]
            .entry(size_key(size))
            .or_default()
            .push(cell_run(&run, c.quick));
    }
    let rows = (map.rows.iter().zip(found))
        .map(|(r, runs)| row(r, map, runs))
        .collect();
    MapRead {
        group: group.to_string(),
        experiment: e.id.clone(),
        key: map.size.key.clone(),
        resolution: map.size.resolution,
        suite: profile.suite.clone(),
        rows,
    }
}

/// Whether the run of configuration `c` is the cell's as the map declares it now (its
/// resolved stack and load equal: a run of an older experiment file is not).
fn declared_admits(
    map: &TriggerMap,
    row: usize,
    size: f64,
    e: &Experiment,
    profile: &Profile,
    c: &Config,
) -> bool {
    let sets = map_check::cell_sets(map, row, size);
    let Ok((applied, _)) = crate::experiment::overrides::apply(e, &sets) else {
        return false;
    };
    let d = Config::declared(
        &profile.suite,
        &sets,
        e.lab,
        (c.quick, false),
        Some(&applied),
    );
    d.admits(c)
}

/// A size as a map key that sorts numerically: the bits of a finite float >= 0 order as it does.
fn size_key(size: f64) -> u64 {
    size.max(0.0).to_bits()
}

fn cell_run(run: &LoadedRun, quick: bool) -> CellRun {
    let t = run.report.trigger.as_ref();
    CellRun {
        dir: run.dir.clone(),
        quick,
        outcome: t.map_or(Outcome::NotApplicable, |t| t.outcome),
        why_na: match t {
            Some(t) => t.why_na.clone(),
            None => Some("the run recorded no trigger".into()),
        },
        amplification: t.and_then(|t| t.end.map(|r| r.amplification)),
        goodput_ratio: t.and_then(|t| t.goodput_ratio),
    }
}

/// A row's cells (declared sizes and the ones found, ascending; in each, full runs before
/// quick ones, newest first) and its edge.
fn row(r: &MapRow, map: &TriggerMap, runs: BTreeMap<u64, Vec<CellRun>>) -> Row {
    let mut runs = runs;
    for &v in &map.size.values {
        runs.entry(size_key(v)).or_default();
    }
    let cells: Vec<Cell> = (runs.into_iter())
        .map(|(k, mut rs)| {
            // the scan gives newest first; a stable sort puts the full runs first
            rs.sort_by_key(|x| x.quick);
            let size = f64::from_bits(k);
            Cell {
                size,
                declared: map.size.values.contains(&size),
                runs: rs,
            }
        })
        .collect();
    let (edge, not_monotone) = edge(&cells);
    let mut tally = [0; 4];
    for c in &cells {
        tally[match c.outcome() {
            Some(Outcome::Recovered) => 0,
            Some(Outcome::Stuck) => 1,
            Some(Outcome::NotApplicable) => 2,
            None => 3,
        }] += 1;
    }
    Row {
        name: r.name.clone(),
        set: r.set.clone(),
        cells,
        edge,
        not_monotone,
        tally,
    }
}

/// Where the outcome turns in `cells` (ascending sizes), and whether a size recovered above
/// the smallest stuck one.
pub(crate) fn edge(cells: &[Cell]) -> (Edge, bool) {
    let judged: Vec<(f64, Outcome)> = (cells.iter())
        .filter_map(|c| c.outcome().map(|o| (c.size, o)))
        .filter(|(_, o)| *o != Outcome::NotApplicable)
        .collect();
    let Some(stuck) = judged
        .iter()
        .find(|(_, o)| *o == Outcome::Stuck)
        .map(|x| x.0)
    else {
        return match judged.last() {
            Some((s, _)) => (Edge::RecoveredTo(*s), false),
            None => (Edge::Unknown, false),
        };
    };
    let not_monotone = judged
        .iter()
        .any(|(s, o)| *o == Outcome::Recovered && *s > stuck);
    let below = (judged.iter())
        .filter(|(s, o)| *o == Outcome::Recovered && *s < stuck)
        .map(|x| x.0)
        .last();
    let e = match below {
        Some(below) => Edge::Between { below, at: stuck },
        None => Edge::StuckFrom(stuck),
    };
    (e, not_monotone)
}

/// The size `--refine` runs next in a row whose edge is `edge`: the middle of the gap, on the
/// resolution's grid when that stays inside it; None when the gap is within `resolution` or
/// the row has had its [`map_check::MAX_REFINED`] sizes added.
pub(crate) fn next_size(edge: Edge, resolution: f64, refined: usize) -> Option<f64> {
    let Edge::Between { below, at } = edge else {
        return None;
    };
    if at - below <= resolution * (1.0 + 1e-9) || refined >= map_check::MAX_REFINED {
        return None;
    }
    // a gap wider than the resolution holds a grid point within half of it from the middle
    let mid = (below + at) / 2.0;
    let grid = (mid / resolution).round() * resolution;
    let pick = if grid > below && grid < at { grid } else { mid };
    Some((pick * 1000.0).round() / 1000.0)
}

/// The sizes of a row `--refine` added (not declared).
pub(crate) fn refined(row: &Row) -> usize {
    row.cells
        .iter()
        .filter(|c| !c.declared && !c.runs.is_empty())
        .count()
}

/// The cells of the map with no run yet: (row, size).
pub(crate) fn missing(m: &MapRead) -> Vec<(usize, f64)> {
    (m.rows.iter().enumerate())
        .flat_map(|(i, r)| {
            r.cells
                .iter()
                .filter(|c| c.runs.is_empty())
                .map(move |c| (i, c.size))
        })
        .collect()
}

/// The map as text: one line per row, a cell per size (`R` recovered, `S` stuck, `-` n/a, `.`
/// not run; requests per arrival after it), and each row's edge.
pub fn text(m: &MapRead) -> String {
    let mut out = format!(
        "{}: recovered (R) or stuck (S) after the trigger, by {} (columns) and configuration (rows); - n/a, . not run; x = requests per arrival at the step's end\n",
        m.group, m.key
    );
    for r in &m.rows {
        let cells: Vec<String> = (r.cells.iter())
            .map(|c| {
                let mark = match c.outcome() {
                    Some(Outcome::Recovered) => "R",
                    Some(Outcome::Stuck) => "S",
                    Some(Outcome::NotApplicable) => "-",
                    None => ".",
                };
                let amp = (c.runs.first().and_then(|x| x.amplification))
                    .map(|a| format!(" x{a:.1}"))
                    .unwrap_or_default();
                format!("{}={mark}{amp}", c.size)
            })
            .collect();
        out.push_str(&format!(
            "  {:<40} {}  | {}\n",
            r.name,
            cells.join("  "),
            edge_text(r, &m.key)
        ));
    }
    out
}

/// "2 recovered, 1 stuck; edge: recovered at for_s = 5, stuck at 10" and the like.
pub fn edge_text(r: &Row, key: &str) -> String {
    let short = key.rsplit('.').next().unwrap_or(key);
    let [rec, stuck, na, _] = r.tally;
    let mut s = format!("{rec} recovered, {stuck} stuck");
    if na > 0 {
        s.push_str(&format!(", {na} n/a"));
    }
    s.push_str("; ");
    s += &match r.edge {
        Edge::Between { below, at } => {
            format!("edge: recovered at {short} = {below}, stuck at {at}")
        }
        Edge::StuckFrom(s) => format!("stuck from the smallest {short} run ({s})"),
        Edge::RecoveredTo(s) => format!("recovered up to the largest {short} run ({s})"),
        Edge::Unknown => "no outcome yet".to_string(),
    };
    if r.not_monotone {
        s.push_str("; a larger size recovered too (not one edge)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(v: &[(f64, Option<Outcome>)]) -> Vec<Cell> {
        (v.iter())
            .map(|&(size, o)| Cell {
                size,
                declared: true,
                runs: (o.into_iter())
                    .map(|outcome| CellRun {
                        dir: PathBuf::new(),
                        quick: true,
                        outcome,
                        why_na: None,
                        amplification: None,
                        goodput_ratio: None,
                    })
                    .collect(),
            })
            .collect()
    }

    const R: Option<Outcome> = Some(Outcome::Recovered);
    const S: Option<Outcome> = Some(Outcome::Stuck);
    const NA: Option<Outcome> = Some(Outcome::NotApplicable);

    #[test]
    fn the_edge_lies_between_the_last_recovered_and_the_first_stuck() {
        let e = |v: &[(f64, Option<Outcome>)]| edge(&cells(v));
        assert_eq!(
            e(&[(2.0, R), (5.0, R), (10.0, S)]),
            (
                Edge::Between {
                    below: 5.0,
                    at: 10.0
                },
                false
            )
        );
        // n/a and cells not run say nothing of the edge
        assert_eq!(
            e(&[(2.0, R), (5.0, NA), (7.0, None), (10.0, S)]),
            (
                Edge::Between {
                    below: 2.0,
                    at: 10.0
                },
                false
            )
        );
        assert_eq!(e(&[(2.0, S), (5.0, S)]), (Edge::StuckFrom(2.0), false));
        assert_eq!(e(&[(2.0, R), (5.0, R)]), (Edge::RecoveredTo(5.0), false));
        assert_eq!(e(&[(2.0, None), (5.0, NA)]), (Edge::Unknown, false));
        // a recovery above a stuck size is said, the edge is the first turn
        assert_eq!(
            e(&[(2.0, R), (5.0, S), (10.0, R)]),
            (
                Edge::Between {
                    below: 2.0,
                    at: 5.0
                },
                true
            )
        );
    }

    #[test]
    fn refine_halves_the_gap_on_the_grid_until_the_resolution() {
        let b = |below, at| Edge::Between { below, at };
        assert_eq!(next_size(b(5.0, 10.0), 1.0, 0), Some(8.0)); // 7.5 rounds to 8, inside
        assert_eq!(next_size(b(5.0, 6.0), 1.0, 0), None); // within the resolution
        assert_eq!(next_size(b(5.0, 6.0), 0.25, 0), Some(5.5));
        assert_eq!(next_size(b(5.0, 7.0), 1.0, 0), Some(6.0));
        assert_eq!(next_size(b(5.0, 6.5), 1.0, 0), Some(6.0));
        assert_eq!(next_size(b(5.0, 10.0), 1.0, map_check::MAX_REFINED), None);
        assert_eq!(next_size(Edge::StuckFrom(2.0), 1.0, 0), None);
        // a bisection from 2..10 at resolution 1 ends within 1 in at most 3 sizes
        let (mut lo, mut hi, mut n) = (2.0, 10.0, 0);
        while let Some(s) = next_size(b(lo, hi), 1.0, n) {
            // pretend the edge is at 6.3
            if s < 6.3 {
                lo = s
            } else {
                hi = s
            }
            n += 1;
        }
        assert!(hi - lo <= 1.0 && n <= 3, "{lo}..{hi} after {n}");
    }
}
