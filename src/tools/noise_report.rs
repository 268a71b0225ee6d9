//! `noise-check` analysis and rendering (pure): from the late wake-ups of the sleep loop and
//! the lateness of every wake-up to the report — count, max, percentiles, distribution by second
//! of the minute, and the density in seconds :00–:07 against the rest (article: 94 stalls in
//! 130 s, max 147 ms, 29 in :00–:07, 2.9x denser).
use std::collections::BTreeMap;
use std::fmt::Write;

use chrono::{DateTime, Timelike, Utc};
use serde::{Deserialize, Serialize};

use super::render::{Block, Table, blocks_text, busy, caveat_lines, caveats_markdown, opt};
use super::stats::{self, Summary, round};
pub(crate) use crate::rundir::tool::NoiseSettings;

/// Seconds of the minute that form the "head" window (:00–:07, 8 seconds).
pub(crate) const HEAD_SECONDS: u32 = 8;

/// One wake-up later than the threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WakeUp {
    /// When the loop woke up (UTC).
    pub at: DateTime<Utc>,
    /// Actual sleep minus the requested sleep, ms.
    pub lateness_ms: f64,
}

/// The article's figures, printed beside ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ArticleNoise {
    pub seconds: f64,
    pub threshold_ms: f64,
    pub stalls: u32,
    pub max_ms: f64,
    pub head_stalls: u32,
    pub head_density_ratio: f64,
}

pub(crate) fn article() -> ArticleNoise {
    ArticleNoise {
        seconds: 130.0,
        threshold_ms: 30.0,
        stalls: 94,
        max_ms: 147.0,
        head_stalls: 29,
        head_density_ratio: 2.9,
    }
}

/// Stalls in a window of seconds of the minute, and how long that window was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Window {
    pub seconds: String,
    pub stalls: u32,
    /// Seconds of the run that fell in this window.
    pub observed_s: f64,
    /// Stalls per observed second (None if never observed).
    pub per_s: Option<f64>,
}

/// The whole report (`report.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct NoiseReport {
    pub settings: NoiseSettings,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    pub observed_s: f64,
    /// Every wake-up of the loop.
    pub wakeups: u64,
    /// Lateness of every wake-up, ms.
    pub lateness_all_ms: Option<Summary>,
    /// Wake-ups later than the threshold.
    pub stalls: usize,
    pub stalls_per_minute: f64,
    /// Lateness of the stalls only, ms.
    pub stall_lateness_ms: Option<Summary>,
    /// Stalls by second of the minute (index 0 = :00).
    pub by_second: Vec<u32>,
    /// Seconds of the run observed in each second of the minute.
    pub observed_by_second: Vec<f64>,
    pub head: Window,
    pub rest: Window,
    /// Stalls per observed second in :00–:07 over the same in :08–:59.
    pub head_density_ratio: Option<f64>,
    /// The article's arithmetic: (head stalls / 8) / (rest stalls / 52), whatever the run's length.
    pub head_density_ratio_simple: Option<f64>,
    pub article: ArticleNoise,
    /// CPU busy % per host CPU over the check (the loop's own CPU included).
    pub cpu_busy_pct: BTreeMap<u32, f64>,
    pub caveats: Vec<String>,
    /// The host speed probe's readings before and after (`host speed before ...: ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_speed: Vec<String>,
}

/// Seconds of `[start, end)` that fall in each second of the minute.
pub(crate) fn observed_by_second(start: DateTime<Utc>, end: DateTime<Utc>) -> Vec<f64> {
    let mut out = vec![0.0; 60];
    let (s, e) = (start.timestamp_millis(), end.timestamp_millis());
    if e <= s {
        return out;
    }
    let mut sec = s.div_euclid(1000);
    while sec * 1000 < e {
        let lo = (sec * 1000).max(s);
        let hi = ((sec + 1) * 1000).min(e);
        out[sec.rem_euclid(60) as usize] += (hi - lo) as f64 / 1000.0;
        sec += 1;
    }
    out
}

fn window(name: &str, stalls: u32, observed_s: f64) -> Window {
    Window {
        seconds: name.into(),
        stalls,
        observed_s: round(observed_s, 3),
        per_s: (observed_s > 0.0).then(|| stalls as f64 / observed_s),
    }
}

