//! Coordinated omission shown by a pause (`load.pause`, `demo-pause`): the open load's p99,
//! the closed twin's p99, and the closed twin corrected from its intended schedule
//! (`LatencyHist::corrected`), beside the expected p99 ~ P - 0.01 D.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::hist::LatencyHist;
use super::model::StepReport;

/// One freeze of the app as it happened (from the orchestrator's clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Freeze {
    /// The load it froze (`measured`, `closed`).
    pub load: String,
    pub planned_at: DateTime<Utc>,
    /// When the engine confirmed the freeze and the thaw (None: it did not happen).
    pub frozen_at: Option<DateTime<Utc>>,
    pub thawed_at: Option<DateTime<Utc>>,
    /// Why it did not happen as planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Freeze {
    /// Seconds the app stayed frozen.
    pub(crate) fn frozen_s(&self) -> Option<f64> {
        let (a, b) = (self.frozen_at?, self.thawed_at?);
        Some((b - a).num_microseconds()? as f64 / 1e6)
    }
}

/// One side of the comparison: a step's p50/p99 over all its requests, how many there were.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub requests: u64,
    pub ok_per_s: f64,
    pub dropped: u64,
}

impl Side {
    pub(crate) fn of(s: &StepReport) -> Side {
        Side {
            p50_ms: s.p50_ms,
            p99_ms: s.p99_ms,
            requests: s.requests,
            ok_per_s: s.ok_per_s,
            dropped: s.dropped,
        }
    }
}

/// The three p99s side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Omission {
    /// P (s) and D (s).
    pub pause_s: f64,
    pub hold_s: u32,
    /// The open load's rate (rps) and the closed twin's VUs and think time (s).
    pub rate: u32,
    pub closed_vus: u32,
    pub think_time_s: f64,
    /// P - 0.01 D (ms): what an open load measures from the intended send times.
    pub expected_p99_ms: f64,
    pub open: Side,
    pub closed: Side,
    /// The closed twin corrected: its latencies through `record_correct(v, interval)`.
    pub corrected_p99_ms: f64,
    pub corrected_requests: u64,
    /// The closed model's intended per-VU interval: think time + the closed run's own p50
    /// (the service time as its VUs saw it outside the pause), in ms.
    pub expected_interval_ms: f64,
    /// The freezes as they happened.
    pub freezes: Vec<Freeze>,
}

/// What the closed twin's inputs give: its step's report and the latencies of that step.
pub(crate) struct ClosedTwin<'a> {
    pub step: &'a StepReport,
    pub hist: &'a LatencyHist,
    pub vus: u32,
    pub think_time_s: f64,
}

/// The p99 an open load should show with the pause of `pause_s` (P) the only slow time in a
/// step held `hold_s` (D): the slowest 1 % of D seconds of arrivals are the first ones of the
/// pause, so p99 ~ P - 0.01 D (in ms).
pub(crate) fn expected_p99_ms(pause_s: f64, hold_s: u32) -> f64 {
    ((pause_s - 0.01 * f64::from(hold_s)) * 1000.0).max(0.0)
}

/// The comparison from the open step, the closed twin, the plan's P and D.
pub(crate) fn compare(
    open: &StepReport,
    closed: ClosedTwin<'_>,
    pause_s: f64,
    hold_s: u32,
    freezes: Vec<Freeze>,
) -> Omission {
    let interval_ms = closed.think_time_s * 1000.0 + closed.step.p50_ms;
    let corrected = closed.hist.corrected(interval_ms);
    Omission {
        pause_s,
        hold_s,
        rate: open.target,
        closed_vus: closed.vus,
        think_time_s: closed.think_time_s,
        expected_p99_ms: expected_p99_ms(pause_s, hold_s),
        open: Side::of(open),
        closed: Side::of(closed.step),
        corrected_p99_ms: corrected.quantiles_ms(&[0.99])[0],
        corrected_requests: corrected.count(),
        expected_interval_ms: interval_ms,
        freezes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed VU's view of a D-second step at one request every `interval` ms of service
    /// `service` ms, with the server frozen for `pause` ms: one request waits the pause.
    fn closed_vu(d_ms: f64, interval: f64, service: f64, pause: f64) -> LatencyHist {
        let mut h = LatencyHist::new();
        let mut t = 0.0;
        let mut stalled = false;
        while t < d_ms {
            let lat = if !stalled && t >= d_ms / 2.0 {
                stalled = true;
                service + pause
            } else {
                service
            };
            h.record_ms(lat);
            t += lat + (interval - service);
        }
        h
    }

    #[test]
    fn correction_recovers_what_an_open_load_would_have_measured() {
        // 16 VUs, 40 ms service + 40 ms think, 30 s, 1.4 s pause: wrk2's shape.
        let mut h = LatencyHist::new();
        for _ in 0..16 {
            h.add(&closed_vu(30_000.0, 80.0, 40.0, 1400.0));
        }
        let raw = h.quantiles_ms(&[0.99])[0];
        assert!(raw < 50.0, "uncorrected p99 hides the pause: {raw}");
        let c = h.corrected(80.0);
        let p99 = c.quantiles_ms(&[0.99])[0];
        // expected ~ P - 0.01 D = 1.1 s (plus the service time)
        assert!((1000.0..=1300.0).contains(&p99), "corrected p99 {p99}");
        // each stalled VU adds (1440 - 80) / 80 = 17 requests it would have sent
        assert_eq!(c.count() - h.count(), 16 * 17);
        assert!(c.sum_ms > h.sum_ms);
    }

    #[test]
    fn the_expected_p99_is_the_pause_less_a_hundredth_of_the_step() {
        // wrk2's README: P 1.4 s in D 30 s
        assert!((expected_p99_ms(1.4, 30) - 1100.0).abs() < 1e-6);
        // a pause shorter than 1 % of the step hides in the p99
        assert_eq!(expected_p99_ms(0.2, 30), 0.0);
    }

    #[test]
    fn correction_leaves_a_steady_run_alone() {
        let mut h = LatencyHist::new();
        for _ in 0..1000 {
            h.record_ms(40.0);
        }
        let c = h.corrected(80.0);
        assert_eq!(c.count(), 1000);
        assert!((c.quantiles_ms(&[0.99])[0] - 40.0).abs() < 0.1);
    }

    #[test]
    fn a_hostile_interval_stays_bounded() {
        let mut h = LatencyHist::new();
        h.record_ms(600_000.0);
        let c = h.corrected(0.0);
        assert!(c.count() <= 10_001, "{}", c.count());
        let c = h.corrected(f64::NAN);
        assert!(c.count() <= 10_001);
    }

    #[test]
    fn freeze_length_from_its_instants() {
        let t = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let f = Freeze {
            load: "measured".into(),
            planned_at: t,
            frozen_at: Some(t),
            thawed_at: Some(t + chrono::Duration::milliseconds(1404)),
            error: None,
        };
        assert_eq!(f.frozen_s(), Some(1.404));
    }
}
