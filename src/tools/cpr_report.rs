//! `cpu-per-request` analysis and rendering (pure): cgroup CPU counters of each lab container
//! before and after N sequential requests to an endpoint -> CPU ms per request per container,
//! wall time per request, and our figures beside the article's (PHP, 300 sequential requests:
//! /api/ping 7.1 ms php-fpm + 3.4 ms nginx; /api/db 9.0 + 3.3; /api/slow 14.2 + 5.0).
use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::render::{Block, Table, blocks_text, caveat_lines, caveats_markdown, opt};
use super::stats::{self, Summary};
pub(crate) use crate::rundir::tool::CprSettings;

/// A container's counters around one measurement window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ContainerCounters {
    pub role: String,
    pub name: String,
    pub cpu_ns_before: u64,
    pub cpu_ns_after: u64,
    pub throttled_ns_before: u64,
    pub throttled_ns_after: u64,
}

impl ContainerCounters {
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.cpu_ns_after.saturating_sub(self.cpu_ns_before)
    }

    pub(crate) fn throttled_ns(&self) -> u64 {
        self.throttled_ns_after
            .saturating_sub(self.throttled_ns_before)
    }
}

/// The raw result of one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EndpointRaw {
    pub endpoint: String,
    /// Status per request in order (0 = transport error).
    pub statuses: Vec<u16>,
    /// Wall time per request, ms.
    pub wall_ms: Vec<f64>,
    /// Seconds between the two counter readings.
    pub elapsed_s: f64,
    pub containers: Vec<ContainerCounters>,
}

/// One endpoint's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EndpointRow {
    pub endpoint: String,
    pub requests: usize,
    pub ok: usize,
    /// Other outcomes by status (`0` = transport error).
    pub not_ok: BTreeMap<u16, usize>,
    pub wall_ms: Option<Summary>,
    pub elapsed_s: f64,
    /// CPU ms per request by container role, in the containers' order.
    pub cpu_ms_per_request: Vec<(String, f64)>,
    /// CPU throttling (cgroup quota) per request by role, ms: should be 0 (no quotas).
    pub throttled_ms_per_request: Vec<(String, f64)>,
    /// What the idle baseline alone would add per request over this window, ms.
    pub idle_ms_per_request: Vec<(String, f64)>,
}

impl EndpointRow {
    pub(crate) fn cpu_ms(&self, role: &str) -> Option<f64> {
        self.cpu_ms_per_request
            .iter()
            .find(|(r, _)| r == role)
            .map(|(_, v)| *v)
    }
}

/// CPU the containers burn doing nothing, ms per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IdleBaseline {
    pub seconds: f64,
    pub cpu_ms_per_s: Vec<(String, f64)>,
}

/// An article figure (a point when low == high).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ArticleFigure {
    pub endpoint: String,
    /// Container role, or `wall` for the wall time per request.
    pub what: String,
    pub low_ms: f64,
    pub high_ms: f64,
    pub note: String,
}

impl ArticleFigure {
    fn text(&self) -> String {
        if self.low_ms == self.high_ms {
            format!("{}", self.low_ms)
        } else {
            format!("{}-{}", self.low_ms, self.high_ms)
        }
    }
}

/// Ours beside one article figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Comparison {
    pub article: ArticleFigure,
    pub ours_ms: Option<f64>,
    /// Ours over the article's (midpoint of a range).
    pub ratio: Option<f64>,
}

/// The report (`report.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CprReport {
    pub settings: CprSettings,
    pub rows: Vec<EndpointRow>,
    pub idle: Option<IdleBaseline>,
    pub comparisons: Vec<Comparison>,
    pub caveats: Vec<String>,
    /// The host speed probe's readings before and after (`host speed before ...: ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_speed: Vec<String>,
}

/// The article's figures for a lab (its descriptor's `article_cpu_figures`; none for a name
/// that is no lab).
pub(crate) fn article_figures(lab: &str) -> Vec<ArticleFigure> {
    let Some(lab) = crate::lab::Lab::from_name(lab) else {
        return Vec::new();
    };
    crate::lab::descriptor(lab)
        .article_cpu_figures()
        .iter()
        .map(|f| ArticleFigure {
            endpoint: f.endpoint.into(),
            what: f.what.into(),
            low_ms: f.low_ms,
            high_ms: f.high_ms,
            note: f.note.into(),
        })
        .collect()
}

fn per_request(ns: u64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        ns as f64 / n as f64 / 1e6
    }
}

/// Idle baseline from counters read `seconds` apart.
pub(crate) fn idle_baseline(counters: &[ContainerCounters], seconds: f64) -> IdleBaseline {
    IdleBaseline {
        seconds,
        cpu_ms_per_s: counters
            .iter()
            .map(|c| {
                let v = if seconds > 0.0 {
                    c.cpu_ns() as f64 / 1e6 / seconds
                } else {
                    0.0
                };
                (c.role.clone(), v)
            })
            .collect(),
    }
}

