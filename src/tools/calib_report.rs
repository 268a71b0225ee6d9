//! `calib` analysis and rendering (pure): per-repeat durations of the fixed CPU loop, their mean
//! and spread ((max - min) / mean, ±% around the median; article: "stable within ±7 %"), and
//! which repeats the hypervisor (steal moved in `/proc/stat`) or the scheduler (wall time well
//! above the thread's own CPU time) slowed down.
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::render::{Block, Table, blocks_text, busy, caveat_lines, caveats_markdown, opt};
use super::stats::{self, Summary};
pub(crate) use crate::rundir::tool::CalibSettings;

/// The article's figure: "vCPU stable within ±7 %".
pub(crate) const ARTICLE_PLUS_MINUS_PCT: f64 = 7.0;
/// A repeat whose wall time exceeds its thread CPU time by more than this share was preempted.
pub(crate) const PREEMPTED_SHARE: f64 = 0.02;

/// One timed repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Repeat {
    pub index: u32,
    pub started: DateTime<Utc>,
    pub wall_ms: f64,
    /// CPU time of the measuring thread (CLOCK_THREAD_CPUTIME_ID), ms.
    pub thread_cpu_ms: f64,
    /// Steal time of the measured CPU over the repeat (from `/proc/stat`), ms.
    pub steal_ms_cpu: f64,
    /// Steal time of all CPUs together over the repeat, ms.
    pub steal_ms_all: f64,
    /// Involuntary context switches of the measuring thread.
    pub involuntary_switches: u64,
}

impl Repeat {
    pub(crate) fn steal_moved(&self) -> bool {
        self.steal_ms_cpu > 0.0
    }

    pub(crate) fn preempted(&self) -> bool {
        self.thread_cpu_ms > 0.0 && self.wall_ms > self.thread_cpu_ms * (1.0 + PREEMPTED_SHARE)
    }
}

/// The calibration: how many iterations make one repeat of about `work_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Calibration {
    pub iterations: u64,
    /// The sizing run: iterations and wall ms.
    pub probe_iterations: u64,
    pub probe_ms: f64,
}

/// The report (`report.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CalibReport {
    pub settings: CalibSettings,
    pub calibration: Calibration,
    pub repeats: Vec<Repeat>,
    /// Wall durations of the repeats, ms.
    pub wall_ms: Option<Summary>,
    /// Nanoseconds per loop iteration at the median repeat.
    pub ns_per_iteration: Option<f64>,
    /// Repeats (1-based) during which the measured CPU's steal counter moved.
    pub steal_repeats: Vec<u32>,
    /// Repeats whose wall time exceeded the thread's CPU time by > 2 % (another task ran there).
    pub preempted_repeats: Vec<u32>,
    /// Spread of the repeats that neither steal nor preemption touched.
    pub clean_wall_ms: Option<Summary>,
    pub article_plus_minus_pct: f64,
    pub within_article: Option<bool>,
    pub cpu_busy_pct: BTreeMap<u32, f64>,
    pub caveats: Vec<String>,
    /// The host speed probe's readings before and after (`host speed before ...: ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_speed: Vec<String>,
}

/// Steal ticks per CPU line of `/proc/stat` (`cpu` = all CPUs, `cpu0`, ...): the 8th value.
pub(crate) fn parse_steal(proc_stat: &str) -> BTreeMap<String, u64> {
    proc_stat
        .lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.to_string();
            let steal = f.nth(7)?.parse().ok()?;
            Some((name, steal))
        })
        .collect()
}

/// Iterations for one repeat of `work_ms`, from a probe of `probe_iters` taking `probe_ms`.
pub(crate) fn iterations_for(work_ms: f64, probe_iters: u64, probe_ms: f64) -> u64 {
    if probe_ms <= 0.0 {
        return probe_iters.max(1);
    }
    ((probe_iters as f64) * work_ms / probe_ms).round().max(1.0) as u64
}

