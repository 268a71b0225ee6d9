//! A group's `map:` checked against the catalog (issue 44): its experiment exists and has a
//! trigger, the size is a `--set` key with 2 to [`MAX_SIZES`] ascending values and a
//! resolution above 0, the rows are 1 to [`MAX_ROWS`] with distinct names, and every cell
//! (each row's `set` pairs with each size) applies to the experiment as `--set` would, so
//! `verify --run-missing` never starts a cell that cannot run. At most 144 cells are applied.
use std::path::Path;

use super::diag::Diagnostic;
use super::schema::{Experiment, TriggerMap};

/// Most columns (trigger sizes) a map declares; `--refine` adds at most [`MAX_REFINED`] per row.
pub const MAX_SIZES: usize = 12;
/// Most rows (configurations) a map declares.
pub const MAX_ROWS: usize = 12;
/// Most sizes `--refine` adds to one row (a bisection: 2^-6 of the gap it starts from).
pub const MAX_REFINED: usize = 6;

/// The `--set` pairs of the cell of `row` at `size` (the row's, then the size's).
pub fn cell_sets(map: &TriggerMap, row: usize, size: f64) -> Vec<String> {
    let mut v = map.rows[row].set.clone();
    v.push(format!("{}={}", map.size.key, size));
    v
}

