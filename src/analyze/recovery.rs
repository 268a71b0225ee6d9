//! Recovery after overload (`load.recover_rps`): once the load drops below the knee, how long
//! php-fpm's backlog takes to drain, how long until p95 is back under the SLO, and how much work
//! php-fpm did for clients that had already been answered (or had given up). Pure: the k6
//! timeline and the php-fpm status samples in, the figures out.
use super::k6csv::Timeline;
use super::samples::FpmSample;
use serde::{Deserialize, Serialize};

/// Consecutive seconds whose p95 must each be under the SLO for p95 to count as back.
pub const P95_BACK_RUN_S: usize = 3;

/// The recovery section of `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// When the load dropped: the first request of the recovery phase (unix ms).
    pub drop_ms: i64,
    /// How long the recovery phase ran, its first request to its last (s).
    pub window_s: f64,
    /// Requests started per second in the recovery phase (the drop's rate as sent): the
    /// phase's requests, counted by their tag, over its first-to-last window.
    pub sent_per_s: f64,
    /// php-fpm's `listen queue` and `active processes` at their highest in the lowest step
    /// (the baseline the backlog drains back to).
    pub baseline_queue: Option<u64>,
    pub baseline_active: Option<u64>,
    /// The longest `listen queue` from the overload's start to the drop's end.
    pub peak_queue: Option<u64>,
    /// Seconds from the drop to the first php-fpm sample with queue and active back at the
    /// baseline; `None`: not drained within the phase (or no php-fpm samples).
    pub drained_s: Option<f64>,
    /// Seconds from the drop to the start of the first [`P95_BACK_RUN_S`] seconds whose p95
    /// (by completion second) each stays under the SLO; `None`: not within the phase.
    pub p95_back_s: Option<f64>,
    /// p95 of the requests completed in the drop's first second and its last (ms).
    pub p95_at_drop_ms: Option<f64>,
    pub p95_at_end_ms: Option<f64>,
    /// Requests php-fpm accepted (`accepted conn`) from the overload's start to the phase's
    /// end, and the successful responses completed meanwhile.
    pub fpm_accepted: Option<u64>,
    pub ok: u64,
    /// `fpm_accepted - ok`: requests php-fpm ran whose client got no answer from them (nginx
    /// had answered 504 or the client had left); about, within a sample period's requests.
    pub wasted: Option<i64>,
    /// What the drain should take, from what was there at the drop ([`Drain`]); absent in
    /// runs recorded before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<Drain>,
}

/// The drain the mechanism predicts: the queue at the drop, and the connections waiting
/// outside it that enter as places free (half-open on php-fpm's side, SYN_SENT on nginx's),
/// worked off at php-fpm's accept rate during the overload less the arrivals after the drop.
/// `min_s` counts the queue and the half-open ones (nginx already sent their request), `max_s`
/// the connecting ones too (some give up at nginx's connect timeout first) plus one php-fpm
/// sample period (the drain is seen at the first sample after it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drain {
    /// php-fpm's `accepted conn` per second from the overload's start to the drop.
    pub accept_per_s: f64,
    /// php-fpm's `listen queue` at its last sample before the drop, less the baseline's.
    pub queue: u64,
    /// The last readings before the drop of the `fpm_syn` and `nginx_syn` sources (none
    /// without `stack.php.kernel_counters`).
    pub half_open: Option<u64>,
    pub connecting: Option<u64>,
    /// Bounds of the drain time (s); `None`: the arrivals outpace the accept rate, or (max)
    /// the handshakes were not read.
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
}

/// What the figures are computed over.
pub struct RecoveryInput<'a> {
    pub timeline: &'a Timeline,
    pub fpm: &'a [FpmSample],
    /// The recovery phase's first and last request start (unix ms).
    pub span: (i64, i64),
    /// How many requests the recovery phase started (its tagged rows): counted by tag, not by
    /// the timeline's whole seconds, whose first one also holds the overload's last requests.
    pub sent: u64,
    /// The lowest step's window (unix ms): the baseline.
    pub baseline: (i64, i64),
    /// When the overload began (unix ms): the first failing step's start, else the top step's.
    pub overload_ms: i64,
    pub slo_p95_ms: f64,
    /// The half-open and connecting readings at the drop ([`Drain`]), when sampled.
    pub handshakes: (Option<u64>, Option<u64>),
}

