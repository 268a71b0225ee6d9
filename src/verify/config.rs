//! What a recorded round was run with: the one notion of "a configuration" in `verify`. The
//! Debian suite, the `--set` overrides (keys resolved as `--set` resolves them, values without
//! spaces or list brackets, in any order), the profile (`--quick` or full), fitted or as
//! published, and an unfitted run's resolved stack and load. `capacity`'s rounds
//! (`consistent`), `compare`'s sides (`compare::sides`) and the recorded rounds `compare
//! TARGET` counts for a side (`side`) are all held to it. Pure.
use std::collections::BTreeMap;

use crate::experiment::{Experiment, Lab, keys::resolve_key};
use crate::rundir::Manifest;

/// A configuration of one experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    /// `trixie`, `forky`; `unknown` for a manifest that names none.
    pub suite: String,
    /// Resolved `--set` key to value.
    pub overrides: BTreeMap<String, String>,
    pub quick: bool,
    pub fitted: bool,
    /// An unfitted run's resolved stack and load, as JSON; `None` for a fitted run (its steps
    /// and stack are its own fit's) or a side not yet resolved.
    pub resolved: Option<(String, String)>,
    /// The images a round ran on: `None` for a declared side (not yet built) or a manifest
    /// that records none.
    pub build: Option<Build>,
}

/// The images a round ran on, as its manifest records them: each image's tag and digest
/// (`images`) and the package versions read from them (`components`, less the host's Docker
/// Engine). Rounds of two builds never pool: a rebuilt image is another configuration, even
/// under the same tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Build {
    pub images: BTreeMap<String, String>,
    pub versions: BTreeMap<String, String>,
}

/// The aspects of a `Build`, compared only where both configurations know theirs.
const BUILD_ASPECTS: [&str; 2] = ["images", "versions"];

/// Components that describe the host, not an image.
const HOST_COMPONENTS: [&str; 1] = ["docker-engine"];

impl Build {
    fn of(m: &Manifest) -> Option<Build> {
        let versions: BTreeMap<String, String> = m
            .components
            .iter()
            .filter(|(k, _)| !HOST_COMPONENTS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (!m.images.is_empty() || !versions.is_empty()).then(|| Build {
            images: m.images.clone(),
            versions,
        })
    }

    /// What differs from `other`, one `key: this -> other` each (images first), at most `max`.
    pub(crate) fn changes(&self, other: &Build, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (what, a, b) in [
            ("image", &self.images, &other.images),
            ("version", &self.versions, &other.versions),
        ] {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (a.get(k), b.get(k));
                if x != y {
                    let show = |v: Option<&String>| v.map_or("(absent)".to_string(), short);
                    out.push(format!("{what} {k}: {} -> {}", show(x), show(y)));
                }
            }
        }
        let n = out.len();
        if n > max {
            out.truncate(max);
            out.push(format!("{} more", n - max));
        }
        out
    }

