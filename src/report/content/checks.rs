//! The blocks checking the measurement: Little's law and stability, the ceilings, the closed
//! model's coordinated omission, the abort lag, the cross-check with k6's summary, and where
//! the host's CPU went.
use super::cells::{block, f1, ms, opt};
use crate::analyze::fmt_ms;
use crate::analyze::model::*;
use crate::report::table::Block;
use crate::report::table::Table;

pub fn checks_blocks(r: &Report) -> Vec<Block> {
    let c = &r.checks;
    let mut out = vec![little_block(c), ceilings_block(c)];
    out.extend(closed_block(r));
    out.extend(abort_block(c));
    out.push(cross_check_block(c));
    out.extend(host_block(c));
    out
}

fn little_block(c: &Checks) -> Block {
    let mut b = block("Little's law (L = λW) and stability");
    let mut t = Table::new([
        "step",
        "λ/s",
        "W ms",
        "λW",
        "L in-flight",
        "diff",
        "L vus",
        "W=Lmax/λ",
        "1st half",
        "2nd half",
        "stability",
    ]);
    for (l, s) in c.little.iter().zip(&c.stability) {
        t.push(vec![
            l.step.clone(),
            f1(l.lambda_per_s),
            ms(l.w_s * 1000.0),
            format!("{:.2}", l.lambda_w),
            format!("{:.2}", l.l_inflight),
            if l.stable {
                format!("{:.1}%", l.diff * 100.0)
            } else {
                "(unstable)".into()
            },
            opt(l.l_vus, |v| format!("{v:.1}")),
            opt(l.w_from_vus_s, |v| format!("{:.3}s", v)),
            format!("{:.2}", s.inflight_first_half),
            format!("{:.2}", s.inflight_second_half),
            format!("{:?}", s.verdict).to_lowercase(),
        ]);
    }
    if c.little.iter().any(|l| l.l_app.is_some()) {
        t.headers.insert(7, "L app".into());
        for (row, l) in t.rows.iter_mut().zip(&c.little) {
            row.insert(7, opt(l.l_app, |v| format!("{v:.1}")));
        }
    }
    b.table = Some(t);
    b.notes.push("L in-flight is counted from the request intervals; λW uses the step's mean latency. Little's law is read only where the step is stable (in-flight not growing between the halves of the window, seed 003).".into());
    if let Some(d) = c.drain_s {
        b.notes.push(format!(
            "drain after the last step: {d:.1} s until the last response{}",
            if d > 2.0 {
                " (a long drain: the queue had grown)"
            } else {
                ""
            }
        ));
    }
    b
}

fn ceilings_block(c: &Checks) -> Block {
    let mut b = block("Ceilings");
    if let Some(cc) = &c.cpu_ceiling {
        b.lines.push(format!(
            "CPU ceiling at step {}: {:.0} cores x 1000 / {:.1} ms CPU per ok = {:.0}/s (the knee sits below it: waiting grows as ρ/(1-ρ))",
            cc.step, cc.cores, cc.ms_cpu_per_ok, cc.cpu_ceiling_per_s
        ));
    }
    if let Some(pc) = &c.pool_ceiling {
        b.lines.push(format!(
            "pool ceiling: N / W = {} / {:.3} s = {:.1}/s",
            pc.slots, pc.w_s, pc.ceiling_per_s
        ));
    }
    if b.lines.is_empty() {
        b.lines.push("no CPU or pool ceiling: needs server samples with the app's cores, or the pool size (plan)".into());
    }
    b
}

fn closed_block(r: &Report) -> Option<Block> {
    let c = &r.checks;
    if c.closed.is_empty() {
        return None;
    }
    let mut b = block("Closed model: coordinated omission");
    let mut t = Table::new([
        "step",
        "VUs",
        "nominal/s",
        "achieved/s",
        "missing",
        "R=N/X-Z ms",
    ]);
    for x in &c.closed {
        t.push(vec![
            x.step.clone(),
            x.vus.to_string(),
            f1(x.nominal_per_s),
            f1(x.achieved_per_s),
            format!("{:.0}", x.missing),
            f1(x.implied_r_ms),
        ]);
    }
    b.table = Some(t);
    b.notes.push(format!(
        "nominal = VUs / (R0 + Z) with R0 the first step's mean latency and Z = {} s think time; \"missing\" = requests real users would have sent while VUs waited. The closed model never reports \"broken\", only \"a little slower\".",
        r.params.think_time_s.unwrap_or(0.0)
    ));
    Some(b)
}

