//! The trigger and the recovery after it (`load.trigger`, issue 44): at a steady rate a CPU
//! cut on a container or a cache flush, then the same offered rate. Did goodput come back to
//! its pre-trigger level within the stated time (recovered), or stay low with the load still
//! amplified (stuck)? Pure: the per-second rows of the run and the trigger as it happened in,
//! the outcome out.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::SecondRow;

/// Goodput is back once it holds at least this share of its pre-trigger level ...
pub const BACK_SHARE: f64 = 0.9;
/// ... in the mean of every this many seconds from then to the step's end (a burst of late
/// answers right after the trigger that collapses again is not a recovery).
pub const BACK_RUN_S: usize = 5;
/// The baseline is steady when goodput is at least this share of the arrivals (a run whose
/// system did not serve its rate before the trigger has nothing to recover to).
pub const STEADY_SHARE: f64 = 0.95;
/// The seconds after the step's start left out of the baseline (the jump to the rate).
pub const SETTLE_S: i64 = 2;
/// The figures at the step's end are over its last this many seconds (fewer when the trigger
/// ended less than this plus half the stated time before the step's end).
pub const END_S: i64 = 10;

/// The trigger as it happened (the orchestrator's clock), in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerEvent {
    /// `cpu` or `flush`.
    pub kind: String,
    pub planned_at: DateTime<Utc>,
    /// When it was applied and, for a CPU cut, lifted (None: it did not happen).
    pub applied_at: Option<DateTime<Utc>>,
    pub lifted_at: Option<DateTime<Utc>>,
    /// The CPUs a cut left the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_left: Option<f64>,
    /// The container it acted on (by role).
    pub role: String,
    /// The step it fell in: its rate (arrivals/s) and its hold (unix ms).
    pub step_target: u32,
    pub hold_start_ms: i64,
    pub hold_end_ms: i64,
    /// The stated time to recover within (s).
    pub recover_within_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where the run ended up after its trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Goodput back at its pre-trigger level within the stated time.
    Recovered,
    /// Not back within the stated time.
    Stuck,
    /// No steady state before the trigger, or the trigger did not happen: no claim either way.
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Recovered => "recovered",
            Outcome::Stuck => "stuck",
            Outcome::NotApplicable => "n/a",
        }
    }
}

/// Rates over a span of seconds: answered 200 (goodput), requests started (retries
/// included), arrivals (the step's rate less its dropped iterations), and requests per
/// arrival.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub from_s: f64,
    pub to_s: f64,
    pub ok_per_s: f64,
    pub sent_per_s: f64,
    pub arrivals_per_s: f64,
    pub amplification: f64,
}

/// The report's trigger section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerReport {
    pub event: TriggerEvent,
    pub outcome: Outcome,
    /// Why the outcome is n/a.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_na: Option<String>,
    /// Before the trigger, from the step's start (after `SETTLE_S`), s relative to the trigger.
    pub before: Option<Rates>,
    /// The step's last `END_S` seconds, from half the stated time after the trigger at the
    /// earliest.
    pub end: Option<Rates>,
    /// Seconds from the trigger's end until goodput held `BACK_SHARE` of its level before in
    /// every `BACK_RUN_S` seconds from then to the step's end (None: not within the step).
    pub back_after_s: Option<f64>,
    /// end goodput / goodput before.
    pub goodput_ratio: Option<f64>,
}

/// The rates over the rows of unix seconds `[from, to)`; None when empty.
fn rates(rows: &[SecondRow], from: i64, to: i64, rate: f64, t0: i64) -> Option<Rates> {
    let inside: Vec<&SecondRow> = rows.iter().filter(|r| r.t >= from && r.t < to).collect();
    if inside.is_empty() {
        return None;
    }
    let n = inside.len() as f64;
    let sum = |f: fn(&SecondRow) -> u32| inside.iter().map(|r| f64::from(f(r))).sum::<f64>() / n;
    let arrivals = (rate - sum(|r| r.dropped)).max(0.0);
    let sent = sum(|r| r.started);
    Some(Rates {
        from_s: (from - t0) as f64,
        to_s: (to - t0) as f64,
        ok_per_s: sum(|r| r.ok),
        sent_per_s: sent,
        arrivals_per_s: arrivals,
        amplification: if arrivals > 0.0 {
            sent / arrivals
        } else {
            f64::NAN
        },
    })
}

/// The first second from `from` on whose every `BACK_RUN_S`-second mean of goodput up to
/// `end` is at least `level`; None when the last such window is under it.
fn back_from(rows: &[SecondRow], from: i64, end: i64, level: f64) -> Option<i64> {
    let ok_at = |t: i64| {
        rows.iter()
            .find(|r| r.t == t)
            .map_or(0.0, |r| f64::from(r.ok))
    };
    let n = BACK_RUN_S as i64;
    let mean = |s: i64| (s..s + n).map(ok_at).sum::<f64>() / n as f64;
    let last = end - n;
    if last < from || mean(last) < level {
        return None;
    }
    let failing = (from..=last).rev().find(|s| mean(*s) < level);
    Some(failing.map_or(from, |s| s + 1))
}