pub(crate) fn row(raw: &EndpointRaw, idle: Option<&IdleBaseline>) -> EndpointRow {
    let n = raw.statuses.len();
    let mut not_ok = BTreeMap::new();
    for s in raw.statuses.iter().filter(|s| **s != 200) {
        *not_ok.entry(*s).or_default() += 1;
    }
    let idle_ms_per_request = match idle {
        Some(b) if n > 0 => b
            .cpu_ms_per_s
            .iter()
            .map(|(r, ms_s)| (r.clone(), ms_s * raw.elapsed_s / n as f64))
            .collect(),
        _ => Vec::new(),
    };
    EndpointRow {
        endpoint: raw.endpoint.clone(),
        requests: n,
        ok: n - not_ok.values().sum::<usize>(),
        not_ok,
        wall_ms: stats::summarize(&raw.wall_ms),
        elapsed_s: raw.elapsed_s,
        cpu_ms_per_request: raw
            .containers
            .iter()
            .map(|c| (c.role.clone(), per_request(c.cpu_ns(), n)))
            .collect(),
        throttled_ms_per_request: raw
            .containers
            .iter()
            .map(|c| (c.role.clone(), per_request(c.throttled_ns(), n)))
            .collect(),
        idle_ms_per_request,
    }
}

pub(crate) fn analyze(
    settings: CprSettings,
    raws: &[EndpointRaw],
    idle: Option<IdleBaseline>,
    caveats: Vec<String>,
) -> CprReport {
    let rows: Vec<EndpointRow> = raws.iter().map(|r| row(r, idle.as_ref())).collect();
    let comparisons = article_figures(&settings.lab)
        .into_iter()
        .filter(|f| rows.iter().any(|r| r.endpoint == f.endpoint))
        .map(|f| {
            let r = rows.iter().find(|r| r.endpoint == f.endpoint);
            let ours = r.and_then(|r| match f.what.as_str() {
                "wall" => r.wall_ms.as_ref().map(|w| w.mean),
                crate::lab::APP_BOX_FIGURE => app_box_ms(&settings.lab, r),
                role => r.cpu_ms(role),
            });
            let mid = (f.low_ms + f.high_ms) / 2.0;
            Comparison {
                ratio: ours.filter(|_| mid > 0.0).map(|o| o / mid),
                ours_ms: ours,
                article: f,
            }
        })
        .collect();
    CprReport {
        settings,
        rows,
        idle,
        comparisons,
        caveats,
        host_speed: Vec::new(),
    }
}

/// The app box's CPU per request: the sum over the lab's roles on the app slot (php-fpm and
/// nginx; the node app), each read by the name the rows give it (its log name). `None` when
/// one is missing or the lab has none.
fn app_box_ms(lab: &str, r: &EndpointRow) -> Option<f64> {
    let lab = crate::lab::Lab::from_name(lab)?;
    let mut roles = crate::lab::descriptor(lab)
        .info()
        .roles
        .iter()
        .filter(|x| x.is_app_box())
        .peekable();
    roles.peek()?;
    roles.map(|x| r.cpu_ms(x.log_name())).sum()
}

fn roles(r: &CprReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for row in &r.rows {
        for (role, _) in &row.cpu_ms_per_request {
            if !out.contains(role) {
                out.push(role.clone());
            }
        }
    }
    out
}

fn header(r: &CprReport) -> String {
    format!(
        "cpu-per-request {}: {} sequential requests per endpoint ({}), cgroup CPU delta per container",
        r.settings.lab,
        r.settings.n,
        if r.settings.fresh_connections {
            "a new connection each"
        } else {
            "keep-alive"
        }
    )
}

