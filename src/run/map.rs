//! `perflab verify GROUP` when the group draws a recovered/stuck map (issue 44): the map read
//! from the recorded runs (`verify::map`); with `--run-missing` its cells without a run are run
//! first, one round each through `perflab run`'s pipeline; with `--refine` each row's gap
//! between a size it recovered from and the smallest it stayed stuck at is halved, one run at a
//! time, until it is within the map's resolution (at most `MAX_REFINED` sizes a row).
//!
//! The cells' runs are an out/ root of their own, `<out>/maps/<group>/runs/`: they are runs of
//! the map's experiment with other settings, and under `<out>/<experiment>/` the newest of them
//! would be the round `verify` judges that experiment's claims on. The map is written to a new
//! folder beside them, `<out>/maps/<group>/<UTC time>/`: map.json, report.txt, report.html.
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::missing::TopUp;
use crate::experiment::{Catalog, CatalogEntry, Experiment, TriggerMap, map_check};
use crate::plan::PlanOptions;
use crate::verify::map::{self, MapRead, Profile};

/// What `perflab verify` asks of a group's map.
pub(crate) struct MapAsk<'a> {
    pub group: &'a str,
    pub out_root: &'a Path,
    pub suite: Option<&'a str>,
    /// `--run-missing`: how the cells without a run are run.
    pub top_up: Option<TopUp>,
    /// `--refine`: bisect each row's gap (with `--run-missing`).
    pub refine: bool,
}

/// `--refine` asked of a target that draws no map: bad input, before anything runs.
pub(crate) fn check_refine(cat: &Catalog, target: &str, refine: bool) -> anyhow::Result<()> {
    match cat.get(target).map(|f| &f.entry) {
        _ if !refine => Ok(()),
        Some(CatalogEntry::Group(g)) if g.map.is_some() => Ok(()),
        _ => Err(crate::error::invalid(format!(
            "--refine: `{target}` draws no recovered/stuck map (a group with a `map:`, such as drop-day); without it, drop --refine"
        ))),
    }
}

/// After `perflab verify`'s claims: the map of the target, when it is a group with one, drawn
/// (run and refined as `ask` and `refine` say) and said on stderr unless `quiet`.
pub(crate) fn after_verify(
    cat: &Catalog,
    ask: &super::missing::Ask,
    out_root: &Path,
    (refine, quiet): (bool, bool),
) -> anyhow::Result<()> {
    let map = MapAsk {
        group: ask.target,
        out_root,
        suite: ask.suite,
        top_up: ask.top_up,
        refine,
    };
    if let Some((m, dir)) = draw(cat, &map)?
        && !quiet
    {
        crate::say!("{}map report: {}", map::text(&m), dir.display());
    }
    Ok(())
}

/// The map `ask.group` draws, run and refined as asked, and the folder it was written to; None
/// when the target is not a group with a `map:`.
pub(crate) fn draw(cat: &Catalog, ask: &MapAsk) -> anyhow::Result<Option<(MapRead, PathBuf)>> {
    let Some(CatalogEntry::Group(g)) = cat.get(ask.group).map(|f| &f.entry) else {
        return Ok(None);
    };
    let Some(spec) = &g.map else { return Ok(None) };
    let Some(CatalogEntry::Experiment(e)) = cat.get(&spec.experiment).map(|f| &f.entry) else {
        anyhow::bail!(
            "{}: map.experiment `{}` is not an experiment",
            ask.group,
            spec.experiment
        );
    };
    let profile = Profile {
        suite: ask.suite.unwrap_or("trixie").to_string(),
        quick: ask.top_up.map(|t| t.quick),
    };
    let group_dir = ask.out_root.join("maps").join(ask.group);
    let cells_root = group_dir.join(CELLS);
    let read = || map::read(&cells_root, ask.group, spec, e, &profile);
    let mut m = read();
    if let Some(opts) = ask.top_up {
        let cells = map::missing(&m);
        if !cells.is_empty() && !opts.quiet {
            crate::say!(
                "map {}: running {} cell(s) without a run",
                ask.group,
                cells.len()
            );
        }
        for (row, size) in cells {
            run_cell(cat, e, spec, (row, size), ask, opts, &cells_root)?;
        }
        m = read();
        // a cell whose run failed stays without one: it is not run again
        let mut tried: Vec<(usize, u64)> = Vec::new();
        while ask.refine {
            let next: Vec<(usize, f64)> = (m.rows.iter().enumerate())
                .filter_map(|(i, r)| {
                    map::next_size(r.edge, spec.size.resolution, map::refined(r)).map(|s| (i, s))
                })
                .filter(|&(i, s)| !tried.contains(&(i, s.to_bits())))
                .collect();
            if next.is_empty() {
                break;
            }
            tried.extend(next.iter().map(|&(i, s)| (i, s.to_bits())));
            for (row, size) in next {
                if !opts.quiet {
                    crate::say!(
                        "map {}: refining `{}` at {} = {size}",
                        ask.group,
                        spec.rows[row].name,
                        spec.size.key
                    );
                }
                run_cell(cat, e, spec, (row, size), ask, opts, &cells_root)?;
            }
            m = read();
        }
    }
    let dir = write(&m, ask.out_root)?;
    Ok(Some((m, dir)))
}

/// The cells' out/ root inside `<out>/maps/<group>/`.
pub(crate) const CELLS: &str = "runs";

/// One round of the cell `(row, size)`: the map's experiment with the row's pairs and the size.
fn run_cell(
    cat: &Catalog,
    e: &Experiment,
    spec: &TriggerMap,
    (row, size): (usize, f64),
    ask: &MapAsk,
    opts: TopUp,
    cells_root: &Path,
) -> anyhow::Result<()> {
    crate::atomic::create_dirs_under(ask.out_root, &["maps", ask.group, CELLS])?;
    let sets = map_check::cell_sets(spec, row, size);
    let plan = PlanOptions { quick: opts.quick };
    let resolved = super::resolve::experiments(cat, &e.id, &sets, plan)?;
    let req = super::RunRequest {
        target: format!(
            "verify {} (map: {}, {} = {size})",
            ask.group, spec.rows[row].name, spec.size.key
        ),
        resolved,
        overrides: sets,
        layout: super::resolve::layout(None, false)?,
        rounds: 1,
        suite: ask.suite.unwrap_or("trixie").parse()?,
        align: !opts.no_align,
        wait: crate::lock::Wait::Block,
        out_root: cells_root.to_path_buf(),
        quiet: opts.quiet,
        no_samplers: false,
        generators: 1,
        placement: Default::default(),
        refine: None,
        fit: false,
        k6_dashboard: false,
        run_name: None,
        live: None,
    };
    super::missing::execute_quietly(req, opts.quiet)
}

/// map.json, report.txt and report.html in a new folder under `<out>/maps/<group>/`.
fn write(m: &MapRead, out_root: &Path) -> anyhow::Result<PathBuf> {
    let parent = crate::atomic::create_dirs_under(out_root, &["maps", &m.group])?;
    let now = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let dir = crate::rundir::create_new_dir(&parent, &now)?;
    let l = crate::rundir::Layout::new(&dir);
    let json = serde_json::to_string_pretty(m)? + "\n";
    for (path, text) in [
        (l.map_json(), json),
        (l.report_txt(), map::text(m)),
        (l.report_html(), crate::html::map_page::render(m, &parent)),
    ] {
        crate::rundir::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(dir)
}