fn abort_block(c: &Checks) -> Option<Block> {
    let a = c.abort.as_ref()?;
    let mut b = block("Abort lag");
    b.lines.push(format!(
        "k6 stopped in step {}: its own p95 {} vs the cumulative p95 {} that the guard (p95 < {}) watches.",
        a.step,
        fmt_ms(a.step_p95_ms),
        fmt_ms(a.cumulative_p95_ms),
        fmt_ms(a.threshold_ms)
    ));
    b.lines.push(format!(
        "The cumulative p95 crosses only when bad samples B > G/19: G = {} good so far -> B > {:.0}; B was {}. Read the knee from the per-step rows, not from when k6 stopped.",
        a.good, a.bad_needed, a.bad
    ));
    Some(b)
}

fn cross_check_block(c: &Checks) -> Block {
    let mut b = block("Cross-check with k6's summary");
    if c.cross_checked_steps == 0 {
        b.lines.push("no k6 summary given".into());
    } else if c.cross_check.is_empty() {
        b.lines.push(format!(
            "{} steps: request counts and p50/p95/p99/max agree within 1 % (or 0.5 ms)",
            c.cross_checked_steps
        ));
    } else {
        let mut t = Table::new(["step", "field", "perflab", "k6"]);
        for x in &c.cross_check {
            t.push(vec![
                x.step.clone(),
                x.field.clone(),
                format!("{:.3}", x.ours),
                format!("{:.3}", x.k6),
            ]);
        }
        b.table = Some(t);
    }
    if let Some(k) = c.k6_cpu_max_pct {
        b.lines.push(format!(
            "generator: k6 CPU max {k:.0} % of its core (goal < 80 %)"
        ));
    }
    b
}

/// The host's CPU over the steps and per step: busy = lab + perflab/dockerd + steal + other,
/// and who the other cores were.
fn host_block(c: &Checks) -> Option<Block> {
    let h = c.host_share.as_ref()?;
    let mut b = block("Host CPU");
    b.lines.push(format!(
        "host CPU over the steps (mean cores): busy {:.2} = lab containers {:.2} + perflab/dockerd {:.2} + steal {} + other processes {:.2}",
        h.busy_cores,
        h.lab_cores,
        h.harness_cores,
        h.steal_cores
            .map_or("not sampled".to_string(), |s| format!("{s:.2}")),
        h.other_cores
    ));
    if h.outside.is_empty() {
        // The attribution ran (it sets the irq time) and found nothing worth naming, or it had
        // no processes file to read: two different things to say.
        b.lines.push(match h.irq_cores {
            Some(_) => format!(
                "outside the lab: no process and no interrupt time above {} cores",
                crate::analyze::samples::NEGLIGIBLE_CORES
            ),
            None => {
                let l = crate::rundir::Layout::new("");
                let procs = l.rel(&l.samples(crate::rundir::layout::SampleFile::HostProcs));
                format!("other processes not broken down: the run has no {procs}")
            }
        });
        return Some(b);
    }
    b.lines
        .push(format!("outside the lab: {}", h.outside_text(|_| true, 8)));
    if let Some(irq) = h.irq_cores {
        b.lines.push(format!("softirq + irq on the CPUs: {irq:.2} cores (network receive on the bridge and veths; inside the processes above or not)"));
    }
    if c.host_steps.iter().any(|s| !s.share.outside.is_empty()) {
        let mut t = Table::new([
            "step",
            "busy",
            "lab",
            "perflab/dockerd",
            "steal",
            "other",
            "largest outside the lab",
        ]);
        for s in &c.host_steps {
            let x = &s.share;
            t.push(vec![
                s.step.clone(),
                format!("{:.2}", x.busy_cores),
                format!("{:.2}", x.lab_cores),
                format!("{:.2}", x.harness_cores),
                opt(x.steal_cores, |v| format!("{v:.2}")),
                format!("{:.2}", x.other_cores),
                x.outside_text(|_| true, 3),
            ]);
        }
        b.table = Some(t);
    }
    b.notes.push("Mean cores. Outside the lab = the host's processes not in the run's containers, grouped by name (samples/hostprocs.jsonl); softirq/irq = interrupt time in no process (the rest of \"other\", up to the irq time measured); unattributed = what neither explains (negative: the sources add up to more than the busy time).".into());
    Some(b)
}
