//! `perflab noise-check`: a 1 ms sleep loop in a thread pinned to an app CPU (the rest of
//! perflab on the other CPUs) while the lab is idle; every wake-up later than the threshold is
//! kept with its UTC time. Writes `stalls.jsonl` (raw late wake-ups), `lateness-hist.tsv`
//! (every wake-up, 1 ms buckets) and the report.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::rundir::tool::{NoiseSummary, ToolArgs, ToolSummary};
use anyhow::{Context, Result};
use chrono::Utc;

use super::noise_report::{self, NoiseSettings, WakeUp};
use super::{Common, ToolRun};
use crate::sample::host;
use crate::session::signals::Interrupt;
use crate::session::{Phase, Stop};

/// Raw late wake-ups, one JSON object a line.
pub(crate) use crate::rundir::layout::STALLS_FILE;
/// Every wake-up's lateness in 1 ms buckets.
pub(crate) const HIST_FILE: &str = "lateness-hist.tsv";

/// What the loop hands back.
struct LoopResult {
    started: chrono::DateTime<Utc>,
    ended: chrono::DateTime<Utc>,
    stalls: Vec<WakeUp>,
    lateness_us: Vec<u32>,
    pin_error: Option<String>,
}

/// Counters the progress printer reads while the loop runs.
#[derive(Default)]
struct Live {
    stalls: AtomicU64,
    /// Largest lateness of any wake-up so far, µs.
    max_us: AtomicU64,
}

fn sleep_loop(settings: &NoiseSettings, live: &Live, stop: &AtomicBool) -> LoopResult {
    let pin_error = super::pin_current_thread(settings.cpu)
        .err()
        .map(|e| format!("could not pin the sleep loop to cpu {}: {e}", settings.cpu));
    let sleep = Duration::from_secs_f64(settings.sleep_ms / 1000.0);
    let threshold = Duration::from_secs_f64(settings.threshold_ms / 1000.0);
    let capacity = (settings.seconds * 1000.0 / settings.sleep_ms.max(0.001)) as usize + 16;
    let mut lateness_us = Vec::with_capacity(capacity.min(50_000_000));
    let mut stalls = Vec::new();
    let started = Utc::now();
    let t_start = Instant::now();
    let deadline = t_start + Duration::from_secs_f64(settings.seconds);
    loop {
        let t0 = Instant::now();
        if t0 >= deadline || stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(sleep);
        let late = t0.elapsed().saturating_sub(sleep);
        lateness_us.push(late.as_micros().min(u32::MAX as u128) as u32);
        live.max_us
            .fetch_max(late.as_micros() as u64, Ordering::Relaxed);
        if late > threshold {
            stalls.push(WakeUp {
                at: Utc::now(),
                lateness_ms: late.as_secs_f64() * 1000.0,
            });
            live.stalls.fetch_add(1, Ordering::Relaxed);
        }
    }
    LoopResult {
        started,
        ended: started + chrono::Duration::from_std(t_start.elapsed()).unwrap_or_default(),
        stalls,
        lateness_us,
        pin_error,
    }
}

/// Every 10 s, the stalls so far and the largest lateness (unless quiet).
fn spawn_progress(live: Arc<Live>, quiet: bool, total: f64) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let t0 = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            if !quiet {
                crate::say!(
                    "  {:>4.0}/{total:.0} s: {} stalls, max lateness {:.1} ms",
                    t0.elapsed().as_secs_f64(),
                    live.stalls.load(Ordering::Relaxed),
                    live.max_us.load(Ordering::Relaxed) as f64 / 1000.0
                );
            }
        }
    })
}

/// The raw data: every stall as a JSON line, and the histogram of all wake-ups.
fn write_raw(run: &ToolRun, result: &LoopResult) -> Result<()> {
    let mut lines = String::new();
    for w in &result.stalls {
        lines.push_str(&serde_json::to_string(w)?);
        lines.push('\n');
    }
    super::write_text(&run.dir.file(STALLS_FILE), &lines)?;
    let mut hist = String::from("lateness_ms_floor\twakeups\n");
    for (ms, n) in noise_report::lateness_histogram(&result.lateness_us) {
        hist.push_str(&format!("{ms}\t{n}\n"));
    }
    super::write_text(&run.dir.file(HIST_FILE), &hist)
}

/// Run the check. Returns the exit code (0 complete, 130 interrupted).
pub(crate) async fn run(settings: NoiseSettings, common: Common) -> Result<std::process::ExitCode> {
    let interrupt = Interrupt::install_with("stopping, writing what was measured")
        .context("installing signal handlers")?;
    let (_, layout) = super::measured_cpu(Some(settings.cpu))?;
    let args = ToolArgs::Noise(settings.clone());
    let mut run = ToolRun::begin(
        "noise-check",
        "noise-check",
        args,
        layout.clone(),
        &common,
        &interrupt,
    )
    .await?;
    super::note_idle_lab(&mut run, common.quiet).await;

    // Everything but the loop goes to the other CPUs, the loop's thread pins itself.
    super::pin_others_away(&mut run, settings.cpu, "sleep_loop_thread");
    run.write_manifest()?;
    if !common.quiet {
        crate::say!(
            "sleeping {} ms at a time on cpu {} for {} s; reporting wake-ups later than {} ms",
            settings.sleep_ms,
            settings.cpu,
            settings.seconds,
            settings.threshold_ms
        );
    }

    let stat_before = host::read_proc_stat();
    let live = Arc::new(Live::default());
    let progress = spawn_progress(live.clone(), common.quiet, settings.seconds);
    let stop = Arc::new(AtomicBool::new(false));
    let (result, signal) = {
        let (live, s, flag) = (live.clone(), settings.clone(), stop.clone());
        let measuring = super::run_in_thread("noise-loop", &interrupt, stop, move || {
            sleep_loop(&s, &live, &flag)
        });
        // The loop stops itself on a signal: the Measure phase runs to its end.
        run.session
            .finish_phase(Phase::Measure, measuring)
            .await
            .map_err(Stop::into_error)?
    };
    progress.abort();
    let busy = super::busy_since(&stat_before);
    let speed = run.speed_after().await;
    let mut caveats = run.manifest.caveats.clone();
    if let Some(e) = &result.pin_error {
        caveats.push(e.clone());
    }
    if let Some(sig) = signal {
        caveats.push(format!(
            "interrupted by {sig}: the report covers the part that ran"
        ));
    }
    run.manifest.caveats = caveats.clone();

    write_raw(&run, &result)?;
    let report = noise_report::analyze(
        settings,
        result.started,
        result.ended,
        &result.stalls,
        &result.lateness_us,
        busy,
        caveats,
    );
    let report = noise_report::NoiseReport {
        host_speed: speed,
        ..report
    };
    let text = noise_report::render_text(&report);
    run.write_reports(&text, &noise_report::render_markdown(&report), &report)?;
    run.manifest.measurements.summary = Some(ToolSummary::Noise(NoiseSummary {
        wakeups: report.wakeups,
        stalls: report.stalls,
        max_ms: report.stall_lateness_ms.as_ref().map(|s| s.max),
        head_stalls: report.head.stalls,
        head_density_ratio: report.head_density_ratio,
    }));
    super::print_and_finish(&run, &common, &text, &report, signal)
}