/// Analyze one check. `stalls` are the wake-ups above the threshold, `lateness_all_us` the
/// lateness of every wake-up (µs).
pub(crate) fn analyze(
    settings: NoiseSettings,
    started: DateTime<Utc>,
    ended: DateTime<Utc>,
    stalls: &[WakeUp],
    lateness_all_us: &[u32],
    cpu_busy_pct: BTreeMap<u32, f64>,
    caveats: Vec<String>,
) -> NoiseReport {
    let observed_s = (ended - started).num_milliseconds().max(0) as f64 / 1000.0;
    let mut by_second = vec![0u32; 60];
    for w in stalls {
        by_second[w.at.second().min(59) as usize] += 1;
    }
    let observed = observed_by_second(started, ended);
    let h = HEAD_SECONDS as usize;
    let head = window(
        ":00-:07",
        by_second[..h].iter().sum(),
        observed[..h].iter().sum(),
    );
    let rest = window(
        ":08-:59",
        by_second[h..].iter().sum(),
        observed[h..].iter().sum(),
    );
    let ratio = match (head.per_s, rest.per_s) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let simple = (rest.stalls > 0).then(|| {
        (head.stalls as f64 / HEAD_SECONDS as f64)
            / (rest.stalls as f64 / (60 - HEAD_SECONDS) as f64)
    });
    let all: Vec<f64> = lateness_all_us.iter().map(|u| *u as f64 / 1000.0).collect();
    let late: Vec<f64> = stalls.iter().map(|w| w.lateness_ms).collect();
    NoiseReport {
        settings,
        started,
        ended,
        observed_s,
        wakeups: lateness_all_us.len() as u64,
        lateness_all_ms: stats::summarize(&all),
        stalls: stalls.len(),
        stalls_per_minute: if observed_s > 0.0 {
            stalls.len() as f64 * 60.0 / observed_s
        } else {
            0.0
        },
        stall_lateness_ms: stats::summarize(&late),
        by_second,
        observed_by_second: observed.iter().map(|x| round(*x, 3)).collect(),
        head,
        rest,
        head_density_ratio: ratio,
        head_density_ratio_simple: simple,
        article: article(),
        cpu_busy_pct,
        caveats,
        host_speed: Vec::new(),
    }
}

/// Parse a `stalls.jsonl` text (one [`WakeUp`] a line); errors name the line (the tests' reader
/// of recorded stalls).
#[cfg(test)]
pub(crate) fn parse_stalls(text: &str) -> Result<Vec<WakeUp>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Histogram of lateness in 1 ms buckets (`floor(ms)` -> count), for the raw TSV file.
pub(crate) fn lateness_histogram(lateness_all_us: &[u32]) -> BTreeMap<u32, u64> {
    let mut h = BTreeMap::new();
    for u in lateness_all_us {
        *h.entry(u / 1000).or_default() += 1;
    }
    h
}

fn header(r: &NoiseReport) -> String {
    format!(
        "noise-check: {} ms sleep loop pinned to cpu {}, {:.1} s from {} to {} UTC, threshold {} ms",
        r.settings.sleep_ms,
        r.settings.cpu,
        r.observed_s,
        r.started.format("%Y-%m-%d %H:%M:%S"),
        r.ended.format("%H:%M:%S"),
        r.settings.threshold_ms
    )
}

/// Lateness of all wake-ups and of the stalls.
fn lateness_table(r: &NoiseReport) -> Table {
    let mut t = Table::new(["lateness", "count", "p50 ms", "p99 ms", "max ms"]);
    let row = |name: String, n: usize, x: Option<&Summary>, d: usize| {
        vec![
            name,
            n.to_string(),
            opt(x.map(|x| x.p50), d, ""),
            opt(x.map(|x| x.p99), d, ""),
            opt(x.map(|x| x.max), 1, ""),
        ]
    };
    t.push(row(
        "all wake-ups".into(),
        r.wakeups as usize,
        r.lateness_all_ms.as_ref(),
        3,
    ));
    t.push(row(
        format!("stalls > {} ms", r.settings.threshold_ms),
        r.stalls,
        r.stall_lateness_ms.as_ref(),
        1,
    ));
    t
}

