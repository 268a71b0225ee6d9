//! The block of a run's timed actions (`load.actions`: a php-fpm reload during the collapse):
//! when each ran and how it ended, then what followed it: php-fpm's backlog and busy workers
//! before and after, whether its counters restarted, and the answers around it.
use super::cells::{block, utc};
use crate::analyze::actions::{ActionEffect, EFFECT_WINDOW_S};
use crate::analyze::model::Report;
use crate::report::table::Block;

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |n| n.to_string())
}

fn ran(a: &ActionEffect) -> String {
    match (a.ran, a.exit_code, &a.error) {
        (true, Some(0), _) => "ran, exit 0".into(),
        (true, Some(c), _) => format!("ran, exit {c}"),
        (true, None, _) => "ran, exit code unknown".into(),
        (false, _, Some(e)) => format!("did not run: {e}"),
        (false, _, None) => "did not run".into(),
    }
}

pub fn actions_block(r: &Report) -> Option<Block> {
    if r.actions.is_empty() {
        return None;
    }
    let mut b = block("Timed actions");
    for a in &r.actions {
        b.lines.push(format!(
            "{} at {} UTC in {}: `{}`: {}",
            a.name,
            utc(a.at_ms.div_euclid(1000)),
            a.role,
            a.exec.join(" "),
            ran(a)
        ));
        b.lines.push(format!(
            "  php-fpm's listen queue {} at the last sample before, {} at the first after (lowest within {EFFECT_WINDOW_S} s: {}); active processes {} -> {}; its counters restarted (accepted conn fell): {}",
            n(a.queue_before),
            n(a.queue_after),
            n(a.queue_min_after),
            n(a.active_before),
            n(a.active_after),
            a.fpm_restarted.map_or("no samples", |r| if r { "yes" } else { "no" }),
        ));
        if a.kernel_queue_before.is_some() || a.kernel_queue_after.is_some() {
            b.lines.push(format!(
                "  the kernel's accept queue of php-fpm's socket (fpm_net, Recv-Q) {} before, {} after",
                n(a.kernel_queue_before),
                n(a.kernel_queue_after)
            ));
        }
        b.lines.push(format!(
            "  answers in the {EFFECT_WINDOW_S} s before / after: {} / {} not 200, {} / {} successful",
            a.non200_before, a.non200_after, a.ok_before, a.ok_after
        ));
    }
    Some(b)
}
