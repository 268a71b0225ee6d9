//! The two sides of `perflab compare EXP --a KEY=VALUE --b KEY=VALUE`: each side's declared
//! difference parsed (`suite=...` and any `--set` key) and checked (a pair that is not
//! KEY=VALUE, a key given twice, an unknown suite: bad input), its configuration of an
//! experiment resolved through the overrides `run --set` validates, the refusal of two sides
//! that are one configuration, and which recorded rounds are rounds of a side's configuration
//! (`config::Config`, the notion `capacity` and `compare`'s sides use too).
//! Pure.
use super::config::Config;
use crate::error::InvalidInput;
use crate::experiment::{self, Experiment, overrides};
use crate::images::Suite;
use crate::rundir::batch::CompareSide;

/// One side's declared difference.
#[derive(Debug, Clone, PartialEq)]
pub struct SideSpec {
    pub side: CompareSide,
    /// The side's pairs as given (`suite=forky`, `stack.node.burn_us=1000`); empty: the
    /// experiment as published.
    pub declared: Vec<String>,
    /// `suite=`, else trixie (as `perflab run`).
    pub suite: Suite,
    /// The side's `--set` overrides: the common `--set`s, then its own keys (which win).
    pub sets: Vec<String>,
}

/// Pairs a side may hold (a guard on hostile input; real sides hold a few).
pub(crate) const MAX_PAIRS: usize = 64;

fn bad(side: CompareSide, msg: String) -> InvalidInput {
    InvalidInput(format!("--{}: {msg}", side.as_str().to_lowercase()))
}

/// Parse one side's pairs; `common` are the `--set`s both sides share.
pub fn parse_side(
    side: CompareSide,
    pairs: &[String],
    common: &[String],
) -> Result<SideSpec, InvalidInput> {
    if pairs.len() > MAX_PAIRS {
        return Err(bad(
            side,
            format!("{} pairs; give at most {MAX_PAIRS}", pairs.len()),
        ));
    }
    let mut suite = None;
    let mut keys = std::collections::BTreeSet::new();
    let mut sets = common.to_vec();
    for p in pairs {
        let Some((k, v)) = p.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
            return Err(bad(
                side,
                format!(
                    "`{p}` is not KEY=VALUE; give suite=forky or a --set key such as stack.node.burn_us=1000"
                ),
            ));
        };
        let (k, v) = (k.trim(), v.trim());
        if !keys.insert(k.to_string()) {
            return Err(bad(
                side,
                format!("`{k}` given twice; give each key once a side"),
            ));
        }
        if k == "suite" {
            let s: Suite = v.parse().map_err(|e: InvalidInput| bad(side, e.0))?;
            suite = Some(s);
        } else {
            sets.push(format!("{k}={v}"));
        }
    }
    Ok(SideSpec {
        side,
        declared: pairs.iter().map(|p| p.trim().to_string()).collect(),
        suite: suite.unwrap_or_default(),
        sets,
    })
}

impl SideSpec {
    /// `A (published, trixie)`, `B (suite=forky)`.
    pub(crate) fn describe(&self) -> String {
        if self.declared.is_empty() {
            return format!("{} (published, {})", self.side, self.suite);
        }
        format!("{} ({})", self.side, self.declared.join(", "))
    }

    /// The side's configuration of `e`: the overrides applied and validated as `run --set`
    /// does (bad input naming the side and the key).
    pub(crate) fn resolve(&self, e: &Experiment) -> anyhow::Result<Experiment> {
        let (exp, _warnings) = overrides::apply(e, &self.sets)
            .map_err(|d| anyhow::Error::new(experiment::invalid(&d)))
            .map_err(|err| {
                err.context(format!(
                    "side {} of {}: its keys are `--set` keys of the experiment",
                    self.describe(),
                    e.id
                ))
            })?;
        Ok(exp)
    }

    /// This side's configuration of `e` (the experiment as published) in `profile` (quick,
    /// fitted): what its recorded rounds must have been run with, resolved stack and load
    /// included (a side whose keys do not resolve compares none; `resolve` refuses it first).
    pub(crate) fn config(&self, e: &Experiment, profile: (bool, bool)) -> Config {
        let resolved = self.resolve(e).ok();
        Config::declared(
            self.suite.as_str(),
            &self.sets,
            e.lab,
            profile,
            resolved.as_ref(),
        )
    }
}

