//! What is read across the labs' sections of `stack:` (`StackSettings`, whose fields the lab
//! registry in `lab/mod.rs` declares), what each section declares of itself (`Section`: the
//! bounds of its numbers and its own checks), and the serde helpers of the sections.
use super::{Lab, StackSettings, descriptor};

/// A section of `stack:` (PostgreSQL's, each lab's): the largest value of each of its numeric
/// settings and its checks. The lab registry calls both for every section, so a lab's settings
/// type is the one place its bounds and checks are written; a test fails for a numeric
/// `--set` key of a section without a bound.
pub(crate) trait Section: Sized + 'static {
    /// Every numeric setting with its largest value.
    const BOUNDS: &'static [Bound<Self>];
    /// Its checks beyond the bounds; `stack` for those that compare it with another section.
    fn check(&self, stack: &StackSettings) -> Vec<Issue>;
}

/// The largest value of one numeric setting of a section (`stack.<section>.<key>`), with its
/// unit and what it is: the error's fix and a row of the bounds table.
pub(crate) struct Bound<S> {
    pub key: &'static str,
    pub max: f64,
    pub unit: &'static str,
    pub what: &'static str,
    pub get: fn(&S) -> f64,
}

/// The largest value of one numeric field of an experiment (its file key and `--set` key:
/// `stack.php.max_children`, `load.hold_s`), with its unit and what it is: the error's fix and
/// a row of the bounds table of docs/reference/experiment-yaml.md.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limit {
    pub key: String,
    pub max: f64,
    pub unit: &'static str,
    pub what: &'static str,
}

/// The limits of section `name`'s numbers, with their values when `s` is there.
pub(super) fn bounded<S: Section>(
    name: &str,
    s: Option<&S>,
) -> impl Iterator<Item = (Limit, Option<f64>)> {
    S::BOUNDS.iter().map(move |b| {
        let limit = Limit {
            key: format!("stack.{name}.{}", b.key),
            max: b.max,
            unit: b.unit,
            what: b.what,
        };
        (limit, s.map(b.get))
    })
}

/// What a section's check found: an error (or a warning) naming the field, with its fix.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Issue {
    pub field: String,
    pub message: String,
    pub help: Option<String>,
    pub warning: bool,
    /// A warning that is an error in an experiment whose claims say no request fails (a
    /// `failed_rate` or `failed` claim with `max: 0` or `equals: 0`): what it warns of would
    /// make such a claim fail by construction (a PgBouncer pool past `max_connections`).
    pub fatal_if_no_errors_claimed: bool,
}

impl Issue {
    pub(super) fn error(field: impl Into<String>, message: impl Into<String>) -> Issue {
        Issue {
            field: field.into(),
            message: message.into(),
            help: None,
            warning: false,
            fatal_if_no_errors_claimed: false,
        }
    }

    pub(super) fn warning(field: impl Into<String>, message: impl Into<String>) -> Issue {
        Issue {
            warning: true,
            ..Issue::error(field, message)
        }
    }

    pub(super) fn help(mut self, help: impl Into<String>) -> Issue {
        self.help = Some(help.into());
        self
    }

    /// An error, not a warning, when the experiment claims that no request fails.
    pub(super) fn errors_claimed_fatal(mut self) -> Issue {
        self.fatal_if_no_errors_claimed = true;
        self
    }
}

/// An error for each of `fields` (of section `name`) that is 0.
pub(super) fn positive(name: &str, fields: &[(&str, u32)]) -> Vec<Issue> {
    fields
        .iter()
        .filter(|(_, v)| *v == 0)
        .map(|(f, _)| Issue::error(format!("stack.{name}.{f}"), "must be > 0"))
        .collect()
}

/// Largest `stack.<lab>.burn_us`: a second of CPU per request, past any regression worth
/// injecting (4294967295 was 71 minutes).
pub(super) const MAX_BURN_US: f64 = 1_000_000.0;

impl StackSettings {
    /// The work injected on purpose in the lab's section, when not 0: CPU burnt
    /// (`stack.<lab>.burn_us`) and waiting without CPU (`stack.<lab>.wait_us`). A run made with
    /// either is not a clean run, and its reports say so.
    pub fn injected(&self) -> Vec<String> {
        let burns = Lab::ALL
            .into_iter()
            .filter_map(|lab| descriptor(lab).burn_us(self).map(|us| (lab, us)))
            .filter(|(_, us)| *us > 0)
            .map(|(lab, us)| {
                format!("stack.{lab}.burn_us={us} ({us} µs of CPU burnt per request in the app)")
            });
        let waits = Lab::ALL
            .into_iter()
            .filter_map(|lab| descriptor(lab).wait_us(self).map(|us| (lab, us)))
            .filter(|(_, us)| *us > 0)
            .map(|(lab, us)| {
                format!(
                    "stack.{lab}.wait_us={us} ({us} µs of waiting per answer in the app, no CPU)"
                )
            });
        burns.chain(waits).collect()
    }

    /// The app's concurrent request slots, its pool N (`LabDescriptor::slots`: php
    /// `max_children`, node `pool_max` x `processes`, demo `workers`) of the first lab with a
    /// section. One definition for the fit's `pool` and the report's pool ceiling.
    pub(crate) fn slots(&self) -> Option<u32> {
        Lab::ALL
            .into_iter()
            .find_map(|lab| descriptor(lab).slots(self).ok())
            .map(|n| n as u32)
    }

    /// Which labs' sections are present, in `Lab::ALL` order.
    pub(crate) fn sections(&self) -> impl Iterator<Item = (Lab, bool)> + '_ {
        Lab::ALL.into_iter().map(|lab| (lab, self.has(lab)))
    }
}

pub(super) fn yes() -> bool {
    true
}

pub(super) fn is_true(v: &bool) -> bool {
    *v
}

pub(super) fn is_false(v: &bool) -> bool {
    !*v
}

pub(super) fn is_zero(v: &u32) -> bool {
    *v == 0
}