/// Stalls in :00-:07 and in the rest of the minute, per observed second.
fn window_table(r: &NoiseReport) -> Table {
    let mut t = Table::new(["seconds", "stalls", "observed s", "stalls/s"]);
    for w in [&r.head, &r.rest] {
        t.push(vec![
            w.seconds.clone(),
            w.stalls.to_string(),
            format!("{:.1}", w.observed_s),
            opt(w.per_s, 2, ""),
        ]);
    }
    t
}

/// Ours beside the article's.
fn comparison_table(r: &NoiseReport) -> Table {
    let a = &r.article;
    let mut t = Table::new(["", "ours", "article"]);
    for row in [
        [
            "observed seconds".into(),
            format!("{:.1}", r.observed_s),
            format!("{}", a.seconds),
        ],
        [
            format!("stalls > {} ms", r.settings.threshold_ms),
            r.stalls.to_string(),
            format!("{} (> {} ms)", a.stalls, a.threshold_ms),
        ],
        [
            "max lateness ms".into(),
            opt(r.stall_lateness_ms.as_ref().map(|s| s.max), 1, ""),
            format!("{}", a.max_ms),
        ],
        [
            "stalls in :00-:07".into(),
            r.head.stalls.to_string(),
            a.head_stalls.to_string(),
        ],
        [
            ":00-:07 density vs rest".into(),
            opt(r.head_density_ratio_simple, 2, "x"),
            format!("{}x", a.head_density_ratio),
        ],
    ] {
        t.push(row.to_vec());
    }
    t
}

fn density_line(r: &NoiseReport) -> String {
    format!(
        "density :00-:07 vs :08-:59: {} per observed second ({} with the article's 8 s / 52 s arithmetic)",
        opt(r.head_density_ratio, 2, "x"),
        opt(r.head_density_ratio_simple, 2, "x")
    )
}

/// Stalls by second of the minute: six rows of ten seconds.
fn by_second_grid(r: &NoiseReport) -> Table {
    let mut t = Table::headless(10);
    t.indent = "  ";
    t.widths = Some(vec![0; 10]);
    for row in 0..6 {
        t.push(
            (0..10)
                .map(|c| {
                    let sec = row * 10 + c;
                    format!(":{sec:02} {:>3}", r.by_second[sec])
                })
                .collect(),
        );
    }
    t
}

/// The plain-text report (also the stdout table).
pub(crate) fn render_text(r: &NoiseReport) -> String {
    let mut lateness = Block::new(&header(r));
    lateness.table = Some(lateness_table(r));
    lateness.notes = vec![format!("{:.1} stalls per minute", r.stalls_per_minute)];
    let mut window = Block::new("");
    window.lines = vec![String::new()];
    window.table = Some(window_table(r));
    window.notes = vec![density_line(r)];
    window
        .notes
        .extend(busy(&r.cpu_busy_pct).map(|b| format!("host CPU busy during the check: {b}")));
    let mut comparison = Block::new("");
    comparison.lines = vec![String::new()];
    comparison.table = Some(comparison_table(r));
    let mut grid = Block::new("");
    grid.lines = vec![
        String::new(),
        "stalls by second of the minute (UTC):".into(),
    ];
    grid.table = Some(by_second_grid(r));
    grid.notes = caveat_lines(&r.host_speed, &r.caveats);
    blocks_text(&[lateness, window, comparison, grid])
}