/// The recovery figures of a run with a recovery phase.
pub fn recovery(inp: &RecoveryInput<'_>) -> Recovery {
    let (drop, end) = inp.span;
    let window_s = ((end - drop) as f64 / 1000.0).max(0.0);
    let base: Vec<&FpmSample> = within(inp.fpm, inp.baseline.0, inp.baseline.1).collect();
    let baseline_queue = base.iter().map(|s| s.status.listen_queue).max();
    let baseline_active = base.iter().map(|s| s.status.active_processes).max();
    let peak_queue = within(inp.fpm, inp.overload_ms, end + 1)
        .map(|s| s.status.listen_queue)
        .max();
    let drained_s = match (baseline_queue, baseline_active) {
        (Some(q), Some(a)) => within(inp.fpm, drop, end + 1)
            .find(|s| s.status.listen_queue <= q && s.status.active_processes <= a)
            .map(|s| (s.t - drop) as f64 / 1000.0),
        _ => None,
    };
    let p95s: Vec<(i64, Option<f64>)> = seconds(inp.timeline, drop, end + 1)
        .map(|(sec, s)| (sec, s.hist.as_ref().map(|h| h.quantile_ms(0.95))))
        .collect();
    let p95_back_s = p95s
        .windows(P95_BACK_RUN_S)
        .find(|w| {
            w.iter()
                .all(|(_, p)| p.is_some_and(|p| p <= inp.slo_p95_ms))
        })
        .map(|w| ((w[0].0 * 1000 - drop) as f64 / 1000.0).max(0.0));
    let (accepted, ok) = wasted_window(inp, end);
    // n requests at a steady rate span n - 1 intervals
    let sent_per_s = if window_s > 0.0 {
        inp.sent.saturating_sub(1) as f64 / window_s
    } else {
        0.0
    };
    Recovery {
        drop_ms: drop,
        window_s,
        sent_per_s,
        baseline_queue,
        baseline_active,
        peak_queue,
        drained_s,
        p95_back_s,
        p95_at_drop_ms: p95s.first().and_then(|x| x.1),
        p95_at_end_ms: p95s.iter().rev().find_map(|x| x.1),
        fpm_accepted: accepted,
        ok,
        wasted: accepted.map(|a| a as i64 - ok as i64),
        drain: drain(inp, baseline_queue.unwrap_or(0), sent_per_s),
    }
}

/// The mechanism's drain ([`Drain`]); `None` without two php-fpm samples in the overload.
fn drain(inp: &RecoveryInput<'_>, base_queue: u64, sent_per_s: f64) -> Option<Drain> {
    let (drop, end) = inp.span;
    let over: Vec<&FpmSample> = within(inp.fpm, inp.overload_ms, drop + 1).collect();
    let (a, b) = (over.first()?, over.last()?);
    let span_s = (b.t - a.t) as f64 / 1000.0;
    if span_s <= 0.0 {
        return None;
    }
    let accept_per_s = b
        .status
        .accepted_conn
        .saturating_sub(a.status.accepted_conn) as f64
        / span_s;
    let queue = b.status.listen_queue.saturating_sub(base_queue);
    let (half_open, connecting) = inp.handshakes;
    let net = accept_per_s - sent_per_s;
    let phase: Vec<i64> = within(inp.fpm, drop, end + 1).map(|s| s.t).collect();
    let period_s = phase.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as f64 / 1000.0;
    let waiting = queue + half_open.unwrap_or(0);
    let min_s = (net > 0.0).then(|| waiting as f64 / net);
    let max_s = match (connecting, min_s) {
        (Some(c), Some(_)) if half_open.is_some() => Some((waiting + c) as f64 / net + period_s),
        _ => None,
    };
    Some(Drain {
        accept_per_s,
        queue,
        half_open,
        connecting,
        min_s,
        max_s,
    })
}

/// php-fpm's accepted requests between the first sample at or after the overload's start and
/// the last sample up to the phase's end, and the successes completed between the same two
/// instants (to 100 ms: whole seconds would add up to two seconds of successes the count of
/// accepted requests does not span).
fn wasted_window(inp: &RecoveryInput<'_>, end: i64) -> (Option<u64>, u64) {
    let first = inp.fpm.iter().find(|s| s.t >= inp.overload_ms);
    let last = inp.fpm.iter().rev().find(|s| s.t <= end + 1000);
    match (first, last) {
        (Some(a), Some(b)) if b.t > a.t => {
            let acc = b
                .status
                .accepted_conn
                .saturating_sub(a.status.accepted_conn);
            (Some(acc), inp.timeline.ok_and_drops(a.t, b.t).0)
        }
        _ => (None, 0),
    }
}

/// The samples taken in `[from, to)` (unix ms).
fn within(fpm: &[FpmSample], from: i64, to: i64) -> impl Iterator<Item = &FpmSample> {
    fpm.iter().filter(move |s| s.t >= from && s.t < to)
}

/// The timeline's seconds overlapping `[from, to)` (unix ms), with their unix second.
fn seconds(
    t: &Timeline,
    from: i64,
    to: i64,
) -> impl Iterator<Item = (i64, &super::k6csv::SecondAgg)> {
    let (a, b) = (from.div_euclid(1000), (to - 1).div_euclid(1000));
    t.secs
        .iter()
        .enumerate()
        .map(move |(i, s)| (t.base_s + i as i64, s))
        .filter(move |(sec, _)| *sec >= a && *sec <= b)
}

#[cfg(test)]
mod tests;
