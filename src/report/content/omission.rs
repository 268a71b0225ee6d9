//! The coordinated-omission block of a run with `load.pause` (`demo-pause`): the open load's
//! p99, the closed twin's, the twin corrected from its intended schedule, and P - 0.01 D.
use super::cells::block;
use crate::analyze::fmt_ms;
use crate::analyze::model::Report;
use crate::analyze::omission::Side;
use crate::report::table::Block;
use crate::report::table::Table;

pub fn omission_block(r: &Report) -> Option<Block> {
    let o = r.omission.as_ref()?;
    let mut b = block("Coordinated omission (the app frozen mid-step)");
    let frozen: Vec<String> = (o.freezes.iter())
        .map(|f| match (f.frozen_s(), &f.error) {
            (Some(s), None) => format!("{} {s:.2} s", f.load),
            (_, e) => format!("{} not as planned: {}", f.load, e.as_deref().unwrap_or("?")),
        })
        .collect();
    b.lines.push(format!(
        "P = {:.1} s pause in a D = {} s step; expected p99 from the intended send times ~ P - 0.01 D = {} (wrk2's README: 1.4 s at 2,000 rps gives 1.27 s corrected, 6 ms uncorrected); measured freezes: {}",
        o.pause_s,
        o.hold_s,
        fmt_ms(o.expected_p99_ms),
        if frozen.is_empty() { "none recorded".into() } else { frozen.join(", ") }
    ));
    b.lines.push(format!(
        "coordinated omission: the closed load's {} VUs waited out the pause instead of sending, so its p99 {} hides it (the pause shows only as fewer requests: {} against {} open); corrected from its intended schedule (one request every {:.0} ms per VU = think time {:.0} ms + its p50) it is {}",
        o.closed_vus,
        fmt_ms(o.closed.p99_ms),
        o.closed.requests,
        o.open.requests,
        o.expected_interval_ms,
        o.think_time_s * 1000.0,
        fmt_ms(o.corrected_p99_ms)
    ));
    let mut t = Table::new(["load", "p99", "p50", "requests", "ok/s", "dropped"]);
    t.left = vec![0];
    let side = |name: String, x: &Side| {
        let (p50, ok) = (fmt_ms(x.p50_ms), format!("{:.1}", x.ok_per_s));
        vec![
            name,
            fmt_ms(x.p99_ms),
            p50,
            x.requests.to_string(),
            ok,
            x.dropped.to_string(),
        ]
    };
    t.push(side(format!("open {} rps", o.rate), &o.open));
    t.push(side(format!("closed {} VUs", o.closed_vus), &o.closed));
    let n = o.corrected_requests.to_string();
    for (name, p99, n) in [
        ("closed, corrected", o.corrected_p99_ms, n),
        ("expected (P - 0.01 D)", o.expected_p99_ms, String::new()),
    ] {
        let blank = String::new;
        t.push(vec![name.into(), fmt_ms(p99), blank(), n, blank(), blank()]);
    }
    b.table = Some(t);
    Some(b)
}