fn not_ok_text(row: &EndpointRow) -> String {
    row.not_ok
        .iter()
        .map(|(s, n)| {
            if *s == 0 {
                format!("{n} transport errors")
            } else {
                format!("{n} x HTTP {s}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row per endpoint: outcomes, wall time, CPU ms per request of each container.
fn endpoint_table(r: &CprReport) -> Table {
    let roles = roles(r);
    let mut head = vec![
        "endpoint".to_string(),
        "ok/sent".into(),
        "wall p50 ms".into(),
        "wall mean ms".into(),
    ];
    head.extend(roles.iter().map(|role| format!("{role} CPU ms")));
    let mut t = Table::new(head);
    for row in &r.rows {
        let w = row.wall_ms.as_ref();
        let mut cells = vec![
            row.endpoint.clone(),
            format!("{}/{}", row.ok, row.requests),
            opt(w.map(|w| w.p50), 1, ""),
            opt(w.map(|w| w.mean), 1, ""),
        ];
        cells.extend(roles.iter().map(|role| opt(row.cpu_ms(role), 2, "")));
        t.push(cells);
    }
    t
}

/// Ours beside each article figure.
fn comparison_table(r: &CprReport) -> Table {
    let mut t = Table::new([
        "endpoint",
        "what",
        "ours ms",
        "article ms",
        "ours/article",
        "note",
    ]);
    t.left = vec![0, 1, 5];
    for c in &r.comparisons {
        t.push(vec![
            c.article.endpoint.clone(),
            c.article.what.clone(),
            opt(c.ours_ms, 2, ""),
            c.article.text(),
            opt(c.ratio, 2, "x"),
            c.article.note.clone(),
        ]);
    }
    t
}

fn notes(r: &CprReport) -> Vec<String> {
    let mut v: Vec<String> = r
        .rows
        .iter()
        .filter(|row| !row.not_ok.is_empty())
        .map(|row| format!("{}: {}", row.endpoint, not_ok_text(row)))
        .collect();
    if let Some(b) = &r.idle {
        let parts: Vec<String> = b
            .cpu_ms_per_s
            .iter()
            .map(|(role, v)| format!("{role} {v:.2}"))
            .collect();
        v.push(format!(
            "idle baseline over {:.0} s before the endpoints, CPU ms per second: {}",
            b.seconds,
            parts.join(", ")
        ));
    }
    v
}

/// Plain-text report (also the stdout table).
pub(crate) fn render_text(r: &CprReport) -> String {
    let mut b = Block::new(&header(r));
    b.table = Some(endpoint_table(r));
    b.notes = notes(r);
    let mut blocks = vec![b];
    if !r.comparisons.is_empty() {
        let mut c = Block::new("");
        c.lines = vec![String::new(), "compared with the article:".into()];
        c.table = Some(comparison_table(r));
        blocks.push(c);
    }
    let mut caveats = Block::new("");
    caveats.notes = caveat_lines(&r.host_speed, &r.caveats);
    blocks.push(caveats);
    blocks_text(&blocks)
}

/// Markdown report.
pub(crate) fn render_markdown(r: &CprReport) -> String {
    let mut s = format!("# cpu-per-request {}\n\n{}.\n\n", r.settings.lab, header(r));
    s.push_str(&endpoint_table(r).to_markdown());
    for n in notes(r) {
        let _ = writeln!(s, "\n- {n}");
    }
    if !r.comparisons.is_empty() {
        let _ = writeln!(s, "\n## Compared with the article\n");
        s.push_str(&comparison_table(r).to_markdown());
    }
    s.push_str(&caveats_markdown(&r.host_speed, &r.caveats));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(role: &str, before: u64, after: u64) -> ContainerCounters {
        ContainerCounters {
            role: role.into(),
            name: format!("perflab-x-{role}"),
            cpu_ns_before: before,
            cpu_ns_after: after,
            throttled_ns_before: 0,
            throttled_ns_after: 0,
        }
    }

    fn settings() -> CprSettings {
        CprSettings {
            lab: "php".into(),
            n: 4,
            endpoints: vec!["/api/ping".into(), "/api/db".into()],
            warmup: 2,
            idle_s: 2.0,
            fresh_connections: false,
            suite: "trixie".into(),
        }
    }

    fn fixture() -> CprReport {
        let ping = EndpointRaw {
            endpoint: "/api/ping".into(),
            statuses: vec![200, 200, 200, 200],
            wall_ms: vec![8.0, 9.0, 10.0, 9.0],
            elapsed_s: 0.04,
            // 4 requests: 28 ms php-fpm -> 7 ms each, 14 ms nginx -> 3.5 each
            containers: vec![
                counters("php-fpm", 1_000_000_000, 1_028_000_000),
                counters("nginx", 5_000_000, 19_000_000),
                counters("pg", 0, 400_000),
            ],
        };
        let db = EndpointRaw {
            endpoint: "/api/db".into(),
            statuses: vec![200, 500, 0, 200],
            wall_ms: vec![12.0, 14.0, 13.0, 13.0],
            elapsed_s: 0.052,
            containers: vec![
                counters("php-fpm", 0, 36_000_000),
                counters("nginx", 0, 13_200_000),
                counters("pg", 0, 8_000_000),
            ],
        };
        let idle = idle_baseline(
            &[
                counters("php-fpm", 0, 0),
                counters("nginx", 0, 0),
                counters("pg", 0, 2_000_000),
            ],
            2.0,
        );
        analyze(settings(), &[ping, db], Some(idle), vec![])
    }

    #[test]
    fn cpu_per_request_per_container() {
        let r = fixture();
        let ping = &r.rows[0];
        assert_eq!(ping.requests, 4);
        assert_eq!(ping.ok, 4);
        assert_eq!(ping.cpu_ms("php-fpm"), Some(7.0));
        assert_eq!(ping.cpu_ms("nginx"), Some(3.5));
        assert_eq!(ping.cpu_ms("pg"), Some(0.1));
        assert_eq!(ping.wall_ms.as_ref().unwrap().mean, 9.0);
        let db = &r.rows[1];
        assert_eq!(db.ok, 2);
        assert_eq!(db.not_ok, BTreeMap::from([(0, 1), (500, 1)]));
        assert_eq!(db.cpu_ms("php-fpm"), Some(9.0));
        // idle pg 1 ms/s over 0.052 s / 4 requests = 0.013 ms per request
        let idle_pg = db
            .idle_ms_per_request
            .iter()
            .find(|(r, _)| r == "pg")
            .unwrap()
            .1;
        assert!((idle_pg - 0.013).abs() < 1e-12);
        assert_eq!(r.idle.as_ref().unwrap().cpu_ms_per_s[2], ("pg".into(), 1.0));
    }

    #[test]
    fn compares_with_the_articles_figures_of_the_endpoints_run() {
        let r = fixture();
        // /api/slow was not run: only ping and db figures (3 each, and db's app box under load)
        assert_eq!(r.comparisons.len(), 7);
        let c = &r.comparisons[0];
        assert_eq!(
            (c.article.endpoint.as_str(), c.article.what.as_str()),
            ("/api/ping", "php-fpm")
        );
        assert_eq!(c.ours_ms, Some(7.0));
        assert!((c.ratio.unwrap() - 7.0 / 7.1).abs() < 1e-12);
        let wall = r
            .comparisons
            .iter()
            .find(|c| c.article.what == "wall")
            .unwrap();
        assert_eq!(wall.ours_ms, Some(9.0));
        assert_eq!(article_figures("node").len(), 3);
        assert!(article_figures("demo").is_empty());
    }

    #[test]
    fn the_app_box_is_the_labs_app_slot_roles_summed() {
        let r = fixture();
        let app_box = |r: &CprReport| {
            r.comparisons
                .iter()
                .find(|c| c.article.what == crate::lab::APP_BOX_FIGURE)
                .and_then(|c| c.ours_ms)
        };
        // /api/db: php-fpm 36 ms + nginx 13.2 ms over 4 requests; pg is not the app box
        assert!((app_box(&r).unwrap() - (9.0 + 3.3)).abs() < 1e-9);
        // the node lab's under-load figures are its app's: read from the `app` row alone
        let node = EndpointRaw {
            endpoint: "/cpu".into(),
            statuses: vec![200, 200],
            wall_ms: vec![6.0, 6.0],
            elapsed_s: 0.012,
            containers: vec![
                counters("app", 0, 11_000_000),
                counters("pg", 0, 90_000_000),
            ],
        };
        let s = CprSettings {
            lab: "node".into(),
            endpoints: vec!["/cpu".into()],
            ..settings()
        };
        let n = analyze(s, &[node], None, vec![]);
        assert_eq!(app_box(&n), Some(5.5));
        // a row without one of the app box's roles has no app box figure
        let mut missing = fixture();
        missing.rows[1]
            .cpu_ms_per_request
            .retain(|(role, _)| role != "nginx");
        assert_eq!(app_box_ms("php", &missing.rows[1]), None);
    }

    #[test]
    fn renderers_show_every_endpoint_and_the_article() {
        let r = fixture();
        let t = render_text(&r);
        let has = |line: &str| t.lines().any(|l| l == line);
        assert!(
            has(
                "endpoint   ok/sent  wall p50 ms  wall mean ms  php-fpm CPU ms  nginx CPU ms  pg CPU ms"
            ),
            "{t}"
        );
        assert!(
            has(
                "/api/ping      4/4          9.0           9.0            7.00          3.50       0.10"
            ),
            "{t}"
        );
        assert!(has("/api/db: 1 transport errors, 1 x HTTP 500"), "{t}");
        assert!(
            has(
                "/api/ping  php-fpm     7.00         7.1         0.99x  300 sequential requests, cgroup delta"
            ),
            "{t}"
        );
        assert!(t.contains("idle baseline over 2 s"), "{t}");
        let m = render_markdown(&r);
        assert!(
            m.contains("| /api/db | 2/4 | 13.0 | 13.0 | 9.00 | 3.30 | 2.00 |"),
            "{m}"
        );
        assert!(
            m.contains("| /api/db | nginx | 3.30 | 3.3 | 1.00x |"),
            "{m}"
        );
    }
}
