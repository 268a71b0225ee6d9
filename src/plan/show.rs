//! What `perflab show` prints of a plan: one experiment's settings, timeline, VUs, layout and
//! alignment (text or JSON), and a group's runs in order.
use crate::experiment::{self, Lab, Model, Script, StackSettings};
use crate::plan::Resolved;
use crate::plan::{Alignment, CpuLayout, Plan, Slot, WindowKind};
use std::io::Write;
use std::path::Path;

/// `m:ss` for a number of seconds.
pub(crate) fn mmss(s: u32) -> String {
    format!("{}:{:02}", s / 60, s % 60)
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn stack_line(lab: Lab, s: &StackSettings) -> String {
    let mut parts: Vec<String> = Lab::ALL
        .into_iter()
        .filter_map(|l| crate::lab::descriptor(l).summary(s))
        .collect();
    let mut pg = format!("postgres max_connections {}", s.postgres.max_connections);
    if s.postgres.prewarm {
        pg.push_str(", pg_prewarm before measuring");
    }
    if s.postgres.xact_delta {
        pg.push_str(", xact_commit delta recorded");
    }
    if crate::lab::descriptor(lab).info().uses_pg() {
        parts.push(pg);
    }
    parts.join("; ")
}

/// Write the human view of one planned experiment.
pub(crate) fn render_experiment(
    out: &mut impl Write,
    file: &Path,
    r: &Resolved,
    layout: &Result<CpuLayout, String>,
    alignment: &Alignment,
) -> std::io::Result<()> {
    let e = &r.experiment;
    writeln!(out, "{}  ({} lab)  {}", e.id, e.lab, file.display())?;
    writeln!(out, "  {}", e.description)?;
    writeln!(out, "  article: {}", e.finding)?;
    if let Some(refr) = &e.reference {
        writeln!(out, "  figures: {refr}")?;
    }
    if let Some(n) = &e.notes {
        writeln!(out, "  note:    {n}")?;
    }
    writeln!(out)?;
    writeln!(out, "stack     {}", stack_line(e.lab, &e.stack))?;
    render_load(out, r)?;
    writeln!(out)?;
    render_timeline(out, &r.plan)?;
    render_cpus(out, layout)?;
    render_align(out, &r.plan, alignment)?;
    for w in &r.warnings {
        writeln!(out, "note      {}: {}", w.field, w.message)?;
    }
    Ok(())
}

/// The script, model, SLO, steps, quick scaling, abort rule and VUs of a plan.
fn render_load(out: &mut impl Write, r: &Resolved) -> std::io::Result<()> {
    let p = &r.plan;
    let l = &r.experiment.load;
    let script = match p.script {
        Script::Stepped if p.drop.is_some() => "drop.js",
        Script::Stepped => "stepped.js",
        Script::Breakpoint => "breakpoint.js",
    };
    let model = match p.model {
        Model::Open => "open model (arrival rate)".to_string(),
        Model::Closed => format!(
            "closed model (VUs, think time {} s)",
            num(p.think_time_s.unwrap_or(0.0))
        ),
    };
    let mut slo = format!("SLO p95 < {} ms", num(p.slo_p95_ms));
    if let Some(p99) = p.slo_p99_ms {
        slo.push_str(&format!(", p99 < {} ms", num(p99)));
    }
    writeln!(
        out,
        "load      {script}, {model}, GET {}, {slo}, error budget {} %, client timeout {} s",
        p.endpoint,
        num(p.error_budget * 100.0),
        p.timeout_s
    )?;
    let unit = if p.model == Model::Open { "rps" } else { "VUs" };
    let steps = l
        .steps
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let shape = match p.script {
        Script::Stepped => format!("jump + hold {} s each", p.hold_s),
        Script::Breakpoint => {
            let mut s = format!("ramp {} s + hold {} s each", p.ramp_s, p.hold_s);
            if p.warmup_s > 0 {
                s.push_str(&format!(
                    ", after a warm-up of {} s at {} rps",
                    p.warmup_s, p.warmup_rps
                ));
            }
            s
        }
    };
    writeln!(out, "steps     {steps} {unit}; {shape}")?;
    if let Some(d) = &p.drop {
        writeln!(out, "journeys  {}", drop_line(d))?;
    }
    if let Some(t) = &p.trigger {
        writeln!(out, "trigger   {}", trigger_line(t))?;
    }
    if let Some(q) = &p.quick {
        writeln!(
            out,
            "quick     durations x {} (floors: hold {} s, ramp {} s, warm-up {} s); unscaled: hold {} s, ramp {} s, warm-up {} s",
            q.factor,
            q.min_hold_s,
            q.min_ramp_s,
            q.min_warmup_s,
            q.original_hold_s,
            q.original_ramp_s,
            q.original_warmup_s
        )?;
    }
    let abort = abort_line(p);
    writeln!(out, "abort     {abort}")?;
    writeln!(
        out,
        "VUs       pre {} / max {}; {}",
        p.vus.pre_vus, p.vus.max_vus, p.vus.explanation
    )?;
    if let Some(why) = &l.vu_cap_reason {
        writeln!(out, "          the cap is kept on purpose: {why}")?;
    }
    Ok(())
}

/// k6's abort rule of a plan.
fn abort_line(p: &Plan) -> String {
    if p.abort.enabled {
        match p.script {
            Script::Stepped => format!(
                "on: cumulative p95 > {} ms or errors > {} % (delayAbortEval {} s)",
                num(p.abort.p95_ms),
                num(p.abort.error_rate * 100.0),
                p.abort.delay_eval_s
            ),
            Script::Breakpoint => format!(
                "on: hold windows p95 > {} ms or errors > {} % (delayAbortEval {} s from test start)",
                num(p.abort.p95_ms),
                num(p.abort.error_rate * 100.0),
                p.abort.delay_eval_s
            ),
        }
    } else {
        "off (runs every step past the break)".to_string()
    }
}

/// The windows of a plan on k6's clock, then k6's stages and environment.
fn render_timeline(out: &mut impl Write, p: &Plan) -> std::io::Result<()> {
    let unit = if p.model == Model::Open { "rps" } else { "VUs" };
    writeln!(
        out,
        "timeline (offsets from k6 start; only hold windows are measured)"
    )?;
    writeln!(
        out,
        "  {:<8} {:>4} {:>9} {:>6} {:>6}  {:<8} tag",
        "window", "step", "target", "start", "end", "measured"
    )?;
    for w in &p.windows {
        let kind = match w.kind {
            WindowKind::Warmup => "warm-up",
            WindowKind::Ramp => "ramp",
            WindowKind::Hold => "hold",
            WindowKind::Recover => "recovery",
            WindowKind::RampDown => "ramp to 0",
        };
        let wunit = if w.kind == WindowKind::Warmup {
            "rps"
        } else {
            unit
        };
        writeln!(
            out,
            "  {:<8} {:>4} {:>9} {:>6} {:>6}  {:<8} {}",
            kind,
            w.step.map_or("-".to_string(), |s| (s + 1).to_string()),
            format!("{} {wunit}", w.target),
            mmss(w.start_s),
            mmss(w.end_s),
            if w.measured { "yes" } else { "no" },
            w.tag.as_deref().unwrap_or("(untagged)")
        )?;
    }
    writeln!(out, "  total {} ({} s)", mmss(p.total_s), p.total_s)?;
    writeln!(out)?;
    let stages = p
        .stages
        .iter()
        .map(|s| format!("{{target:{},duration:'{}'}}", s.target, s.duration()))
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(out, "k6 stages {stages}")?;
    let env = p
        .k6_env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    writeln!(out, "k6 env    {env}")?;
    writeln!(out)?;
    Ok(())
}

fn render_cpus(out: &mut impl Write, layout: &Result<CpuLayout, String>) -> std::io::Result<()> {
    match layout {
        Ok(lay) => {
            let roles = Slot::ALL
                .iter()
                .map(|r| format!("{} {}", r.as_str(), lay.cpuset(*r)))
                .collect::<Vec<_>>()
                .join(", ");
            writeln!(
                out,
                "CPUs      {roles}  (online {}, {})",
                lay.online, lay.source
            )?;
            for c in &lay.caveats {
                writeln!(out, "  caveat: {c}")?;
            }
        }
        Err(e) => writeln!(out, "CPUs      cannot plan the layout on this host: {e}")?,
    }
    Ok(())
}

fn render_align(out: &mut impl Write, p: &Plan, alignment: &Alignment) -> std::io::Result<()> {
    let first = if p.align_offset_s > 0 {
        "warm-up ends"
    } else {
        "first step starts"
    };
    if alignment.aligned {
        writeln!(
            out,
            "align     if started now: k6 at {} UTC (wait {:.0} s), {first} at {} UTC, ends {} UTC (--no-align starts at once)",
            alignment.k6_start.format("%H:%M:%S"),
            alignment.wait_ms as f64 / 1000.0,
            alignment.first_step_at.format("%H:%M:%S"),
            alignment.end_at.format("%H:%M:%S"),
        )?;
    } else {
        writeln!(out, "align     off: k6 starts at once")?;
    }
    Ok(())
}

/// `perflab show ID --json` of one experiment: its file, the experiment, the overrides, the
/// plan, the CPU layout (or why not), the alignment if started now, and the warnings.
pub(crate) fn json(
    file: &Path,
    r: &Resolved,
    overrides: &[String],
    layout: &Result<CpuLayout, String>,
    alignment: &Alignment,
) -> serde_json::Value {
    serde_json::json!({
        "id": r.experiment.id,
        "kind": "experiment",
        "file": file.display().to_string(),
        "experiment": r.experiment,
        "overrides": overrides,
        "plan": r.plan,
        "cpu_layout": layout.as_ref().ok(),
        "cpu_layout_error": layout.as_ref().err(),
        "alignment_if_started_now": alignment,
        "warnings": r.warnings.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
    })
}

/// `perflab show GROUP`: its members' runs in order with their load time, as text or JSON.
pub(crate) fn group(
    out: &mut impl Write,
    g: &experiment::Group,
    members: &[Resolved],
    json: bool,
) -> anyhow::Result<()> {
    let total: u32 = members.iter().map(|r| r.plan.total_s).sum();
    if json {
        let v = serde_json::json!({
            "id": g.id,
            "kind": "group",
            "description": g.description,
            "members": g.members,
            "runs": members.iter().map(|r| serde_json::json!({
                "id": r.experiment.id, "lab": r.experiment.lab, "total_s": r.plan.total_s,
                "steps": r.experiment.load.steps,
            })).collect::<Vec<_>>(),
            "total_load_s": total,
        });
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{}  (group)\n  {}\n", g.id, g.description)?;
    writeln!(out, "runs, in order, each on a fresh stack:")?;
    for (i, r) in members.iter().enumerate() {
        writeln!(
            out,
            "  {:>2}. {:<12} {:<5} {:>6}  steps {}",
            i + 1,
            r.experiment.id,
            r.experiment.lab.as_str(),
            mmss(r.plan.total_s),
            r.experiment
                .load
                .steps
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )?;
    }
    writeln!(
        out,
        "\nload time {} in total (plus stack start, warm-up requests, minute alignment and teardown per run)",
        mmss(total)
    )?;
    Ok(())
}

/// The drop profile's journeys and clients in one line.
fn drop_line(d: &crate::experiment::DropLoad) -> String {
    let j: Vec<String> = d
        .journeys
        .iter()
        .map(|(k, v)| format!("{k} {v} %"))
        .collect();
    let retry = match d.retry {
        crate::experiment::RetryPolicy::None => "no retries".to_string(),
        r => format!(
            "retry {} up to {} times{}",
            r.as_str(),
            d.max_retries,
            d.retry_budget.map_or(String::new(), |b| format!(
                " within a {} % budget",
                num(b * 100.0)
            ))
        ),
    };
    format!("{}; {retry}", j.join(", "))
}

/// The trigger in one line: what, where, for how long, the stated time.
fn trigger_line(t: &super::trigger::TriggerPlan) -> String {
    let what = match t.kind {
        crate::experiment::TriggerKind::Cpu => format!(
            "CPU cut on `{}` to {} % for {} s",
            t.role,
            num(((1.0 - t.cut) * 1000.0).round() / 10.0),
            num(t.for_s)
        ),
        crate::experiment::TriggerKind::Flush => "cache flush".to_string(),
    };
    format!(
        "{what}, {} s into the {} step's hold (k6 +{} s); recovered when goodput is back within {} s",
        num(t.at_s),
        t.step_target,
        num(t.start_s),
        num(t.recover_within_s)
    )
}