/// The Markdown report.
pub(crate) fn render_markdown(r: &NoiseReport) -> String {
    let mut s = format!("# noise-check\n\n{}\n\n", header(r));
    s.push_str(&lateness_table(r).to_markdown());
    s.push('\n');
    s.push_str(&window_table(r).to_markdown());
    let _ = writeln!(s, "\n{}.\n", density_line(r));
    s.push_str(&comparison_table(r).to_markdown());
    let mut by = Table::new(["second", "stalls"]);
    for (sec, n) in r.by_second.iter().enumerate().filter(|(_, n)| **n > 0) {
        by.push(vec![format!(":{sec:02}"), n.to_string()]);
    }
    s.push('\n');
    s.push_str(&by.to_markdown());
    s.push_str(&caveats_markdown(&r.host_speed, &r.caveats));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32, ms: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 10, 30, h, m, s).unwrap()
            + chrono::Duration::milliseconds(ms as i64)
    }

    fn settings() -> NoiseSettings {
        NoiseSettings {
            cpu: 2,
            seconds: 120.0,
            threshold_ms: 30.0,
            sleep_ms: 1.0,
        }
    }

    /// Fixture: 120 s from 13:09:00, 12 stalls in :00-:07 (6 per minute), 13 in the rest.
    fn fixture() -> (Vec<WakeUp>, Vec<u32>) {
        let mut stalls = Vec::new();
        for minute in [9, 10] {
            for s in [0, 1, 2, 3, 5, 7] {
                stalls.push(WakeUp {
                    at: at(13, minute, s, 250),
                    lateness_ms: 40.0 + s as f64,
                });
            }
        }
        for s in [8, 15, 20, 25, 30, 35, 40, 45, 50, 55, 58, 59] {
            stalls.push(WakeUp {
                at: at(13, 9, s, 0),
                lateness_ms: 31.0,
            });
        }
        stalls.push(WakeUp {
            at: at(13, 10, 30, 999),
            lateness_ms: 147.0,
        });
        let mut all: Vec<u32> = vec![60; 1000];
        all.extend(stalls.iter().map(|w| (w.lateness_ms * 1000.0) as u32));
        (stalls, all)
    }

    /// The fixture over its two whole minutes.
    fn fixture_report(stalls: &[WakeUp], all: &[u32]) -> NoiseReport {
        let (from, to) = (at(13, 9, 0, 0), at(13, 11, 0, 0));
        analyze(settings(), from, to, stalls, all, BTreeMap::new(), vec![])
    }

    #[test]
    fn counts_and_densities_from_a_fixture() {
        let (stalls, all) = fixture();
        let r = fixture_report(&stalls, &all);
        assert_eq!(r.stalls, 25);
        assert_eq!(r.wakeups, 1025);
        assert_eq!(r.observed_s, 120.0);
        assert_eq!(r.head.stalls, 12);
        assert_eq!(r.rest.stalls, 13);
        assert_eq!(r.head.observed_s, 16.0);
        assert_eq!(r.rest.observed_s, 104.0);
        assert_eq!(r.by_second[0], 2);
        assert_eq!(r.by_second[30], 2);
        assert_eq!(r.by_second.iter().sum::<u32>(), 25);
        // (12 / 16) / (13 / 104) = 0.75 / 0.125 = 6; whole minutes: simple arithmetic agrees
        assert!((r.head_density_ratio.unwrap() - 6.0).abs() < 1e-9);
        assert!((r.head_density_ratio_simple.unwrap() - 6.0).abs() < 1e-9);
        let st = r.stall_lateness_ms.as_ref().unwrap();
        assert_eq!(st.max, 147.0);
        assert_eq!(st.count, 25);
        assert_eq!(r.lateness_all_ms.as_ref().unwrap().p50, 0.06);
        assert!((r.stalls_per_minute - 12.5).abs() < 1e-9);
    }

    #[test]
    fn the_articles_numbers_give_its_ratio() {
        // 29 of 94 stalls in :00-:07 -> (29/8) / (65/52) = 2.9
        let mut stalls = Vec::new();
        for i in 0..29 {
            stalls.push(WakeUp {
                at: at(13, 10, i % 8, 0),
                lateness_ms: 35.0,
            });
        }
        for i in 0..65 {
            stalls.push(WakeUp {
                at: at(13, 10, 8 + i % 52, 0),
                lateness_ms: 35.0,
            });
        }
        let r = analyze(
            settings(),
            at(13, 9, 12, 0),
            at(13, 11, 22, 0),
            &stalls,
            &[],
            BTreeMap::new(),
            vec![],
        );
        assert_eq!(r.stalls, 94);
        assert!((r.head_density_ratio_simple.unwrap() - 2.9).abs() < 1e-9);
        // 130 s from :12: the head was observed 16 s, the rest 114 s
        assert_eq!(r.head.observed_s, 16.0);
        assert_eq!(r.rest.observed_s, 114.0);
        assert!(r.lateness_all_ms.is_none());
    }

    #[test]
    fn a_fixture_shaped_like_the_articles_check_gives_its_figures() {
        // 130 s from 13:09:12 with the article's logged stalls (13:09:18 94 ms, 13:09:19 147 ms,
        // 13:10:03 77 ms) and its counts: 94 stalls, 29 of them in :00-:07
        let stalls = parse_stalls(include_str!(
            "../../tests/fixtures/tools/noise-stalls.jsonl"
        ))
        .unwrap();
        let (from, to) = (at(13, 9, 12, 0), at(13, 11, 22, 0));
        let s = NoiseSettings {
            seconds: 130.0,
            ..settings()
        };
        let r = analyze(s, from, to, &stalls, &[], BTreeMap::new(), vec![]);
        assert_eq!(r.stalls, 94);
        assert_eq!(r.stall_lateness_ms.as_ref().unwrap().max, 147.0);
        assert_eq!(r.head.stalls, 29);
        assert_eq!(r.rest.stalls, 65);
        assert!((r.head_density_ratio_simple.unwrap() - 2.9).abs() < 1e-9);
        // observed: :00-:07 twice (16 s), the rest 114 s -> (29/16) / (65/114) = 3.18
        assert!((r.head_density_ratio.unwrap() - (29.0 / 16.0) / (65.0 / 114.0)).abs() < 1e-9);
        assert!(r.by_second[19] >= 1 && r.by_second[3] >= 1);
        assert!(
            parse_stalls("{\"at\": 1}\n")
                .unwrap_err()
                .starts_with("line 1:")
        );
    }

    #[test]
    fn partial_seconds_are_observed_in_part() {
        let o = observed_by_second(at(0, 0, 59, 500), at(0, 1, 1, 250));
        assert_eq!(o[59], 0.5);
        assert_eq!(o[0], 1.0);
        assert_eq!(o[1], 0.25);
        assert_eq!(o.iter().sum::<f64>(), 1.75);
        assert!(
            observed_by_second(at(0, 0, 1, 0), at(0, 0, 0, 0))
                .iter()
                .all(|x| *x == 0.0)
        );
    }

    #[test]
    fn no_stalls_renders_dashes_not_panics() {
        let r = analyze(
            settings(),
            at(13, 9, 0, 0),
            at(13, 9, 5, 0),
            &[],
            &[70, 80, 90],
            BTreeMap::from([(1, 3.0)]),
            vec!["the lab was not idle".into()],
        );
        assert_eq!(r.head_density_ratio, None);
        let t = render_text(&r);
        assert!(
            t.lines()
                .any(|l| l == "stalls > 30 ms      0       -       -       -"),
            "{t}"
        );
        assert!(t.contains("caveat: the lab was not idle"));
        assert!(t.contains("cpu1 3%"));
        let m = render_markdown(&r);
        assert!(m.contains("| stalls > 30 ms | 0 | - | - | - |"), "{m}");
        assert!(m.contains("| :08-:59 | 0 | 0.0 | - |"), "{m}");
    }

    #[test]
    fn renderers_show_ours_beside_the_article() {
        let (stalls, all) = fixture();
        let r = fixture_report(&stalls, &all);
        let t = render_text(&r);
        let has = |line: &str| t.lines().any(|l| l == line);
        assert!(has("max lateness ms          147.0           147"), "{t}");
        assert!(has("stalls in :00-:07           12            29"), "{t}");
        assert!(has("stalls > 30 ms     25    40.0   147.0   147.0"), "{t}");
        assert!(t.contains(":00   2"), "{t}");
        let m = render_markdown(&r);
        assert!(m.contains("| :30 | 2 |"), "{m}");
        assert!(m.contains("6.00x per observed second"), "{m}");
        assert_eq!(lateness_histogram(&all)[&0], 1000);
        assert_eq!(lateness_histogram(&all)[&147], 1);
    }
}
