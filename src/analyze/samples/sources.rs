//! The registry of the declared sources' files as the analysis reads them back (`ROWS`), one
//! row per source (`lab::source`): how one line gives its columns, and its per-step figures,
//! each an aggregation of one column over the step's window named by its quantity
//! (`nginx.active_max`: `report.json`'s `server.sources`, a claim's name, a steps-table column
//! when it has a header). php-fpm's and pg's files keep their typed readers (`apps`), which
//! criterion 5 reads; a new source is its declaration and its row here. Pure.
use serde_json::Value;

use super::series::{self, Span};
use super::{Samples, WindowServer, in_window, mean};

/// How a source's file reads back.
#[derive(Debug)]
pub(crate) struct SourceRow {
    /// The declared source's name (`samples/<name>.jsonl`).
    pub source: &'static str,
    /// Its columns, in the order `parse` gives them.
    pub columns: &'static [&'static str],
    /// One line's columns (`None`: a line without them, counted and said).
    pub parse: fn(&Value) -> Option<Vec<f64>>,
    pub figures: &'static [Figure],
}

/// One per-step figure of a source.
#[derive(Debug)]
pub(crate) struct Figure {
    /// Its quantity name, `<source>.<figure>`: its key in `server.sources`.
    pub name: &'static str,
    pub column: &'static str,
    pub agg: Agg,
    /// What `perflab verify --quantities` says of it.
    pub help: &'static str,
    /// Its column header in the steps table, when shown.
    pub header: Option<&'static str>,
}

/// How a column becomes a step's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agg {
    /// The highest reading inside the window (a gauge).
    Max,
    /// The mean of the readings inside the window (a gauge).
    Mean,
    /// A cumulative counter per second over exactly the window, read at its edges (`series`).
    PerSecond,
    /// How many readings fell inside the window.
    Samples,
}

/// The sources the analysis reads through this registry.
pub(crate) const ROWS: &[SourceRow] = &[
    NGINX,
    super::kernel::FPM_NET,
    super::handshake::FPM_SYN,
    super::handshake::NGINX_SYN,
    FRONT,
];

/// nginx's `stub_status` (the php lab's `nginx` source, `samples/nginx.jsonl`).
const NGINX: SourceRow = SourceRow {
    source: "nginx",
    columns: &[
        "active", "accepts", "handled", "requests", "reading", "writing", "waiting",
    ],
    parse: stub_status,
    figures: &[
        fig(
            "nginx.samples",
            "active",
            Agg::Samples,
            "nginx stub_status samples in the step",
        ),
        Figure {
            header: Some("nginx conn"),
            ..fig(
                "nginx.active_max",
                "active",
                Agg::Max,
                "most open client connections of nginx",
            )
        },
        fig(
            "nginx.active_mean",
            "active",
            Agg::Mean,
            "mean open client connections of nginx",
        ),
        fig(
            "nginx.accepts_per_s",
            "accepts",
            Agg::PerSecond,
            "connections nginx accepted per second",
        ),
        fig(
            "nginx.handled_per_s",
            "handled",
            Agg::PerSecond,
            "connections nginx handled per second (below accepts: it ran out of worker_connections)",
        ),
        fig(
            "nginx.requests_per_s",
            "requests",
            Agg::PerSecond,
            "requests nginx read per second (the sampler's own 1 per second included)",
        ),
        fig(
            "nginx.reading_max",
            "reading",
            Agg::Max,
            "most connections nginx was reading a request header on",
        ),
        fig(
            "nginx.writing_max",
            "writing",
            Agg::Max,
            "most connections nginx was writing a response on (waiting for php-fpm included)",
        ),
        fig(
            "nginx.waiting_max",
            "waiting",
            Agg::Max,
            "most idle keep-alive connections of nginx",
        ),
    ],
};

