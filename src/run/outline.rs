//! What `perflab run` says before it starts: what it will do, and about how long each part takes
//! on this host. The image build of the suite when images are missing (this host's recorded
//! build time, else the cold build measured on a 2-CPU host); the wait for the host lock (its
//! holder's and queue's expected ends); each experiment's rounds: the plan's load time (exact,
//! as `perflab show` prints it) plus the time around it (stack start, warm-up, minute
//! alignment, a fit's calibration or refine's probes, teardown) from the newest complete run of
//! the same experiment and profile under `--out`, else a stated default. Each part says where
//! its number comes from. The rounds' total is what the run tells the lock's queue.
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::host::timings::{self, Timing};
use crate::lock::queue::QueueStatus;
use crate::plan::Resolved;

/// A cold build of one suite's six images on the 2-CPU dev host (558 s trixie, 559 forky,
/// 436 bookworm, measured while other builds ran).
pub(crate) const DEFAULT_SUITE_BUILD_S: f64 = 558.0;
/// Time around one round's load when no run of it is recorded: stack start (3-4 s), warm-up
/// requests, the generators' start and collection, teardown (quick --no-align rounds of 2a
/// took 6-15 s here; the PHP lab's warm-up is longer).
pub(crate) const DEFAULT_AROUND_S: f64 = 30.0;
/// The wait for the next minute boundary of an aligned run: 30 s on average (0 to 60).
pub(crate) const ALIGN_WAIT_S: f64 = 30.0;
/// Extra time of `--fit` (a screening calibration, three working-point readings, the
/// recoveries between them, on the same stack) or `--refine` (its probes) when no such run is
/// recorded: the longest of the 20 fitted runs of the remedies round of 2026-12-07 took 94 s
/// (18-94 s, median 71; docs/remedies.md, "A second full round").
pub(crate) const DEFAULT_EXTRA_S: f64 = 95.0;

/// Where a part's duration comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// The lock's holder and queue now, with the ends their plans expect.
    Queue,
    /// Recorded on this host (what, when).
    Recorded(String),
    /// Not recorded here: a stated default.
    Default(String),
    /// Not known: counted as nothing (why).
    Unknown(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Queue => f.write_str("the holder's and queue's plans: perflab status"),
            Source::Recorded(s) => write!(f, "recorded here: {s}"),
            Source::Default(s) => write!(f, "default, nothing recorded here yet: {s}"),
            Source::Unknown(s) => write!(f, "unknown, counted as 0: {s}"),
        }
    }
}

/// One part of the run and about how long it takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub what: String,
    pub detail: String,
    pub seconds: f64,
    pub source: Source,
}

/// The parts of a run, in the order they happen.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outline {
    pub parts: Vec<Part>,
    /// The seconds the rounds hold the host lock (what the queue is told).
    pub rounds_s: f64,
    /// How this host differs from the article's and what that means for the result.
    pub notes: Vec<String>,
}

/// How the rounds run (the flags that change their length).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Profile {
    pub rounds: u32,
    pub quick: bool,
    pub fit: bool,
    pub refine: bool,
    /// The first step waits for a minute boundary.
    pub align: bool,
}

impl Outline {
    /// The whole run, in seconds.
    pub(crate) fn total_s(&self) -> f64 {
        self.parts.iter().map(|p| p.seconds).sum()
    }