/// Refuse two sides that are one configuration of an experiment (the same suite and the same
/// resolved experiment): there is nothing to compare. `resolved` holds, per experiment, A's
/// and B's configuration.
pub(crate) fn check_sides_differ(
    a: &SideSpec,
    b: &SideSpec,
    resolved: &[(Experiment, Experiment)],
) -> Result<(), InvalidInput> {
    let same: Vec<&str> = resolved
        .iter()
        .filter(|(ea, eb)| a.suite == b.suite && ea == eb)
        .map(|(ea, _)| ea.id.as_str())
        .collect();
    if same.is_empty() {
        return Ok(());
    }
    Err(InvalidInput(format!(
        "both sides are the same configuration of {} ({} against {}): declare the difference, e.g. --b suite=forky or --b stack.node.burn_us=1000",
        same.join(", "),
        a.describe(),
        b.describe()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Catalog, CatalogEntry};
    use crate::rundir::Manifest;
    use std::path::Path;

    fn pairs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn exp(id: &str) -> Experiment {
        let c = Catalog::load(
            Path::new("experiments"),
            &crate::verify::quantities::Quantities,
        )
        .unwrap();
        let CatalogEntry::Experiment(e) = &c.get(id).unwrap().entry else {
            panic!("{id} is an experiment")
        };
        e.clone()
    }

    #[test]
    fn a_side_reads_its_suite_and_set_keys_after_the_common_ones() {
        let s = parse_side(
            CompareSide::B,
            &pairs(&["suite=forky", " stack.node.burn_us = 1000"]),
            &pairs(&["hold_s=10"]),
        )
        .unwrap();
        assert_eq!(s.suite, Suite::Forky);
        assert_eq!(s.sets, ["hold_s=10", "stack.node.burn_us=1000"]);
        assert_eq!(s.describe(), "B (suite=forky, stack.node.burn_us = 1000)");
        // no pair: the experiment as published, on trixie
        let a = parse_side(CompareSide::A, &[], &[]).unwrap();
        assert_eq!((a.suite, a.sets.len()), (Suite::Trixie, 0));
        assert_eq!(a.describe(), "A (published, trixie)");
    }

    #[test]
    fn bad_pairs_are_refused_naming_the_side_and_the_fix() {
        for (given, says) in [
            (vec!["burn_us"], "--b: `burn_us` is not KEY=VALUE"),
            (vec!["=3"], "--b: `=3` is not KEY=VALUE"),
            (vec![""], "is not KEY=VALUE"),
            (vec!["suite=sid"], "--b: unknown Debian suite `sid`"),
            (vec!["suite=forky", "suite=trixie"], "`suite` given twice"),
            (vec!["burn_us=1", "burn_us=2"], "`burn_us` given twice"),
        ] {
            let e = parse_side(CompareSide::B, &pairs(&given), &[]).unwrap_err();
            assert!(e.0.contains(says), "{given:?}: {}", e.0);
        }
        let many: Vec<String> = (0..=MAX_PAIRS).map(|i| format!("k{i}=1")).collect();
        let e = parse_side(CompareSide::A, &many, &[]).unwrap_err();
        assert!(e.0.contains("give at most 64"), "{}", e.0);
    }

    #[test]
    fn an_unknown_key_is_bad_input_naming_the_side() {
        let e = exp("2a");
        let s = parse_side(CompareSide::B, &pairs(&["stack.node.burn=1"]), &[]).unwrap();
        let err = s.resolve(&e).unwrap_err();
        assert_eq!(crate::error::exit_code_for(&err), 2);
        let msg = format!("{err:#}");
        assert!(msg.contains("side B (stack.node.burn=1) of 2a"), "{msg}");
        assert!(msg.contains("stack.node.burn"), "{msg}");
        // a php key on a node experiment
        let s = parse_side(CompareSide::A, &pairs(&["stack.php.max_children=4"]), &[]).unwrap();
        assert_eq!(crate::error::exit_code_for(&s.resolve(&e).unwrap_err()), 2);
    }

    #[test]
    fn one_configuration_on_both_sides_is_refused() {
        let e = exp("2a");
        let resolve = |side, p: &[&str]| {
            let s = parse_side(side, &pairs(p), &[]).unwrap();
            let r = s.resolve(&e).unwrap();
            (s, r)
        };
        // nothing declared on either side
        let (a, ra) = resolve(CompareSide::A, &[]);
        let (b, rb) = resolve(CompareSide::B, &[]);
        let err = check_sides_differ(&a, &b, &[(ra.clone(), rb)]).unwrap_err();
        assert!(err.0.contains("same configuration of 2a"), "{}", err.0);
        // the same override spelt two ways, and the default suite named
        let (a, ra) = resolve(CompareSide::A, &["burn_us=1000"]);
        let (b, rb) = resolve(CompareSide::B, &["stack.node.burn_us=1000", "suite=trixie"]);
        assert!(check_sides_differ(&a, &b, &[(ra, rb)]).is_err());
        // a real difference
        let (b, rb) = resolve(CompareSide::B, &["suite=forky"]);
        let (a, ra) = resolve(CompareSide::A, &[]);
        check_sides_differ(&a, &b, &[(ra.clone(), rb)]).unwrap();
        let (b, rb) = resolve(CompareSide::B, &["burn_us=10"]);
        check_sides_differ(&a, &b, &[(ra, rb)]).unwrap();
    }

    #[test]
    fn recorded_rounds_match_by_suite_overrides_profile_fit_and_stack() {
        let text = include_str!(
            "../../tests/fixtures/compare/2a-burn/2a/20261130T222517Z-r1/manifest.json"
        );
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.overrides, ["stack.node.burn_us=1000"]);
        // the round's own experiment as published (the catalog's may have moved on since)
        let mut published = m.experiment.clone();
        published.stack.node.as_mut().unwrap().burn_us = 0;
        let admits = |p: &[&str], profile, published: &Experiment| {
            let s = parse_side(CompareSide::B, &pairs(p), &[]).unwrap();
            s.config(published, profile).admits(&Config::of(&m))
        };
        // the key spelt short, the suite named or not
        assert!(admits(&["burn_us=1000"], (true, false), &published));
        assert!(admits(
            &["suite=trixie", "stack.node.burn_us= 1000"],
            (true, false),
            &published
        ));
        // another value, another suite, no override, full length, fitted: not this round
        assert!(!admits(&["burn_us=500"], (true, false), &published));
        assert!(!admits(
            &["burn_us=1000", "suite=forky"],
            (true, false),
            &published
        ));
        assert!(!admits(&[], (true, false), &published));
        assert!(!admits(&["burn_us=1000"], (false, false), &published));
        assert!(!admits(&["burn_us=1000"], (true, true), &published));
        // the same keys on another stack (the YAML changed): not a round of this side
        published.stack.node.as_mut().unwrap().processes += 1;
        assert!(!admits(&["burn_us=1000"], (true, false), &published));
    }
}