/// The storefront front's `/status` (the `front` source, `samples/front.jsonl`): its counters
/// (`status.front`); the backend's, nested beside them, are recorded, not read back.
const FRONT: SourceRow = SourceRow {
    source: "front",
    columns: &FRONT_COLUMNS,
    parse: front_status,
    figures: &[
        fig(
            "front.samples",
            "pages",
            Agg::Samples,
            "front /status samples in the step",
        ),
        fig(
            "front.pages_per_s",
            "pages",
            Agg::PerSecond,
            "pages the front was asked for per second (retries included)",
        ),
        fig(
            "front.ok_per_s",
            "s200",
            Agg::PerSecond,
            "pages the front answered 200 per second (its goodput)",
        ),
        fig(
            "front.not_found_per_s",
            "s404",
            Agg::PerSecond,
            "pages answered 404 per second (a cached failure: the seed's sticky not-found)",
        ),
        fig(
            "front.shed_per_s",
            "s429",
            Agg::PerSecond,
            "pages shed with 429 at the door per second",
        ),
        fig(
            "front.bad_gateway_per_s",
            "s502",
            Agg::PerSecond,
            "pages answered 502 per second (a backend call failed)",
        ),
        fig(
            "front.gateway_timeout_per_s",
            "s504",
            Agg::PerSecond,
            "pages answered 504 per second (the front's timeout to the backend)",
        ),
        Figure {
            header: Some("api calls/s"),
            ..fig(
                "front.backend_calls_per_s",
                "backend_calls",
                Agg::PerSecond,
                "calls the front made to the backend per second",
            )
        },
        fig(
            "front.backend_timeouts_per_s",
            "backend_timeouts",
            Agg::PerSecond,
            "backend calls the front gave up on (its timeout) per second",
        ),
        fig(
            "front.cache_hits_per_s",
            "cache_hits",
            Agg::PerSecond,
            "cache hits per second (cached failures included)",
        ),
        fig(
            "front.cache_misses_per_s",
            "cache_misses",
            Agg::PerSecond,
            "cache misses per second",
        ),
        fig(
            "front.stampede_fills_per_s",
            "stampede_fills",
            Agg::PerSecond,
            "backend calls per second for a key already being filled (no single-flight)",
        ),
        fig(
            "front.joined_per_s",
            "joined",
            Agg::PerSecond,
            "misses per second that joined a fill in flight (single-flight)",
        ),
        fig(
            "front.failure_hits_per_s",
            "failure_hits",
            Agg::PerSecond,
            "cache hits per second on a cached failure",
        ),
        Figure {
            header: Some("sockets"),
            ..fig(
                "front.open_sockets_max",
                "open_sockets_max",
                Agg::Max,
                "most sockets the front had open to the backend",
            )
        },
        fig(
            "front.queued_max",
            "queued_max",
            Agg::Max,
            "most backend calls waiting in the front's agent for a socket",
        ),
        fig(
            "front.inflight_max",
            "inflight",
            Agg::Max,
            "most pages in flight at the front at a reading",
        ),
    ],
};

/// The counters of `status.front` that `FRONT` reads, in its columns' order.
const FRONT_COLUMNS: [&str; 16] = [
    "pages",
    "s200",
    "s404",
    "s429",
    "s502",
    "s504",
    "backend_calls",
    "backend_timeouts",
    "cache_hits",
    "cache_misses",
    "stampede_fills",
    "joined",
    "failure_hits",
    "open_sockets_max",
    "queued_max",
    "inflight",
];

/// `FRONT_COLUMNS` of one line; `None` when one is missing.
fn front_status(line: &Value) -> Option<Vec<f64>> {
    let f = line.get("status")?.get("front")?;
    FRONT_COLUMNS
        .iter()
        .map(|c| f.get(*c).and_then(Value::as_f64))
        .collect()
}

pub(super) const fn fig(
    name: &'static str,
    column: &'static str,
    agg: Agg,
    help: &'static str,
) -> Figure {
    Figure {
        name,
        column,
        agg,
        help,
        header: None,
    }
}

/// The seven numbers of a `stub_status` page, in its order: `Active connections: N`, `server
/// accepts handled requests` `A H R`, `Reading: r Writing: w Waiting: x`.
fn stub_status(line: &Value) -> Option<Vec<f64>> {
    let text = line.get("text")?.as_str()?;
    let nums: Vec<f64> = text
        .split_whitespace()
        .filter_map(|w| w.parse::<u64>().ok().map(|n| n as f64))
        .collect();
    (nums.len() == 7).then_some(nums)
}

/// One reading of a source: its time and its columns' values.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourcePoint {
    pub t: i64,
    pub values: Vec<f64>,
}

/// The readings of `row`'s lines, sorted by `t`, and how many lines gave none (no `t`, or
/// not the row's format).
pub(crate) fn points(row: &SourceRow, lines: &[Value]) -> (Vec<SourcePoint>, usize) {
    let mut v: Vec<SourcePoint> = lines
        .iter()
        .filter_map(|l| {
            let t = l.get("t")?.as_f64()? as i64;
            Some(SourcePoint {
                t,
                values: (row.parse)(l)?,
            })
        })
        .collect();
    v.sort_by_key(|p| p.t);
    let skipped = lines.len() - v.len();
    (v, skipped)
}

