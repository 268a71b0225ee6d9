//! `perflab matrix plan`: the cells of targets x suites x rounds that the out/ root does not
//! hold yet. A cell counts as held when a complete round of the same configuration is there
//! (same experiment, suite, `--set` overrides, profile and fit: what `compare` counts), so a
//! plan made again after some cells ran lists only the rest, numbered on from them.
use super::{Cell, Flags, Plan};
use crate::error::invalid;
use crate::experiment::Catalog;
use crate::images::Suite;
use crate::rundir::batch::CompareSide;
use crate::rundir::cell::CellName;
use chrono::{DateTime, Utc};
use std::path::PathBuf;

/// Most rounds a cell of the matrix asks for (as `compare --max-rounds`).
pub(crate) const MAX_ROUNDS: u32 = 50;

/// What `matrix plan` was asked.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Experiment or group ids.
    pub targets: Vec<String>,
    pub suites: Vec<Suite>,
    pub rounds: u32,
    pub flags: Flags,
    /// The out/ root whose complete rounds count.
    pub out: PathBuf,
    pub made_by: String,
}

/// The targets as given, space- or comma-separated: one id each.
pub(crate) fn split_targets(given: &[String]) -> Vec<String> {
    given
        .iter()
        .flat_map(|t| t.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `--suites trixie,forky`: each suite once, at least one.
pub(crate) fn parse_suites(s: &str) -> anyhow::Result<Vec<Suite>> {
    let mut v: Vec<Suite> = Vec::new();
    for w in s.split(',').map(str::trim) {
        let suite: Suite = w
            .parse()
            .map_err(|e| invalid(format!("--suites {}: {e}", s.escape_debug())))?;
        if v.contains(&suite) {
            return Err(invalid(format!(
                "--suites {s}: {w} is given twice; name each suite once"
            )));
        }
        v.push(suite);
    }
    Ok(v)
}

/// The plan: for each round, experiment and suite (rounds outermost, so the suites of an
/// experiment alternate in time), the cells not held under `req.out` (each recorded run counted
/// once: `verify::load::scan`). The run directories left out that are news (unreadable, copies
/// of a run counted) are noted in `skipped_runs`.
pub(crate) fn build(
    req: &Request,
    catalog: &Catalog,
    now: DateTime<Utc>,
    skipped_runs: &mut Vec<String>,
) -> anyhow::Result<Plan> {
    if !(1..=MAX_ROUNDS).contains(&req.rounds) {
        return Err(invalid(format!(
            "--rounds {}: give 1 to {MAX_ROUNDS} rounds per experiment and suite",
            req.rounds
        )));
    }
    let mut exps = Vec::new();
    for t in &req.targets {
        for e in catalog.expand(t)? {
            if !exps
                .iter()
                .any(|x: &crate::experiment::Experiment| x.id == e.id)
            {
                exps.push(e.clone());
            }
        }
    }
    let words = req.flags.sets.iter().map(|v| ("--set", v));
    for (flag, v) in words.chain(req.flags.cpus.iter().map(|v| ("--cpus", v))) {
        super::planfile::plain_word(v)
            .map_err(|m| invalid(format!("{flag} {}: {m}", v.escape_debug())))?;
    }
    let total = exps.len() * req.suites.len() * req.rounds as usize;
    if total > super::planfile::MAX_CELLS {
        return Err(invalid(format!(
            "{total} cells; a plan holds at most {}: fewer targets, suites or rounds",
            super::planfile::MAX_CELLS
        )));
    }
    let id = now.with_nanosecond(0).unwrap_or(now);
    let (mut per_cell, mut skipped) = (Vec::new(), 0);
    for e in &exps {
        let fitted = req.flags.fit && e.fit.is_some();
        for suite in &req.suites {
            let side = crate::verify::side::parse_side(
                CompareSide::A,
                &[format!("suite={suite}")],
                &req.flags.sets,
            )?;
            side.resolve(e)?;
            let held = crate::run::compare::recorded_rounds(
                &req.out,
                e,
                &side,
                (req.flags.quick, fitted),
                req.rounds as usize,
                skipped_runs,
            )
            .len() as u32;
            skipped += held as usize;
            let flags = Flags {
                fit: fitted,
                ..req.flags.clone()
            };
            for round in held + 1..=req.rounds {
                per_cell.push((round, e.id.clone(), *suite, flags.clone()));
            }
        }
    }
    per_cell.sort_by_key(|(round, _, _, _)| *round);
    let cells: Vec<Cell> = per_cell
        .into_iter()
        .map(|(round, experiment, suite, flags)| Cell {
            experiment,
            suite,
            name: CellName::new(id, round, suite.as_str()),
            flags,
        })
        .collect();
    // every line must read back: a --set or --cpus value the plan's grammar refuses is bad input now
    for c in &cells {
        super::planfile::parse_cell(&c.args_line()).map_err(|m| {
            invalid(format!(
                "cell {}: {m} (from --set/--cpus: give plain words, no spaces or quotes)",
                c.id()
            ))
        })?;
    }
    Ok(Plan {
        id,
        made_by: req.made_by.clone(),
        skipped,
        cells,
    })
}

use chrono::Timelike as _;
