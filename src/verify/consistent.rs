//! Whether recorded rounds may be aggregated (`capacity`): no run counted twice, one experiment,
//! one configuration (`config::Config`: the `--set` overrides, the profile, fitted or as
//! published, the Debian suite, and the resolved stack and load of an unfitted run). Pure.
use super::config::Config;
use crate::analyze::model::Report;
use crate::rundir::Manifest;
use std::collections::BTreeMap;

/// One round: its label, report and manifest.
pub(crate) type Round<'a> = (&'a str, &'a Report, &'a Manifest);

/// Why the rounds cannot be aggregated: every problem found, one per line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("they are not distinct rounds of one configuration:\n  - {}", .0.join("\n  - "))]
pub(crate) struct Inconsistent(pub Vec<String>);

/// What a round was run with, as (aspect, value): rounds that differ in any are not rounds of
/// one configuration (`config::Config`, the one notion of it).
pub(crate) fn config_of(m: &Manifest) -> Vec<(&'static str, String)> {
    Config::of(m).aspects()
}

/// Runs that are one run counted twice: the same manifest identity (a copied directory), or
/// the same report.
fn duplicates(runs: &[Round<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        let id = |m: &Manifest| (m.experiment_id.clone(), m.run_id.clone(), m.created);
        let first = runs[..i].iter().find(|b| id(b.2) == id(a.2) || b.1 == a.1);
        if let Some(b) = first {
            out.push(format!(
                "{} and {} are one run counted twice (run {} of {}, created {}): remove the copy",
                b.0,
                a.0,
                a.2.run_id,
                a.2.experiment_id,
                a.2.created.format("%Y-%m-%dT%H:%M:%SZ")
            ));
        }
    }
    out
}

/// Rounds whose manifest names another experiment than `exp` (a run copied into another
/// experiment's directory).
fn other_experiments(exp: &str, runs: &[Round<'_>]) -> Vec<String> {
    runs.iter()
        .filter(|r| r.2.experiment_id != exp)
        .map(|r| {
            format!(
                "{} is a run of {}, not of {exp} (its manifest's experiment_id): move it out of {exp}'s directory",
                r.0, r.2.experiment_id
            )
        })
        .collect()
}

/// Each aspect of the configuration the rounds differ in, with the runs of each value.
fn mixed_configs(runs: &[Round<'_>]) -> Vec<String> {
    let configs: Vec<Vec<(&str, String)>> = runs.iter().map(|r| config_of(r.2)).collect();
    let mut out = Vec::new();
    let aspects: Vec<&str> = configs
        .first()
        .map(|c| c.iter().map(|a| a.0).collect())
        .unwrap_or_default();
    for aspect in aspects {
        let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (r, c) in runs.iter().zip(&configs) {
            // An aspect a fitted run does not compare: the `fit` aspect says they differ.
            let Some(value) = c.iter().find(|a| a.0 == aspect) else {
                groups.clear();
                break;
            };
            groups.entry(value.1.as_str()).or_default().push(r.0);
        }
        if groups.len() < 2 {
            continue;
        }
        let show_value = !matches!(aspect, "stack" | "load");
        let parts: Vec<String> = groups
            .iter()
            .enumerate()
            .map(|(i, (value, labels))| match show_value {
                true => format!("{value}: {}", labels.join(", ")),
                false => format!("#{}: {}", i + 1, labels.join(", ")),
            })
            .collect();
        out.push(format!(
            "the rounds differ in {aspect}: {}",
            parts.join("; ")
        ));
    }
    out
}

/// Check that `runs` are distinct rounds of `exp` in one configuration; every problem is named.
pub(crate) fn check(exp: &str, runs: &[Round<'_>]) -> Result<(), Inconsistent> {
    let mut problems = duplicates(runs);
    problems.extend(other_experiments(exp, runs));
    problems.extend(mixed_configs(runs));
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Inconsistent(problems)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::load::{LoadedRun, load_run};

    fn fixture(set: &str, run: &str) -> LoadedRun {
        let dir = format!("tests/fixtures/compare/{set}/exp1/{run}");
        load_run(std::path::Path::new(&dir)).unwrap()
    }

    fn check_of(runs: &[LoadedRun]) -> Result<(), Inconsistent> {
        let labels: Vec<String> = runs.iter().map(LoadedRun::label).collect();
        let rounds: Vec<Round<'_>> = runs
            .iter()
            .zip(&labels)
            .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
            .collect();
        check("exp1", &rounds)
    }

    const CLEAN: [&str; 3] = [
        "20261130T223353Z-r1",
        "20261130T223414Z-r2",
        "20261130T223437Z-r3",
    ];

    #[test]
    fn distinct_rounds_of_one_configuration_pass() {
        let runs: Vec<LoadedRun> = CLEAN.iter().map(|r| fixture("exp1-clean", r)).collect();
        assert_eq!(check_of(&runs), Ok(()));
    }

    #[test]
    fn burn_and_clean_rounds_are_refused_naming_each_side() {
        let runs = vec![
            fixture("exp1-clean", CLEAN[0]),
            fixture("exp1-burn", "20261130T223236Z-r3"),
            fixture("exp1-burn", "20261130T223214Z-r2"),
        ];
        let Err(Inconsistent(p)) = check_of(&runs) else {
            panic!("mixed rounds accepted")
        };
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(
            p[0],
            "the rounds differ in --set overrides: none: exp1/20261130T223353Z-r1; \
             stack.php.burn_us=1700: exp1/20261130T223236Z-r3, exp1/20261130T223214Z-r2"
        );
        assert!(
            p[1].starts_with("the rounds differ in stack: #1: "),
            "{p:?}"
        );
    }

    #[test]
    fn a_copied_round_and_another_experiments_run_are_refused() {
        let mut runs: Vec<LoadedRun> = CLEAN.iter().map(|r| fixture("exp1-clean", r)).collect();
        let mut copy = runs[2].clone();
        copy.dir = copy.dir.with_file_name("20261130T233437Z-r4");
        runs.insert(0, copy);
        let Err(Inconsistent(p)) = check_of(&runs) else {
            panic!("a copy accepted")
        };
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(
                "exp1/20261130T233437Z-r4 and exp1/20261130T223437Z-r3 are one run counted twice"
            ),
            "{p:?}"
        );
        // the same report under another run id is a copy all the same
        runs[0].manifest.run_id = "20261130T233437Z-r4".into();
        assert!(check_of(&runs).is_err());
        let other = load_run(std::path::Path::new(
            "tests/fixtures/verify/exp2-mc80/20261130T035848Z-r1",
        ))
        .unwrap();
        let runs = vec![other, fixture("exp1-clean", CLEAN[0])];
        let Err(Inconsistent(p)) = check_of(&runs) else {
            panic!("another experiment's run accepted")
        };
        assert!(p[0].contains("is a run of exp2-mc80, not of exp1"), "{p:?}");
    }
}