/// Every source's figures over `span` into `w.sources`; a counter with too few readings
/// inside has none and says why in `w.unusable`.
pub(super) fn window(s: &Samples, span: Span, w: &mut WindowServer) {
    for row in ROWS {
        let Some(all) = s.sources.get(row.source) else {
            continue;
        };
        let inside = in_window(all, |p| p.t, span.from, span.to);
        if inside.is_empty() {
            continue;
        }
        let near = series::around(all, |p| p.t, span);
        for f in row.figures {
            let Some(i) = row.columns.iter().position(|c| *c == f.column) else {
                continue;
            };
            let col = |v: &[SourcePoint]| v.iter().map(|p| p.values[i]).collect::<Vec<_>>();
            let value = match f.agg {
                Agg::Samples => Some(inside.len() as f64),
                Agg::Max => col(inside).into_iter().reduce(f64::max),
                Agg::Mean => mean(col(inside).into_iter()),
                Agg::PerSecond => {
                    let pts = series::monotone(near.iter().map(|p| (p.t, p.values[i])));
                    series::counter_rate(&pts, span)
                }
            };
            match value {
                Some(v) => {
                    w.sources.insert(f.name.to_string(), v);
                }
                None => {
                    let why = format!(
                        "had {} sample(s) inside its {:.2} s window",
                        inside.len(),
                        span.seconds()
                    );
                    w.unusable.insert(f.name.to_string(), why);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "Active connections: 291 \nserver accepts handled requests\n 16630948 16630948 31070465 \nReading: 6 Writing: 179 Waiting: 106 \n";

    fn line(t: i64, accepts: u64, requests: u64, active: u64) -> Value {
        let text = PAGE
            .replace("291", &active.to_string())
            .replace("16630948 16630948", &format!("{accepts} {accepts}"))
            .replace("31070465", &requests.to_string());
        serde_json::json!({ "t": t, "text": text })
    }

    #[test]
    fn a_stub_status_page_gives_its_seven_numbers_and_anything_else_none() {
        let v = stub_status(&serde_json::json!({"t": 1, "text": PAGE})).unwrap();
        assert_eq!(
            v,
            [291.0, 16630948.0, 16630948.0, 31070465.0, 6.0, 179.0, 106.0]
        );
        assert_eq!(v.len(), NGINX.columns.len());
        assert!(stub_status(&serde_json::json!({"t": 1, "text": "<html>403</html>"})).is_none());
        assert!(stub_status(&serde_json::json!({"t": 1, "status": {}})).is_none());
    }

    #[test]
    fn every_figure_is_named_after_its_source_and_reads_a_column_it_has() {
        for row in ROWS {
            assert!(crate::lab::sources().iter().any(|s| s.name == row.source));
            for f in row.figures {
                assert!(
                    f.name.starts_with(&format!("{}.", row.source)),
                    "{}",
                    f.name
                );
                assert!(row.columns.contains(&f.column), "{}", f.name);
            }
        }
    }

    #[test]
    fn a_step_reads_gauges_inside_its_window_and_counters_at_its_edges() {
        // every 2 s from t = 0: 100 requests and 10 connections per second, 5 open then 9
        let lines: Vec<Value> = (0..10)
            .map(|i| {
                line(
                    i * 2000,
                    10 * 2 * i as u64,
                    100 * 2 * i as u64,
                    if i < 5 { 5 } else { 9 },
                )
            })
            .chain([serde_json::json!({"t": 3, "text": "not a page"})])
            .collect();
        let (pts, skipped) = points(&NGINX, &lines);
        assert_eq!((pts.len(), skipped), (10, 1));
        let mut s = Samples::default();
        s.sources.insert("nginx".into(), pts);
        let mut w = WindowServer::default();
        window(&s, Span::step(4000, 12000), &mut w);
        let get = |n: &str| w.sources.get(n).copied();
        assert_eq!(get("nginx.samples"), Some(4.0));
        assert_eq!(get("nginx.active_max"), Some(9.0));
        assert_eq!(get("nginx.active_mean"), Some(6.0));
        let rps = get("nginx.requests_per_s").unwrap();
        assert!((rps - 100.0).abs() < 1e-9, "{rps}");
        let cps = get("nginx.accepts_per_s").unwrap();
        assert!((cps - 10.0).abs() < 1e-9, "{cps}");
        // a window with one reading: gauges, but no rate
        let mut w = WindowServer::default();
        window(&s, Span::step(4000, 5000), &mut w);
        assert_eq!(w.sources.get("nginx.active_max"), Some(&5.0));
        assert!(!w.sources.contains_key("nginx.requests_per_s"));
        assert!(
            w.unusable.contains_key("nginx.requests_per_s"),
            "{:?}",
            w.unusable
        );
    }
}

#[cfg(test)]
mod front_tests {
    use super::*;

    fn status(t: i64, calls: u64, sockets: u64) -> Value {
        let mut front = serde_json::Map::new();
        for c in FRONT_COLUMNS {
            front.insert(c.into(), 0.into());
        }
        front.insert("backend_calls".into(), calls.into());
        front.insert("open_sockets_max".into(), sockets.into());
        serde_json::json!({ "t": t, "status": { "front": front, "backend": null } })
    }

    /// The front's status lines read back into per-step figures: calls per second at the
    /// window's edges, the most open sockets inside it; a line without the counters is left out.
    #[test]
    fn the_fronts_status_gives_calls_per_second_and_its_most_sockets() {
        let mut lines: Vec<Value> = (0..10)
            .map(|i| status(i * 1000, 50 * i as u64, 3 + (i as u64 % 4)))
            .collect();
        lines.push(serde_json::json!({"t": 5, "status": {"front": {"pages": 1}}}));
        let (pts, skipped) = points(&FRONT, &lines);
        assert_eq!((pts.len(), skipped), (10, 1));
        let mut s = Samples::default();
        s.sources.insert("front".into(), pts);
        let mut w = WindowServer::default();
        window(&s, Span::step(2000, 8000), &mut w);
        let calls = w.sources["front.backend_calls_per_s"];
        assert!((calls - 50.0).abs() < 1e-9, "{calls}");
        assert_eq!(w.sources["front.open_sockets_max"], 6.0);
    }
}