/// A fault of a map: its field, what is wrong, the fix.
type Fault = (String, String, &'static str);

/// The map of the group in `file` (its YAML `src`), with `base` its experiment when it is one
/// of the catalog: every fault, located.
pub(crate) fn check(
    file: &Path,
    src: &str,
    map: &TriggerMap,
    base: Option<&Experiment>,
) -> Vec<Diagnostic> {
    let faults = match base {
        None => vec![(
            "map.experiment".to_string(),
            format!("unknown experiment `{}`", map.experiment),
            "name an experiment (not a group) of the catalog that has a `load.trigger`",
        )],
        Some(e) => {
            let mut f = shape(map, e);
            if f.is_empty() {
                f.extend(cells(map, e));
            }
            f
        }
    };
    (faults.into_iter())
        .map(|(field, msg, help)| {
            Diagnostic::error(file, field, msg)
                .help(help)
                .located_in(src)
        })
        .collect()
}

/// The experiment, the sizes, the resolution and the rows' count and names.
fn shape(map: &TriggerMap, e: &Experiment) -> Vec<Fault> {
    let mut f: Vec<Fault> = Vec::new();
    if e.load.trigger.is_none() {
        f.push((
            "map.experiment".into(),
            format!(
                "`{}` has no load.trigger: a map's cells are trigger runs",
                e.id
            ),
            "name an experiment with a `load.trigger` (drop-stuck, drop-recovered)",
        ));
    }
    let s = &map.size;
    let sizes_ok = (2..=MAX_SIZES).contains(&s.values.len())
        && s.values.iter().all(|v| v.is_finite() && *v >= 0.0)
        && s.values.windows(2).all(|w| w[0] < w[1]);
    if !sizes_ok {
        f.push((
            "map.size.values".into(),
            format!(
                "{:?}: 2 to {MAX_SIZES} finite sizes >= 0, ascending",
                s.values
            ),
            "e.g. `values: [2, 5, 10]` (seconds of a CPU cut)",
        ));
    }
    let span = s.values.last().unwrap_or(&0.0) - s.values.first().unwrap_or(&0.0);
    if !(s.resolution.is_finite() && s.resolution > 0.0 && (!sizes_ok || s.resolution <= span)) {
        f.push((
            "map.size.resolution".into(),
            format!(
                "{}: above 0 and at most the sizes' span ({span})",
                s.resolution
            ),
            "how close --refine brings the sizes around the knife edge, e.g. `resolution: 1`",
        ));
    }
    if !(1..=MAX_ROWS).contains(&map.rows.len()) {
        f.push((
            "map.rows".into(),
            format!("{} rows: 1 to {MAX_ROWS}", map.rows.len()),
            "each row a configuration: `- {name: ..., set: [KEY=VALUE, ...]}`",
        ));
    }
    for (i, r) in map.rows.iter().enumerate() {
        if r.name.trim().is_empty() || map.rows[..i].iter().any(|o| o.name == r.name) {
            f.push((
                format!("map.rows[{i}].name"),
                format!("`{}`: empty or the name of an earlier row", r.name),
                "give each row its own name: it labels the map's row",
            ));
        }
    }
    f
}

/// The first cell (a row's pairs with a size) that does not apply to the experiment.
fn cells(map: &TriggerMap, e: &Experiment) -> Option<Fault> {
    for i in 0..map.rows.len() {
        for &v in &map.size.values {
            let Err(faults) = super::overrides::apply(e, &cell_sets(map, i, v)) else {
                continue;
            };
            let why: Vec<String> = (faults.iter().filter(|f| f.is_error()))
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect();
            return Some((
                format!("map.rows[{i}].set"),
                format!(
                    "the cell at {} = {v} does not apply: {}",
                    map.size.key,
                    why.join("; ")
                ),
                "each pair as `--set` takes it (`perflab show EXPERIMENT --set KEY=VALUE` checks one)",
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::schema::{MapRow, MapSize};

    fn drop_stuck() -> Experiment {
        let path = format!("{}/experiments/drop-stuck.yaml", env!("CARGO_MANIFEST_DIR"));
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn map(values: Vec<f64>, rows: Vec<(&str, Vec<&str>)>) -> TriggerMap {
        TriggerMap {
            experiment: "drop-stuck".into(),
            size: MapSize {
                key: "load.trigger.for_s".into(),
                values,
                resolution: 1.0,
            },
            rows: (rows.into_iter())
                .map(|(n, s)| MapRow {
                    name: n.to_string(),
                    set: s.iter().map(|x| x.to_string()).collect(),
                })
                .collect(),
        }
    }

    fn fields(m: &TriggerMap, e: Option<&Experiment>) -> Vec<String> {
        check(Path::new("g.yaml"), "", m, e)
            .into_iter()
            .map(|d| d.field)
            .collect()
    }

    #[test]
    fn a_map_that_runs_passes_and_its_cells_carry_the_size() {
        let e = drop_stuck();
        let m = map(
            vec![2.0, 5.0],
            vec![
                ("bugs", vec![]),
                ("backoff", vec!["load.drop.retry=backoff"]),
            ],
        );
        assert!(fields(&m, Some(&e)).is_empty());
        assert_eq!(
            cell_sets(&m, 1, 2.5),
            ["load.drop.retry=backoff", "load.trigger.for_s=2.5"]
        );
    }

    #[test]
    fn each_fault_names_its_field() {
        let e = drop_stuck();
        let one = || vec![("a", vec![])];
        assert_eq!(
            fields(&map(vec![2.0], one()), Some(&e)),
            ["map.size.values"]
        );
        assert_eq!(
            fields(&map(vec![5.0, 2.0], one()), Some(&e)),
            ["map.size.values"]
        );
        let mut coarse = map(vec![2.0, 5.0], one());
        coarse.size.resolution = 4.0;
        assert_eq!(fields(&coarse, Some(&e)), ["map.size.resolution"]);
        assert_eq!(fields(&map(vec![2.0, 5.0], vec![]), Some(&e)), ["map.rows"]);
        assert_eq!(
            fields(
                &map(vec![2.0, 5.0], vec![("a", vec![]), ("a", vec![])]),
                Some(&e)
            ),
            ["map.rows[1].name"]
        );
        // a trigger longer than the step, and a key --set does not take
        assert_eq!(
            fields(&map(vec![2.0, 150.0], one()), Some(&e)),
            ["map.rows[0].set"]
        );
        let nope = vec![("a", vec!["load.nope=1"])];
        assert_eq!(
            fields(&map(vec![2.0, 5.0], nope), Some(&e)),
            ["map.rows[0].set"]
        );
        assert_eq!(
            fields(&map(vec![2.0, 5.0], one()), None),
            ["map.experiment"]
        );
        let mut plain = e.clone();
        plain.load.trigger = None;
        assert_eq!(
            fields(&map(vec![2.0, 5.0], one()), Some(&plain))[0],
            "map.experiment"
        );
    }
}
