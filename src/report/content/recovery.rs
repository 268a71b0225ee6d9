//! The recovery block of a run with a recovery phase (`load.recover_rps`): after the drop,
//! how long php-fpm's backlog took to drain, how long until p95 was back under the SLO, and
//! the work php-fpm did for clients that had already been answered or had left.
use super::cells::{block, utc};
use crate::analyze::fmt_ms;
use crate::analyze::model::Report;
use crate::analyze::recovery::P95_BACK_RUN_S;
use crate::report::table::Block;

fn secs(v: Option<f64>, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |s| format!("{s:.0} s"))
}

fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |n| n.to_string())
}

pub fn recovery_block(r: &Report) -> Option<Block> {
    let x = r.recovery.as_ref()?;
    let mut b = block("Recovery after overload");
    b.lines.push(format!(
        "the load dropped at {} UTC to {:.0} requests/s sent, held {:.0} s; php-fpm's listen queue peaked at {} (baseline: at most {} queued and {} active in the lowest step)",
        utc(x.drop_ms.div_euclid(1000)),
        x.sent_per_s,
        x.window_s,
        count(x.peak_queue),
        count(x.baseline_queue),
        count(x.baseline_active),
    ));
    b.lines.push(format!(
        "backlog drained (queue and active back at the baseline): {} after the drop",
        secs(x.drained_s, "not within the phase (or no php-fpm samples)")
    ));
    if let Some(d) = &x.drain {
        b.lines.push(drain_line(d));
    }
    b.lines.push(format!(
        "p95 back under the {} SLO ({P95_BACK_RUN_S} seconds in a row, by completion): {} after the drop (p95 {} in the drop's first second, {} in its last)",
        fmt_ms(r.params.slo_p95_ms),
        secs(x.p95_back_s, "not within the phase"),
        x.p95_at_drop_ms.map_or_else(|| "-".into(), fmt_ms),
        x.p95_at_end_ms.map_or_else(|| "-".into(), fmt_ms),
    ));
    b.lines.push(match (x.fpm_accepted, x.wasted) {
        (Some(a), Some(w)) if w > 0 => format!(
            "work for clients that had given up: php-fpm accepted {a} requests from the overload to the end, and {} successful responses completed meanwhile: about {w} ({:.0} %) ran for a client already answered 504 or gone",
            x.ok,
            if a > 0 { 100.0 * w as f64 / a as f64 } else { 0.0 }
        ),
        (Some(a), Some(w)) => format!(
            "work for clients that had given up: none: php-fpm accepted {a} requests from the overload to the end, and {} successful responses completed meanwhile ({w}: the count is exact only to a sample period's requests)",
            x.ok
        ),
        _ => "work for clients that had given up: no php-fpm samples".into(),
    });
    Some(b)
}

/// What the mechanism predicts for the drain, and from what.
fn drain_line(d: &crate::analyze::recovery::Drain) -> String {
    let waiting = match (d.half_open, d.connecting) {
        (Some(h), Some(c)) => format!(
            "{} queued + {h} half-open on php-fpm's side (+ {c} of nginx's connects still retrying)",
            d.queue
        ),
        _ => format!(
            "{} queued (the connections outside the queue need stack.php.kernel_counters)",
            d.queue
        ),
    };
    let bounds = match (d.min_s, d.max_s) {
        (Some(lo), Some(hi)) => format!("{lo:.1}-{hi:.1} s"),
        (Some(lo), None) => format!("at least {lo:.1} s"),
        _ => "never: the arrivals outpace the accept rate".into(),
    };
    format!(
        "the drain predicted from the drop: {waiting}, worked off at php-fpm's {:.1} accepts/s in the overload less the arrivals: {bounds}",
        d.accept_per_s
    )
}