pub(crate) fn analyze(
    settings: CalibSettings,
    calibration: Calibration,
    repeats: Vec<Repeat>,
    cpu_busy_pct: BTreeMap<u32, f64>,
    caveats: Vec<String>,
) -> CalibReport {
    let walls: Vec<f64> = repeats.iter().map(|r| r.wall_ms).collect();
    let wall = stats::summarize(&walls);
    let clean: Vec<f64> = repeats
        .iter()
        .filter(|r| !r.steal_moved() && !r.preempted())
        .map(|r| r.wall_ms)
        .collect();
    let ns_per_iteration = wall
        .as_ref()
        .map(|w| w.median * 1e6 / calibration.iterations.max(1) as f64);
    CalibReport {
        within_article: wall
            .as_ref()
            .map(|w| w.plus_minus_pct_of_median <= ARTICLE_PLUS_MINUS_PCT),
        steal_repeats: repeats
            .iter()
            .filter(|r| r.steal_moved())
            .map(|r| r.index)
            .collect(),
        preempted_repeats: repeats
            .iter()
            .filter(|r| r.preempted())
            .map(|r| r.index)
            .collect(),
        clean_wall_ms: stats::summarize(&clean),
        settings,
        calibration,
        repeats,
        wall_ms: wall,
        ns_per_iteration,
        article_plus_minus_pct: ARTICLE_PLUS_MINUS_PCT,
        cpu_busy_pct,
        caveats,
        host_speed: Vec::new(),
    }
}

fn flags(r: &Repeat) -> String {
    let mut f = Vec::new();
    if r.steal_moved() {
        f.push(format!("steal {:.0} ms", r.steal_ms_cpu));
    }
    if r.preempted() {
        f.push(format!("preempted ({} switches)", r.involuntary_switches));
    }
    f.join(", ")
}

fn spread_line(w: &Summary) -> String {
    format!(
        "mean {:.1} ms, median {:.1} ms, min {:.1}, max {:.1}, stdev {} ms; (max-min)/mean {:.1} %, ±{:.1} % around the median",
        w.mean,
        w.median,
        w.min,
        w.max,
        opt(w.stdev, 1, ""),
        w.range_pct_of_mean,
        w.plus_minus_pct_of_median
    )
}

fn verdict(r: &CalibReport) -> String {
    match (&r.wall_ms, r.within_article) {
        (Some(w), Some(true)) => format!(
            "stable within ±{:.1} % (article: ±{} %)",
            w.plus_minus_pct_of_median, r.article_plus_minus_pct
        ),
        (Some(w), _) => format!(
            "NOT within the article's ±{} %: ±{:.1} %",
            r.article_plus_minus_pct, w.plus_minus_pct_of_median
        ),
        (None, _) => "no repeat ran".into(),
    }
}

fn list(v: &[u32]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    }
}

/// Every repeat with its flags.
fn repeat_table(r: &CalibReport) -> Table {
    let mut t = Table::new([
        "#",
        "wall ms",
        "thread CPU ms",
        "steal ms",
        "invol. csw",
        "flags",
    ]);
    t.left = vec![5];
    for x in &r.repeats {
        t.push(vec![
            x.index.to_string(),
            format!("{:.2}", x.wall_ms),
            format!("{:.2}", x.thread_cpu_ms),
            format!("{:.0}", x.steal_ms_cpu),
            x.involuntary_switches.to_string(),
            flags(x),
        ]);
    }
    t
}

/// The lines under the table (same words in text and Markdown).
fn summary_lines(r: &CalibReport) -> Vec<String> {
    let mut v = vec![format!(
        "calib: {} repeats of {} iterations (~{} ms) of a fixed integer loop on cpu {}",
        r.repeats.len(),
        r.calibration.iterations,
        r.settings.work_ms,
        r.settings.cpu
    )];
    if let Some(w) = &r.wall_ms {
        v.push(format!("all repeats: {}", spread_line(w)));
    }
    if let Some(w) = r
        .clean_wall_ms
        .as_ref()
        .filter(|w| w.count != r.repeats.len())
    {
        v.push(format!(
            "clean repeats ({} of them): {}",
            w.count,
            spread_line(w)
        ));
    }
    if let Some(ns) = r.ns_per_iteration {
        v.push(format!("{ns:.3} ns per iteration at the median"));
    }
    v.push(format!(
        "steal moved in repeats: {}; preempted repeats: {}",
        list(&r.steal_repeats),
        list(&r.preempted_repeats)
    ));
    if let Some(b) = busy(&r.cpu_busy_pct) {
        v.push(format!("host CPU busy during the repeats: {b}"));
    }
    v.push(format!("verdict: {}", verdict(r)));
    v
}

/// Plain-text report (also the stdout table).
pub(crate) fn render_text(r: &CalibReport) -> String {
    let lines = summary_lines(r);
    let mut b = Block::new(&lines[0]);
    b.table = Some(repeat_table(r));
    b.notes = lines[1..].to_vec();
    b.notes.extend(caveat_lines(&r.host_speed, &r.caveats));
    blocks_text(&[b])
}

