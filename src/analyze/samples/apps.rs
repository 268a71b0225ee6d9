//! The application's own samples over one window: php-fpm's status, pg's activity and
//! commits, the Node app's metrics. Gauges (idle workers, queue lengths, activity groups,
//! in-flight) are read at the samples inside the window; counters (`accepted conn`,
//! `xact_commit`) over exactly the window, read at its edges (`series`).
use super::series::{self, Span};
use super::*;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FpmWindow {
    pub samples: usize,
    pub idle_min: u64,
    pub total: u64,
    pub listen_queue_max: u64,
    pub listen_queue_len: u64,
    /// Share of samples with idle = 0 and listen queue > 0.
    pub saturated_share: f64,
    /// `accepted conn` per second over the window.
    pub accepted_per_s: Option<f64>,
    /// How much `max children reached` grew over the window (from the last sample before it,
    /// or its first, to its last); left out of report.json when 0, as every run before it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_children_reached: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The growth of a counter over the window: its last reading in the window less the last
/// before it (the first in it when none is before).
fn counter_growth<T>(inside: &[T], near: &[T], f: impl Fn(&T) -> (i64, u64), from: i64) -> u64 {
    let last = inside.iter().map(&f).max_by_key(|(t, _)| *t);
    let before = near
        .iter()
        .map(&f)
        .filter(|(t, _)| *t < from)
        .max_by_key(|(t, _)| *t);
    let first = inside.iter().map(&f).min_by_key(|(t, _)| *t);
    match (last, before.or(first)) {
        (Some((_, end)), Some((_, start))) => end.saturating_sub(start),
        _ => 0,
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PgWindow {
    /// The most common activity group, e.g. "idle Client ClientRead 20".
    pub top: String,
    pub commits_per_s: Option<f64>,
    /// Connections idle in ClientRead in most samples (the database waits for the app).
    pub waits_for_client: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeWindow {
    pub samples: usize,
    pub elu_max: f64,
    pub eld_p99_max_ms: f64,
    pub pool_waiting_max: u64,
    pub pool_waiting_share: f64,
    pub inflight_max: u64,
    /// Mean of the app's in-flight gauge (summed over processes per sample time).
    pub inflight_mean: f64,
    pub err5xx: u64,
    pub errors: BTreeMap<String, u64>,
}

/// Per second over exactly the window: a counter read at the window's edges, interpolated
/// between the samples around them (`near`: the samples within reach of the window); `None`
/// when too few fall inside.
fn rate<T>(near: &[T], f: impl Fn(&T) -> (i64, u64), span: Span) -> Option<f64> {
    let pts = series::monotone(near.iter().map(|x| {
        let (t, c) = f(x);
        (t, c as f64)
    }));
    series::counter_rate(&pts, span)
}

pub(super) fn fpm_window(fpm: &[FpmSample], near: &[FpmSample], span: Span) -> FpmWindow {
    let sat = fpm
        .iter()
        .filter(|f| f.status.idle_processes == 0 && f.status.listen_queue > 0)
        .count();
    let status = |f: fn(&FpmStatus) -> u64| fpm.iter().map(move |s| f(&s.status));
    FpmWindow {
        samples: fpm.len(),
        idle_min: status(|s| s.idle_processes).min().unwrap_or(0),
        total: status(|s| s.total_processes).max().unwrap_or(0),
        listen_queue_max: status(|s| s.listen_queue).max().unwrap_or(0),
        listen_queue_len: status(|s| s.listen_queue_len).max().unwrap_or(0),
        saturated_share: share(sat, fpm.len()),
        accepted_per_s: rate(near, |s| (s.t, s.status.accepted_conn), span),
        max_children_reached: counter_growth(
            fpm,
            near,
            |s| (s.t, s.status.max_children_reached),
            span.from,
        ),
    }
}

pub(super) fn pg_window(
    pg: &[PgSample],
    near: &[PgSample],
    span: Span,
    rules: &SaturationRules,
) -> PgWindow {
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    let mut client_read = 0;
    for p in pg {
        if let Some(top) = p.activity.iter().max_by_key(|a| a.count) {
            let label = format!(
                "{} {} {} {}",
                top.state,
                top.wait_event_type.as_deref().unwrap_or("-"),
                top.wait_event.as_deref().unwrap_or("-"),
                top.count
            );
            *groups.entry(label).or_default() += 1;
            if top.state == "idle" && top.wait_event.as_deref() == Some("ClientRead") {
                client_read += 1;
            }
        }
    }
    let top = groups
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(k, _)| k.clone())
        .unwrap_or_default();
    PgWindow {
        top,
        commits_per_s: rate(near, |s| (s.t, s.xact_commit), span),
        waits_for_client: share(client_read, pg.len()) >= rules.most_of_step,
    }
}

pub(super) fn node_window(node: &[NodeSample]) -> NodeWindow {
    let mut errors = BTreeMap::new();
    for n in node {
        for (k, v) in &n.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
    }
    // Each process's mean in-flight, summed: processes sample at their own times, so a
    // sum per clock second would count one process twice or not at all.
    let mut by_process: BTreeMap<(&str, u64), Vec<f64>> = BTreeMap::new();
    for n in node {
        by_process
            .entry((n.container.as_str(), n.pid))
            .or_default()
            .push(n.inflight as f64);
    }
    NodeWindow {
        samples: node.len(),
        elu_max: node.iter().map(|n| n.elu).fold(0.0, f64::max),
        eld_p99_max_ms: node.iter().map(|n| n.eld_p99_ms).fold(0.0, f64::max),
        pool_waiting_max: node
            .iter()
            .map(|n| n.pool_waiting_max.max(n.pool_waiting))
            .max()
            .unwrap_or(0),
        pool_waiting_share: share(
            node.iter()
                .filter(|n| n.pool_waiting > 0 || n.pool_waiting_max > 0)
                .count(),
            node.len(),
        ),
        inflight_max: node.iter().map(|n| n.inflight_max).max().unwrap_or(0),
        inflight_mean: by_process
            .values()
            .filter_map(|v| mean(v.iter().copied()))
            .sum(),
        err5xx: node.iter().map(|n| n.err5xx).sum(),
        errors,
    }
}

pub(super) fn share(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A php-fpm status line as the sampler writes it (`samples/fpm.jsonl`).
    fn line(t: i64, reached: u64, idle: u64) -> FpmSample {
        let json = format!(
            r#"{{"t":{t},"status":{{"accepted conn":{t},"idle processes":{idle},"listen queue":0,"max children reached":{reached},"process manager":"dynamic","total processes":20}}}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn max_children_reached_is_the_counters_growth_over_the_window() {
        let all: Vec<FpmSample> = [(0, 3), (2000, 3), (4000, 5), (6000, 9), (8000, 12)]
            .iter()
            .map(|(t, n)| line(*t, *n, 0))
            .collect();
        assert_eq!(all[2].status.max_children_reached, 5, "parsed");
        // window 3-7 s: inside 4 and 6 s, the last before it at 2 s (3) -> 9 - 3
        let span = Span::step(3000, 7000);
        let inside = &all[2..4];
        assert_eq!(fpm_window(inside, &all, span).max_children_reached, 6);
        // nothing before the window: from its first reading
        assert_eq!(
            counter_growth(
                &all[..2],
                &all[..2],
                |s| (s.t, s.status.max_children_reached),
                0
            ),
            0
        );
        assert_eq!(
            counter_growth(
                &all[3..],
                &all[3..],
                |s| (s.t, s.status.max_children_reached),
                6000
            ),
            3
        );
        // a status without the key (an old php-fpm) reads 0; 0 is left out of report.json
        let old: FpmSample =
            serde_json::from_str(r#"{"t":1,"status":{"idle processes":1}}"#).unwrap();
        assert_eq!(old.status.max_children_reached, 0);
        let w = fpm_window(&[old.clone()], &[old], Span::step(0, 10));
        assert!(
            !serde_json::to_string(&w)
                .unwrap()
                .contains("max_children_reached")
        );
    }
}
