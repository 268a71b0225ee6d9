//! Caveats on the data: the generators' start spread and timestamp resolution, drops, thin
//! p99 tails, cut steps, missing samples, and a host shared with other work.
use crate::analyze::k6csv::K6Data;
use crate::analyze::model::*;

/// Caveats on the k6 input itself, known before the steps are measured.
pub(super) fn input_warnings(source: &Source, k6: &K6Data) -> Vec<String> {
    let mut w = Vec::new();
    let firsts: Vec<Option<i64>> = source
        .generators
        .iter()
        .map(|g| g.first_request_ms)
        .collect();
    if let Some(spread) = crate::analyze::merge::start_spread_ms(&firsts).filter(|s| *s > 100) {
        w.push(format!(
            "the {} load generators' first requests are {spread} ms apart (goal <= 100 ms): the steps' edges are blurred by that much",
            firsts.len()
        ));
    }
    if k6.skipped_rows > 0 {
        w.push(format!(
            "{} row(s) skipped (first on line {}): timestamp before 2000, after 2100, or more than 24 h from the run's other rows",
            k6.skipped_rows,
            k6.first_skipped_line.unwrap_or(0)
        ));
    }
    if k6.second_resolution {
        w.push("timestamps are whole seconds: set K6_CSV_TIME_FORMAT=unix_milli for per-request start times".into());
    }
    w
}

/// Caveats on the generator's health and on what the steps' figures rest on.
pub(super) fn data_warnings(
    steps: &[StepReport],
    k6: &K6Data,
    params: &Params,
    has_samples: bool,
) -> Vec<String> {
    let mut w = Vec::new();
    let first = &steps[0];
    if let Some(t) = k6.first_drop_ms
        && t < super::seconds::end_ms(first.start_ms, first.window_s)
    {
        w.push("iterations dropped from the very first step: the generator (VUs), not the system, limited the load".into());
    }
    if k6.dropped_warmup > 0 {
        w.push(format!(
            "{} iterations dropped during the warm-up scenario",
            k6.dropped_warmup
        ));
    }
    if params.insufficient_vus {
        w.push("k6 logged `Insufficient VUs`: offered load was not generated past that point (criterion 4)".into());
    }
    let thin: Vec<String> = steps
        .iter()
        .filter(|s| s.p99_tail_samples < 50.0)
        .map(|s| format!("{} ({:.0})", s.name, s.p99_tail_samples))
        .collect();
    if !thin.is_empty() {
        w.push(format!(
            "p99 rests on fewer than 50 requests in: {}; hold steps longer for a stable p99",
            thin.join(", ")
        ));
    }
    for s in steps.iter().filter(|s| s.truncated) {
        w.push(format!(
            "step {} was cut short after {:.1} s (k6 stopped): rates use the observed span",
            s.name, s.window_s
        ));
    }
    if !has_samples {
        w.push(
            "no server-side samples: CPU columns and criterion 5 (saturated resource) are empty"
                .into(),
        );
    }
    w
}

/// Caveats when the host was not the lab's alone: other users' processes (named when the
/// procs sampler ran), Docker's plumbing outside the containers, or hypervisor steal.
pub fn host_share_warnings(h: &HostShare) -> Vec<String> {
    let mut w = Vec::new();
    let equation = format!(
        "host busy {:.2} = lab {:.2} + perflab/dockerd {:.2} + steal {} + other {:.2}",
        h.busy_cores,
        h.lab_cores,
        h.harness_cores,
        h.steal_cores.map_or("?".to_string(), |s| format!("{s:.2}")),
        h.other_cores
    );
    let others = h.outside_cores(Consumer::is_other_users);
    if h.outside.is_empty() && h.other_cores > SHARED_CORES {
        w.push(format!(
            "processes outside the lab used {:.2} cores on average during the steps ({equation}): the host was shared, knees may sit lower than on a quiet host",
            h.other_cores
        ));
    } else if others > SHARED_CORES {
        w.push(format!(
            "other users' processes used {others:.2} cores on average during the steps ({}; {equation}): the host was shared, knees may sit lower than on a quiet host",
            h.outside_text(Consumer::is_other_users, 4)
        ));
    }
    let plumbing = |c: Consumer| matches!(c, Consumer::Process(s) if s.is_plumbing());
    let docker = h.outside_cores(plumbing);
    if docker > SHARED_CORES {
        w.push(format!(
            "Docker's plumbing outside the containers used {docker:.2} cores on average during the steps ({}): work for the lab outside its containers' cgroups (docker-proxy copies every byte sent to a published port, fuse-overlayfs serves every file access of the containers); it competes with the app but is not in its CPU per request",
            h.outside_text(plumbing, 3)
        ));
    }
    if let Some(s) = h.steal_cores.filter(|s| *s > 0.05) {
        w.push(format!(
            "the hypervisor stole {:.0} % of a core on average (steal): a noisy VM, expect stalls and run-to-run spread",
            s * 100.0
        ));
    }
    w
}

/// Cores outside the lab above which the host counts as shared.
const SHARED_CORES: f64 = 0.10;
