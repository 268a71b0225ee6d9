//! The trigger block of a run with `load.trigger` (issue 44): what the trigger did, whether
//! goodput came back within the stated time (recovered) or not (stuck), the rates before and at
//! the step's end with the requests per user arrival; and the per-class counters of every step
//! (200, 429, 5xx, 502-504, no answer), which a drop-profile run shows without a trigger too.
use super::cells::block;
use crate::analyze::model::{Report, StepReport};
use crate::analyze::trigger::{Outcome, Rates, TriggerReport};
use crate::report::table::{Block, Table};

/// The block, for a run with a trigger.
pub fn trigger_block(r: &Report) -> Option<Block> {
    let t = r.trigger.as_ref()?;
    let mut b = block("Trigger and recovery");
    b.lines.push(what(t));
    b.lines.push(verdict(t));
    let mut tab = Table::new([
        "span",
        "from s",
        "to s",
        "ok/s",
        "sent/s",
        "arrivals/s",
        "req/arrival",
    ]);
    tab.left = vec![0];
    for (name, x) in [("before the trigger", t.before), ("the step's end", t.end)] {
        if let Some(x) = x {
            tab.push(row(name, &x));
        }
    }
    b.table = Some(tab);
    Some(b)
}

fn what(t: &TriggerReport) -> String {
    let e = &t.event;
    let did = match (e.kind.as_str(), e.cpus_left) {
        ("cpu", Some(c)) => format!("a CPU cut on `{}` to {c:.2} CPUs", e.role),
        ("cpu", None) => format!("a CPU cut on `{}`", e.role),
        _ => "a flush of the front's cache".to_string(),
    };
    let held = match (e.applied_at, e.lifted_at) {
        (Some(a), Some(l)) if e.kind == "cpu" => {
            format!(" for {:.1} s", (l - a).num_milliseconds() as f64 / 1000.0)
        }
        _ => String::new(),
    };
    let err = e
        .error
        .as_deref()
        .map(|x| format!(" ({x})"))
        .unwrap_or_default();
    format!(
        "trigger: {did}{held} in the {} arrivals/s step, then the same offered rate{err}",
        e.step_target
    )
}

fn verdict(t: &TriggerReport) -> String {
    let within = t.event.recover_within_s;
    match t.outcome {
        Outcome::NotApplicable => format!(
            "outcome: n/a: {} (its claims are n/a, not failed)",
            t.why_na.as_deref().unwrap_or("?")
        ),
        Outcome::Recovered => format!(
            "outcome: RECOVERED: goodput back at 90 % of its level before the trigger {:.0} s after it ended and held to the step's end (stated: within {within:.0} s)",
            t.back_after_s.unwrap_or(0.0)
        ),
        Outcome::Stuck => {
            let back = t.back_after_s.map_or_else(
                || "not back by the step's end".to_string(),
                |s| format!("back only {s:.0} s after it ended"),
            );
            let end = t.end.map_or_else(String::new, |e| {
                format!(
                    "; at the step's end {:.1} ok/s ({:.0} % of before) with {:.2} requests per arrival",
                    e.ok_per_s,
                    t.goodput_ratio.unwrap_or(f64::NAN) * 100.0,
                    e.amplification
                )
            });
            format!("outcome: STUCK: goodput {back} (stated: within {within:.0} s){end}")
        }
    }
}

fn row(name: &str, x: &Rates) -> Vec<String> {
    vec![
        name.into(),
        format!("{:.0}", x.from_s),
        format!("{:.0}", x.to_s),
        format!("{:.1}", x.ok_per_s),
        format!("{:.1}", x.sent_per_s),
        format!("{:.1}", x.arrivals_per_s),
        format!("{:.2}", x.amplification),
    ]
}

/// A step's responses by class: 200, 429, 5xx (502-504 among them), no answer (status 0:
/// timeout or reset), other (404: a cached failure, ...).
pub fn classes(s: &StepReport) -> [u64; 6] {
    let mut c = [0u64; 6];
    for (status, n) in &s.non200 {
        match status.parse::<u16>().unwrap_or(0) {
            429 => c[1] += n,
            x @ 500..=599 => {
                c[2] += n;
                if (502..=504).contains(&x) {
                    c[3] += n;
                }
            }
            0 => c[4] += n,
            _ => c[5] += n,
        }
    }
    c[0] = s.requests.saturating_sub(s.non200.values().sum());
    c
}

/// The per-class counters of every step, for a run of drop.js's journeys or with a trigger
/// (`report.json`'s steps hold every run's `non200`).
pub fn classes_block(r: &Report) -> Option<Block> {
    if r.trigger.is_none() && !r.journeys {
        return None;
    }
    let mut b = block("Responses by class");
    b.lines.push("per step, by the step its journey started in; \"no answer\" is status 0 (the client's timeout, or a reset)".into());
    let mut tab = Table::new(["step", "200", "429", "5xx", "502-504", "no answer", "other"]);
    tab.left = vec![0];
    for s in &r.steps {
        let mut row = vec![s.name.clone()];
        row.extend(classes(s).iter().map(u64::to_string));
        tab.push(row);
    }
    b.table = Some(tab);
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded drop-stuck run (tests/fixtures/drop-map): drop.js's journeys, with a trigger.
    fn drop_run() -> Report {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/drop-map/runs/drop-stuck/20261206T232147Z-r1/report.json"
        );
        crate::rundir::report::parse(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// The responses by class show for drop.js's journeys with a trigger or without one (the
    /// drop profile has none), and for no other run; each row adds up to the step's requests.
    #[test]
    fn the_classes_show_for_journeys_with_or_without_a_trigger() {
        let mut r = drop_run();
        assert!(classes_block(&r).is_some(), "with its trigger");
        r.trigger = None;
        assert!(
            classes_block(&r).is_none(),
            "neither journeys nor a trigger"
        );
        r.journeys = true;
        let t = classes_block(&r)
            .expect("journeys without a trigger")
            .table
            .unwrap();
        assert_eq!(t.rows.len(), r.steps.len());
        for (row, s) in t.rows.iter().zip(&r.steps) {
            let n = |i: usize| row[i].parse::<u64>().unwrap();
            // 200 + 429 + 5xx + no answer + other (502-504 are inside 5xx)
            assert_eq!(n(1) + n(2) + n(3) + n(5) + n(6), s.requests, "{row:?}");
        }
    }
}