/// The outcome of a run's trigger over its per-second rows (`Report::timeline`).
pub fn judge(event: &TriggerEvent, rows: &[SecondRow]) -> TriggerReport {
    let na = |why: String, before: Option<Rates>| TriggerReport {
        event: event.clone(),
        outcome: Outcome::NotApplicable,
        why_na: Some(why),
        before,
        end: None,
        back_after_s: None,
        goodput_ratio: None,
    };
    let (Some(applied), None) = (event.applied_at, &event.error) else {
        let why = event
            .error
            .clone()
            .unwrap_or_else(|| "it was never applied".into());
        return na(
            format!("the trigger did not happen as planned: {why}"),
            None,
        );
    };
    let t0 = applied.timestamp();
    let lifted = event.lifted_at.unwrap_or(applied).timestamp();
    let rate = f64::from(event.step_target);
    let start = event.hold_start_ms.div_euclid(1000) + SETTLE_S;
    let end = event.hold_end_ms.div_euclid(1000);
    let before = rates(rows, start, t0, rate, t0);
    let Some(b) = before.filter(|b| b.to_s - b.from_s >= 3.0) else {
        return na("fewer than 3 s of load before the trigger".into(), before);
    };
    if b.ok_per_s < STEADY_SHARE * b.arrivals_per_s {
        return na(
            format!(
                "no steady state before the trigger: {:.1} ok/s of {:.1} arrivals/s (under {:.0} %)",
                b.ok_per_s,
                b.arrivals_per_s,
                STEADY_SHARE * 100.0
            ),
            before,
        );
    }
    let back = back_from(rows, lifted, end, BACK_SHARE * b.ok_per_s).map(|s| (s - lifted) as f64);
    // the step's last seconds, none of them in the first half of the stated time
    let settled = lifted + (event.recover_within_s / 2.0).ceil() as i64;
    let end_rates = rates(rows, (end - END_S).max(settled), end, rate, t0);
    let recovered = back.is_some_and(|s| s <= event.recover_within_s);
    TriggerReport {
        event: event.clone(),
        outcome: if recovered {
            Outcome::Recovered
        } else {
            Outcome::Stuck
        },
        why_na: None,
        before,
        end: end_rates,
        back_after_s: back,
        goodput_ratio: end_rates.map(|e| e.ok_per_s / b.ok_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: i64, ok: u32, started: u32) -> SecondRow {
        SecondRow {
            t,
            rel: 0,
            done: started,
            ok,
            started,
            non200: started - ok.min(started),
            p50_ms: 1.0,
            p95_ms: 1.0,
            inflight: 0.0,
            dropped: 0,
            vus: None,
            cpu_pct: Default::default(),
            psi_pct: None,
            dockerd_pct: None,
        }
    }

    fn event(applied: i64, lifted: i64) -> TriggerEvent {
        let at = |s: i64| DateTime::from_timestamp(s, 0);
        TriggerEvent {
            kind: "cpu".into(),
            planned_at: at(applied).unwrap(),
            applied_at: at(applied),
            lifted_at: at(lifted),
            cpus_left: Some(0.1),
            role: "api".into(),
            step_target: 40,
            hold_start_ms: 1_000_000,
            hold_end_ms: 1_060_000,
            recover_within_s: 15.0,
            error: None,
        }
    }

    /// 40 arrivals/s from second 1000 to 1060, the trigger at 1020 for 5 s; after it goodput
    /// comes back at `back` (or never) and requests run at `amp` per arrival.
    fn run(back: Option<i64>, amp: u32) -> Vec<SecondRow> {
        (1000..1060)
            .map(|t| match t {
                t if t < 1020 => row(t, 40, 40),
                t if back.is_some_and(|b| t >= b) => row(t, 40, 40),
                t => row(t, 3, 40 * amp),
            })
            .collect()
    }

    #[test]
    fn goodput_back_within_the_stated_time_is_recovered_and_a_low_one_stuck() {
        let r = judge(&event(1020, 1025), &run(Some(1030), 1));
        assert_eq!(r.outcome, Outcome::Recovered);
        assert_eq!(r.back_after_s, Some(5.0));
        assert_eq!(r.before.unwrap().amplification, 1.0);
        let r = judge(&event(1020, 1025), &run(Some(1045), 1));
        assert_eq!((r.outcome, r.back_after_s), (Outcome::Stuck, Some(20.0)));
        let r = judge(&event(1020, 1025), &run(None, 4));
        assert_eq!((r.outcome, r.back_after_s), (Outcome::Stuck, None));
        let e = r.end.unwrap();
        assert_eq!((e.amplification, e.ok_per_s), (4.0, 3.0));
        assert!((r.goodput_ratio.unwrap() - 3.0 / 40.0).abs() < 1e-9);
    }

    /// A burst of late answers right after the cut, then goodput collapses: stuck.
    #[test]
    fn a_burst_after_the_trigger_that_collapses_again_is_stuck() {
        let mut rows = run(None, 6);
        for r in rows.iter_mut().filter(|r| (1025..1031).contains(&r.t)) {
            r.ok = 70;
        }
        let r = judge(&event(1020, 1025), &rows);
        assert_eq!((r.outcome, r.back_after_s), (Outcome::Stuck, None));
        assert_eq!(r.end.unwrap().amplification, 6.0);
    }

    #[test]
    fn no_steady_state_or_no_trigger_is_not_applicable() {
        let mut rows = run(None, 4);
        for r in rows.iter_mut().take(20) {
            r.ok = 20;
        }
        let r = judge(&event(1020, 1025), &rows);
        assert_eq!(r.outcome, Outcome::NotApplicable);
        assert!(
            r.why_na
                .unwrap()
                .starts_with("no steady state before the trigger: 20.0 ok/s of 40.0")
        );
        let mut e = event(1020, 1025);
        e.applied_at = None;
        e.error = Some("update container: 500".into());
        let r = judge(&e, &run(None, 1));
        assert_eq!(r.outcome, Outcome::NotApplicable);
        assert!(r.why_na.unwrap().contains("update container: 500"));
    }
}