    /// The text said up front (one line per part, the source of its number below it).
    pub(crate) fn render(&self, target: &str) -> String {
        let mut s = format!(
            "perflab run {target}: about {} on this host\n",
            duration(self.total_s())
        );
        let what = self.parts.iter().map(|p| p.what.len()).max().unwrap_or(0);
        for p in &self.parts {
            s.push_str(&format!(
                "  {:<what$}  {:>10}  {}\n  {:<what$}  {:>10}  ({})\n",
                p.what,
                duration(p.seconds),
                p.detail,
                "",
                "",
                p.source
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("  note: {n}\n"));
        }
        s
    }
}

/// `1 h 02 min`, `9 min 18 s`, `40 s`.
pub(crate) fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The image build part: `missing` of `total` images of `suite` to build (none: no part).
pub(crate) fn images_part(
    suite: &str,
    missing: usize,
    total: usize,
    recorded: &std::collections::BTreeMap<String, Timing>,
) -> Option<Part> {
    if missing == 0 {
        return None;
    }
    let share = missing as f64 / total.max(1) as f64;
    let (seconds, source) = match recorded.get(&format!("images:{suite}")) {
        Some(t) => (
            // a partial build recorded says little about a full one: scale it to the share
            t.seconds * share / recorded_share(&t.note).unwrap_or(1.0),
            Source::Recorded(format!(
                "{} in {} on {}",
                if t.note.is_empty() {
                    "a build"
                } else {
                    &t.note
                },
                duration(t.seconds),
                t.at.format("%Y-%m-%d")
            )),
        ),
        None => (
            DEFAULT_SUITE_BUILD_S * share,
            Source::Default(format!(
                "a cold build of one suite took {DEFAULT_SUITE_BUILD_S:.0} s on a 2-CPU host"
            )),
        ),
    };
    Some(Part {
        what: format!("images {suite}"),
        detail: format!("{missing} of {total} to build (once per suite)"),
        seconds,
        source,
    })
}

/// [`images_part`] for `missing` of the suite's images, with this checkout's recorded timings.
pub(crate) fn images_estimate(suite: &str, missing: usize) -> Option<Part> {
    let recorded = timings::read(&timings::path(&crate::images::recipe::repo_root()));
    images_part(suite, missing, crate::lab::Role::images().len(), &recorded)
}

/// The share of a suite's images a recorded build made (`2 of 6 images` -> 1/3).
fn recorded_share(note: &str) -> Option<f64> {
    let mut w = note.split_whitespace();
    let built: f64 = w.next()?.parse().ok()?;
    let total: f64 = w.nth(1)?.parse().ok()?;
    (built > 0.0 && total >= built).then(|| built / total)
}

/// The wait for the host lock: its live holder's expected end and the queue before us.
pub(crate) fn lock_part(q: &QueueStatus, now: DateTime<Utc>) -> Part {
    let last_end = q
        .waiters
        .last()
        .map(|w| w.expected_end)
        .unwrap_or_else(|| q.holder.as_ref().and_then(|h| h.expected_end));
    let seconds = last_end
        .map(|e| (e - now).num_seconds().max(0) as f64)
        .unwrap_or(0.0);
    let detail = match &q.holder {
        None if q.waiters.is_empty() => "free".to_string(),
        None => format!("free, {} waiting before you", q.waiters.len()),
        Some(h) => format!(
            "held by {} ({}){}",
            if h.user.is_empty() {
                format!("pid {}", h.pid)
            } else {
                h.user.clone()
            },
            h.experiment,
            match q.waiters.len() {
                0 => String::new(),
                n => format!(", {n} waiting before you"),
            }
        ),
    };
    let source = match (&q.holder, last_end) {
        (Some(_), None) => {
            Source::Unknown("a tool or an older perflab holds the lock, without a plan".into())
        }
        _ => Source::Queue,
    };
    Part {
        what: "host lock".into(),
        detail,
        seconds,
        source,
    }
}

/// One experiment's rounds: the plan's load time and the time around it (the alignment's
/// wait counted apart: its average, whatever a recorded run waited).
pub(crate) fn rounds_part(out_root: &Path, r: &Resolved, p: Profile) -> Part {
    let load_s = f64::from(r.plan.total_s);
    let align = if p.align { ALIGN_WAIT_S } else { 0.0 };
    let aligned = if p.align {
        format!(" + {ALIGN_WAIT_S:.0} s on average for the minute boundary")
    } else {
        String::new()
    };
    let (around, source) = match recorded_around(out_root, &r.experiment.id, p) {
        Some((s, run)) => (
            s + align,
            Source::Recorded(format!("around the load in {run}{aligned}")),
        ),
        None => {
            let extra = if p.fit || p.refine {
                DEFAULT_EXTRA_S
            } else {
                0.0
            };
            let extra_says = if extra > 0.0 {
                format!(" + {extra:.0} s of --fit/--refine loads")
            } else {
                String::new()
            };
            (
                DEFAULT_AROUND_S + extra + align,
                Source::Default(format!(
                    "{DEFAULT_AROUND_S:.0} s around each load (stack start, warm-up, teardown){extra_says}{aligned}"
                )),
            )
        }
    };
    let rounds = p.rounds.max(1);
    Part {
        what: format!("{} x{rounds}", r.experiment.id),
        detail: format!(
            "{} of load (perflab show) + about {} around it",
            duration(load_s),
            duration(around)
        ),
        seconds: f64::from(rounds) * (load_s + around),
        source,
    }
}

/// The seconds around the load in the newest complete run of `id` with this profile under
/// `out_root` (its phases but the lock, the measured load and the wait for the minute
/// boundary; a fit's or refine's loads count as around), and that run's name.
pub(crate) fn recorded_around(out_root: &Path, id: &str, p: Profile) -> Option<(f64, String)> {
    use crate::rundir::phase::Phase;
    let runs = crate::rundir::list_runs(out_root, Some(id));
    runs.iter().rev().take(50).find_map(|run| {
        if run.status().ok()?.state != crate::rundir::RunState::Complete {
            return None;
        }
        let m = run.read_manifest().ok()?;
        let same = m.plan.quick.is_some() == p.quick
            && m.measurements.fit.is_some() == p.fit
            && m.measurements.refine.is_some() == p.refine;
        let measured = |ph: &crate::rundir::phase::PhaseRecord| {
            ph.phase == Phase::Measure && ph.load.as_deref().is_none_or(|l| l == "measured")
        };
        let phases = &m.measurements.phases;
        let around: f64 = phases
            .iter()
            .filter(|ph| ph.phase != Phase::Lock && !measured(ph))
            .map(|ph| ph.seconds)
            .sum();
        let waited = m
            .measurements
            .alignment
            .as_ref()
            .map_or(0.0, |a| a.wait_ms.max(0) as f64 / 1000.0);
        (same && !phases.is_empty())
            .then(|| ((around - waited).max(0.0), format!("{}/{}", id, run.name())))
    })
}

/// What the published numbers mean on this host: the CPU layout's differences from the
/// article's, and what `--fit` would do about them (when the run is not fitted and an
/// experiment can be).
pub(crate) fn host_notes(caveats: &[String], resolved: &[Resolved], fit: bool) -> Vec<String> {
    let mut notes = caveats.to_vec();
    let fittable = resolved.iter().any(|r| r.experiment.fit.is_some());
    if !notes.is_empty() && !fit && fittable {
        notes.push(
            "the published steps were set for another host: the knee lands where this host \
             breaks, maybe at the first step or past the last; `--fit` scales the steps to this \
             host's measured ceiling first (docs/first-run.md)"
                .into(),
        );
    }
    notes
}

/// The outline of a run of `resolved` with `profile`, the number of the suite's images
/// missing (`None`: the engine could not say), the lock's queue now, and the notes on this
/// host ([`host_notes`]).
pub(crate) fn outline(
    resolved: &[Resolved],
    profile: Profile,
    out_root: &Path,
    images: Option<(&str, usize)>,
    queue: &QueueStatus,
    now: DateTime<Utc>,
    notes: Vec<String>,
) -> Outline {
    let mut parts: Vec<Part> = images
        .and_then(|(suite, missing)| images_estimate(suite, missing))
        .into_iter()
        .collect();
    parts.push(lock_part(queue, now));
    let rounds: Vec<Part> = resolved
        .iter()
        .map(|r| rounds_part(out_root, r, profile))
        .collect();
    let rounds_s = rounds.iter().map(|p| p.seconds).sum();
    parts.extend(rounds);
    Outline {
        parts,
        rounds_s,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_around_a_load_is_read_from_the_newest_run_of_the_profile() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare/2a-shared");
        let quick = Profile {
            rounds: 1,
            quick: true,
            ..Default::default()
        };
        // the newest: its phases but the lock's and the measured load's (--no-align: no wait)
        let (s, run) = recorded_around(&root, "2a", quick).unwrap();
        assert!((s - 7.536).abs() < 0.01, "{s}");
        assert_eq!(run, "2a/20261201T162205Z-r1");
        // no full-length run of 2a, and no fitted one, recorded there
        assert_eq!(
            recorded_around(
                &root,
                "2a",
                Profile {
                    quick: false,
                    ..quick
                }
            ),
            None
        );
        assert_eq!(
            recorded_around(&root, "2a", Profile { fit: true, ..quick }),
            None
        );
    }

    #[test]
    fn the_notes_name_fit_only_for_a_published_run_on_another_host() {
        let caveat = vec!["2 online CPUs".to_string()];
        assert_eq!(host_notes(&caveat, &[], false), caveat);
        assert!(host_notes(&[], &[], false).is_empty());
    }

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration(40.4), "40 s");
        assert_eq!(duration(558.0), "9 min 18 s");
        assert_eq!(duration(3725.0), "1 h 02 min");
    }

    #[test]
    fn an_image_build_is_recorded_or_a_stated_default_scaled_to_what_is_missing() {
        let none = Default::default();
        let p = images_part("trixie", 3, 6, &none).unwrap();
        assert_eq!(p.seconds, DEFAULT_SUITE_BUILD_S / 2.0);
        assert!(matches!(p.source, Source::Default(_)));
        assert!(images_part("trixie", 0, 6, &none).is_none());
        let rec = timings::parse("2026-12-01T10:00:00Z\timages:trixie\t100\t2 of 6 images\n");
        let p = images_part("trixie", 6, 6, &rec).unwrap();
        assert_eq!(p.seconds, 300.0);
        assert!(
            p.source
                .to_string()
                .starts_with("recorded here: 2 of 6 images")
        );
    }
}