    fn text(map: &BTreeMap<String, String>) -> String {
        map.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// An image's record shortened for a message: `perflab/node-app:trixie-1f79 (sha256:bd98..)`
/// keeps the tag and the digest's first 12 hex digits.
fn short(v: &String) -> String {
    match v.split_once("(sha256:") {
        Some((tag, digest)) => format!("{tag}(sha256:{})", &digest[..digest.len().min(12)]),
        None => v.clone(),
    }
}

/// `--set` pairs as a map of resolved key to value (spaces and list brackets dropped; a later
/// key wins, as when applied). A key `--set` does not know stays as written.
pub(crate) fn normalized(sets: &[String], lab: Lab) -> BTreeMap<String, String> {
    sets.iter()
        .filter_map(|s| s.split_once('='))
        .map(|(k, v)| {
            let k = k.trim();
            let key = resolve_key(lab, k).unwrap_or_else(|_| k.to_string());
            let value: String = v
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '[' && *c != ']')
                .collect();
            (key, value)
        })
        .collect()
}

/// Fields of the load that justify it in prose and change nothing that runs: an edited
/// sentence does not make a new configuration.
const PROSE: [&str; 1] = ["vu_cap_reason"];

fn stack_and_load(e: &Experiment) -> (String, String) {
    let mut load = serde_json::to_value(&e.load).unwrap_or_default();
    if let Some(map) = load.as_object_mut() {
        PROSE.iter().for_each(|k| drop(map.remove(*k)));
    }
    (
        serde_json::to_string(&e.stack).unwrap_or_default(),
        load.to_string(),
    )
}

impl Config {
    /// The configuration a manifest records.
    pub(crate) fn of(m: &Manifest) -> Config {
        let fitted = m.measurements.fit.is_some();
        Config {
            suite: m.suite().unwrap_or_else(|| "unknown".into()),
            overrides: normalized(&m.overrides, m.experiment.lab),
            quick: m.plan.quick.is_some(),
            fitted,
            resolved: (!fitted).then(|| stack_and_load(&m.experiment)),
            build: Build::of(m),
        }
    }

    /// A declared configuration: `suite` with the `--set` pairs `sets`, resolved to `e` (the
    /// experiment with those pairs applied) when given and unfitted.
    pub(crate) fn declared(
        suite: &str,
        sets: &[String],
        lab: Lab,
        (quick, fitted): (bool, bool),
        e: Option<&Experiment>,
    ) -> Config {
        Config {
            suite: suite.to_string(),
            overrides: normalized(sets, lab),
            quick,
            fitted,
            resolved: e.filter(|_| !fitted).map(stack_and_load),
            build: None,
        }
    }

    /// Whether a recorded round of configuration `round` is a round of this one: every aspect
    /// equal, the resolved stack and load and the build only where both are known.
    pub(crate) fn admits(&self, round: &Config) -> bool {
        fn known_equal<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
        }
        self.suite == round.suite
            && self.overrides == round.overrides
            && self.quick == round.quick
            && self.fitted == round.fitted
            && known_equal(&self.resolved, &round.resolved)
            && known_equal(&self.build, &round.build)
    }

    /// The build's changes from this configuration's to `other`'s, when both are known.
    pub(crate) fn build_changes(&self, other: &Config) -> Vec<String> {
        match (&self.build, &other.build) {
            (Some(a), Some(b)) => a.changes(b, 4),
            _ => Vec::new(),
        }
    }

    /// The overrides as `key=value` joined by spaces, `none` when there are none.
    pub(crate) fn overrides_text(&self) -> String {
        match self.overrides.is_empty() {
            true => "none".to_string(),
            false => self
                .overrides
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The aspects as (name, value), for naming what rounds differ in. The resolved stack and
    /// load come last and only for an unfitted run.
    pub(crate) fn aspects(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("--set overrides", self.overrides_text()),
            (
                "profile",
                match self.quick {
                    true => "--quick".to_string(),
                    false => "full".to_string(),
                },
            ),
            (
                "fit",
                match self.fitted {
                    true => "fitted (--fit)".to_string(),
                    false => "as published".to_string(),
                },
            ),
            ("suite", self.suite.clone()),
        ];
        if let Some((stack, load)) = &self.resolved {
            v.push(("stack", stack.clone()));
            v.push(("load", load.clone()));
        }
        if let Some(b) = &self.build {
            v.push(("images", Build::text(&b.images)));
            v.push(("versions", Build::text(&b.versions)));
        }
        v
    }

    /// The names of the aspects in which `other` differs from this configuration (the build's
    /// only where both are known).
    pub(crate) fn differences(&self, other: &Config) -> Vec<&'static str> {
        let (a, b) = (self.aspects(), other.aspects());
        let mut names: Vec<&'static str> = a
            .iter()
            .filter(|x| !b.contains(x))
            .chain(b.iter().filter(|x| !a.contains(x)))
            .map(|x| x.0)
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        let unknown_build = self.build.is_none() || other.build.is_none();
        names.retain(|n| seen.insert(*n) && !(unknown_build && BUILD_ASPECTS.contains(n)));
        names
    }

