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
pub const DEFAULT_SUITE_BUILD_S: f64 = 558.0;
/// Time around one round's load when no run of it is recorded: stack start (3-4 s), warm-up
/// requests, the wait for the next minute boundary (30 s on average, up to 60), the
/// generators' start and collection, teardown, report.
pub const DEFAULT_AROUND_S: f64 = 60.0;
/// Extra time of `--fit` (three working-point readings and a peak probe on the same stack)
/// or `--refine` (its probes) when no such run is recorded.
pub const DEFAULT_EXTRA_S: f64 = 180.0;

/// Where a part's duration comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The lock's holder and queue now, with the ends their plans expect.
    Queue,
    /// Recorded on this host (what, when).
    Recorded(String),
    /// Not recorded here: a stated default.
    Default(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Queue => f.write_str("the holder's and queue's plans: perflab status"),
            Source::Recorded(s) => write!(f, "recorded here: {s}"),
            Source::Default(s) => write!(f, "default, nothing recorded here: {s}"),
        }
    }
}

/// One part of the run and about how long it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub what: String,
    pub detail: String,
    pub seconds: f64,
    pub source: Source,
}

/// The parts of a run, in the order they happen.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    pub parts: Vec<Part>,
    /// The seconds the rounds hold the host lock (what the queue is told).
    pub rounds_s: f64,
}

/// How the rounds run (the flags that change their length).
#[derive(Debug, Clone, Copy, Default)]
pub struct Profile {
    pub rounds: u32,
    pub quick: bool,
    pub fit: bool,
    pub refine: bool,
}

impl Outline {
    /// The whole run, in seconds.
    pub fn total_s(&self) -> f64 {
        self.parts.iter().map(|p| p.seconds).sum()
    }

    /// The text said up front (one line per part).
    pub fn render(&self, target: &str) -> String {
        let mut s = format!(
            "perflab run {target}: about {} on this host\n",
            duration(self.total_s())
        );
        for p in &self.parts {
            s.push_str(&format!(
                "  {:<16} {:<44} {:>10}  ({})\n",
                p.what,
                p.detail,
                format!("{}", duration(p.seconds)),
                p.source
            ));
        }
        s
    }
}

/// `1 h 02 min`, `9 min 18 s`, `40 s`.
pub fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The image build part: `missing` of `total` images of `suite` to build (none: no part).
pub fn images_part(
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

/// The share of a suite's images a recorded build made (`2 of 6 images` -> 1/3).
fn recorded_share(note: &str) -> Option<f64> {
    let mut w = note.split_whitespace();
    let built: f64 = w.next()?.parse().ok()?;
    let total: f64 = w.nth(1)?.parse().ok()?;
    (built > 0.0 && total >= built).then(|| built / total)
}

/// The wait for the host lock: its live holder's expected end and the queue before us.
pub fn lock_part(q: &QueueStatus, now: DateTime<Utc>) -> Part {
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
            if h.user.is_empty() { "pid" } else { &h.user },
            h.experiment,
            match q.waiters.len() {
                0 => String::new(),
                n => format!(", {n} waiting before you"),
            }
        ),
    };
    let source = match (&q.holder, last_end) {
        (Some(_), None) => Source::Default(
            "its end is unknown (a tool or an older perflab holds it): counted as 0".into(),
        ),
        _ => Source::Queue,
    };
    Part {
        what: "host lock".into(),
        detail,
        seconds,
        source,
    }
}

/// One experiment's rounds: the plan's load time and the time around it.
pub fn rounds_part(out_root: &Path, r: &Resolved, p: Profile) -> Part {
    let load_s = f64::from(r.plan.total_s);
    let (around, source) = match recorded_around(out_root, &r.experiment.id, p) {
        Some((s, run)) => (s, Source::Recorded(format!("around the load in {run}"))),
        None => {
            let extra = if p.fit || p.refine {
                DEFAULT_EXTRA_S
            } else {
                0.0
            };
            (
                DEFAULT_AROUND_S + extra,
                Source::Default(format!(
                    "{DEFAULT_AROUND_S:.0} s around each load (stack start, warm-up, minute alignment, teardown){}",
                    if extra > 0.0 {
                        format!(" + {extra:.0} s of --fit/--refine loads")
                    } else {
                        String::new()
                    }
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
/// `out_root` (its phases but the lock's, less its plan's load), and that run's name.
fn recorded_around(out_root: &Path, id: &str, p: Profile) -> Option<(f64, String)> {
    let runs = crate::rundir::list_runs(out_root, Some(id));
    runs.iter().rev().take(50).find_map(|run| {
        if run.status().ok()?.state != crate::rundir::RunState::Complete {
            return None;
        }
        let m = run.read_manifest().ok()?;
        let same = m.plan.quick.is_some() == p.quick
            && m.measurements.fit.is_some() == p.fit
            && m.measurements.refine.is_some() == p.refine;
        let wall: f64 = m
            .measurements
            .phases
            .iter()
            .filter(|ph| ph.phase != crate::rundir::phase::Phase::Lock)
            .map(|ph| ph.seconds)
            .sum();
        (same && wall > 0.0).then(|| {
            (
                (wall - f64::from(m.plan.total_s)).max(0.0),
                format!("{}/{}", id, run.name()),
            )
        })
    })
}

/// The outline of a run of `resolved` with `profile`, the suite's `missing` images of
/// `total` (`None`: the engine could not say), and the lock's queue now.
pub fn outline(
    resolved: &[Resolved],
    profile: Profile,
    out_root: &Path,
    images: Option<(&str, usize, usize)>,
    queue: &QueueStatus,
    now: DateTime<Utc>,
) -> Outline {
    let recorded = timings::read(&timings::path(&crate::images::recipe::repo_root()));
    let mut parts: Vec<Part> = images
        .and_then(|(suite, missing, total)| images_part(suite, missing, total, &recorded))
        .into_iter()
        .collect();
    parts.push(lock_part(queue, now));
    let rounds: Vec<Part> = resolved
        .iter()
        .map(|r| rounds_part(out_root, r, profile))
        .collect();
    let rounds_s = rounds.iter().map(|p| p.seconds).sum();
    parts.extend(rounds);
    Outline { parts, rounds_s }
}

#[cfg(test)]
mod tests {
    use super::*;

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