/// Markdown report.
pub(crate) fn render_markdown(r: &CalibReport) -> String {
    let lines = summary_lines(r);
    let mut s = format!("# calib\n\n{}\n\n", lines[0]);
    s.push_str(&repeat_table(r).to_markdown());
    for l in &lines[1..] {
        s.push_str(&format!("\n- {l}"));
    }
    s.push('\n');
    s.push_str(&caveats_markdown(&r.host_speed, &r.caveats));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn rep(index: u32, wall: f64, cpu: f64, steal: f64) -> Repeat {
        Repeat {
            index,
            started: Utc.with_ymd_and_hms(2026, 11, 30, 5, 0, index).unwrap(),
            wall_ms: wall,
            thread_cpu_ms: cpu,
            steal_ms_cpu: steal,
            steal_ms_all: steal,
            involuntary_switches: if wall > cpu * 1.02 { 3 } else { 0 },
        }
    }

    fn fixture() -> CalibReport {
        analyze(
            CalibSettings {
                cpu: 1,
                repeats: 5,
                work_ms: 200.0,
            },
            Calibration {
                iterations: 100_000_000,
                probe_iterations: 25_000_000,
                probe_ms: 50.0,
            },
            vec![
                rep(1, 200.0, 199.9, 0.0),
                rep(2, 190.0, 189.9, 0.0),
                rep(3, 214.0, 200.0, 0.0),
                rep(4, 200.0, 199.5, 10.0),
                rep(5, 201.0, 200.9, 0.0),
            ],
            BTreeMap::new(),
            vec![],
        )
    }

    #[test]
    fn spread_and_flags_from_a_fixture() {
        let r = fixture();
        let w = r.wall_ms.as_ref().unwrap();
        assert_eq!(w.count, 5);
        assert_eq!(w.mean, 201.0);
        assert!((w.plus_minus_pct_of_median - 7.0).abs() < 1e-9);
        assert_eq!(r.within_article, Some(true));
        assert_eq!(r.steal_repeats, vec![4]);
        assert_eq!(r.preempted_repeats, vec![3]);
        let clean = r.clean_wall_ms.as_ref().unwrap();
        assert_eq!(clean.count, 3);
        assert_eq!(clean.max, 201.0);
        // median 200 ms / 1e8 iterations = 2 ns
        assert!((r.ns_per_iteration.unwrap() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn renderers_list_every_repeat_and_the_verdict() {
        let r = fixture();
        let t = render_text(&r);
        let has = |line: &str| t.lines().any(|l| l == line);
        assert!(
            has("#  wall ms  thread CPU ms  steal ms  invol. csw  flags"),
            "{t}"
        );
        assert!(
            has("4   200.00         199.50        10           0  steal 10 ms"),
            "{t}"
        );
        assert!(
            has("5   201.00         200.90         0           0"),
            "{t}"
        );
        assert!(t.contains("preempted (3 switches)"), "{t}");
        assert!(has("verdict: stable within ±7.0 % (article: ±7 %)"), "{t}");
        assert!(
            t.contains("clean repeats (3 of them): mean 197.0 ms"),
            "{t}"
        );
        let m = render_markdown(&r);
        assert!(m.contains("| 5 | 201.00 | 200.90 | 0 | 0 |  |"), "{m}");
        assert!(
            m.contains("- steal moved in repeats: 4; preempted repeats: 3"),
            "{m}"
        );
    }

    #[test]
    fn wide_spread_fails_the_article_bound() {
        let mut r = fixture();
        r.repeats.push(rep(6, 260.0, 259.0, 0.0));
        let r = analyze(
            r.settings.clone(),
            r.calibration.clone(),
            r.repeats.clone(),
            BTreeMap::new(),
            vec![],
        );
        assert_eq!(r.within_article, Some(false));
        assert!(render_text(&r).contains("NOT within the article's ±7 %"));
    }

    #[test]
    fn parses_steal_and_sizes_the_loop() {
        let stat = "cpu  29909 13712 27526 19852 450 0 219 77 0 0\ncpu0 14500 6461 13581 11177 91 0 29 36 0 0\ncpu1 15409 7251 13945 8674 358 0 189 41 0 0\nintr 1 2\n";
        let s = parse_steal(stat);
        assert_eq!(s["cpu"], 77);
        assert_eq!(s["cpu0"], 36);
        assert_eq!(s["cpu1"], 41);
        assert_eq!(s.len(), 3);
        assert_eq!(iterations_for(200.0, 1_000_000, 50.0), 4_000_000);
        assert_eq!(iterations_for(200.0, 1_000, 0.0), 1_000);
    }
}