    /// `suite trixie, --set stack.node.burn_us=630, --quick`: the declared aspects in a line.
    pub(crate) fn describe(&self) -> String {
        let mut parts = vec![format!("suite {}", self.suite)];
        parts.push(match self.overrides.is_empty() {
            true => "no --set".into(),
            false => format!("--set {}", self.overrides_text()),
        });
        if self.quick {
            parts.push("--quick".into());
        }
        if self.fitted {
            parts.push("--fit".into());
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(set: &str, run: &str) -> Manifest {
        let p = format!("tests/fixtures/compare/{set}/2a/{run}/manifest.json");
        Manifest::parse(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn burn_round() -> Manifest {
        manifest("2a-burn", "20261130T222517Z-r1")
    }

    #[test]
    fn a_declared_side_admits_its_recorded_rounds_however_the_keys_are_spelt() {
        let m = burn_round();
        let round = Config::of(&m);
        assert_eq!(round.overrides_text(), "stack.node.burn_us=1000");
        let lab = m.experiment.lab;
        let side = |suite: &str, sets: &[&str], qf| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            Config::declared(suite, &sets, lab, qf, None)
        };
        assert!(side("trixie", &["burn_us=1000"], (true, false)).admits(&round));
        assert!(side("trixie", &[" stack.node.burn_us = 1000"], (true, false)).admits(&round));
        for other in [
            side("trixie", &["burn_us=500"], (true, false)),
            side("forky", &["burn_us=1000"], (true, false)),
            side("trixie", &[], (true, false)),
            side("trixie", &["burn_us=1000"], (false, false)),
            side("trixie", &["burn_us=1000"], (true, true)),
        ] {
            assert!(!other.admits(&round), "{other:?}");
        }
    }

    #[test]
    fn a_resolved_side_refuses_a_round_of_another_stack() {
        let m = burn_round();
        let round = Config::of(&m);
        let lab = m.experiment.lab;
        let sets = vec!["stack.node.burn_us=1000".to_string()];
        let same = Config::declared("trixie", &sets, lab, (true, false), Some(&m.experiment));
        assert!(same.admits(&round));
        // the catalog's 2a changed since the round (another pool size): not a round of it
        let mut changed = m.experiment.clone();
        changed.stack.node.as_mut().unwrap().pool_max += 1;
        let other = Config::declared("trixie", &sets, lab, (true, false), Some(&changed));
        assert!(!other.admits(&round));
        assert_eq!(round.differences(&other), ["stack"]);
        assert_eq!(round.differences(&same), Vec::<&str>::new());
        // a reworded justification is not another configuration; another cap is
        let mut reworded = m.experiment.clone();
        reworded.load.vu_cap_reason = Some("the cap binds late".into());
        let side = Config::declared("trixie", &sets, lab, (true, false), Some(&reworded));
        assert!(side.admits(&round));
        reworded.load.max_vus += 1;
        let side = Config::declared("trixie", &sets, lab, (true, false), Some(&reworded));
        assert_eq!(round.differences(&side), ["load"]);
        // a fitted side compares no stack
        let fitted = Config::declared("trixie", &sets, lab, (true, true), Some(&changed));
        assert_eq!(fitted.resolved, None);
    }

    #[test]
    fn the_description_names_the_declared_aspects() {
        let c = Config::of(&burn_round());
        assert_eq!(
            c.describe(),
            "suite trixie, --set stack.node.burn_us=1000, --quick"
        );
        let clean = Config::of(&manifest("2a-clean", "20261130T222840Z-r1"));
        assert_eq!(clean.describe(), "suite trixie, no --set, --quick");
        assert_eq!(clean.aspects()[0], ("--set overrides", "none".to_string()));
    }
}
