//! `perflab calib`: a fixed number of iterations of deterministic integer work (xorshift),
//! sized once so one repeat takes about `work_ms`, repeated in a thread pinned to an app CPU.
//! Each repeat records wall time, the thread's CPU time, involuntary context switches and the
//! steal counters of `/proc/stat`. Writes `repeats.tsv` (raw) and the report.
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::rundir::tool::{CalibSummary, ToolArgs, ToolSummary};
use anyhow::{Context, Result};
use chrono::Utc;

use super::calib_report::{self, CalibSettings, Calibration, Repeat};
use super::{Common, ToolRun};
use crate::sample::host;
use crate::session::signals::Interrupt;
use crate::session::{Phase, Stop};

/// Raw per-repeat figures.
pub(crate) const REPEATS_FILE: &str = "repeats.tsv";

/// The fixed work: `iters` rounds of xorshift64 folded into an accumulator.
pub(crate) fn work(iters: u64, seed: u64) -> u64 {
    let mut x = seed | 1;
    let mut acc = 0u64;
    for i in 0..black_box(iters) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = acc.wrapping_add(x ^ i).rotate_left(5);
    }
    black_box(acc)
}

fn thread_cpu_ms() -> f64 {
    crate::host::speed::thread_cpu_s() * 1000.0
}

fn involuntary_switches() -> u64 {
    // SAFETY: getrusage writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_nivcsw.max(0) as u64
}

fn steal_now(cpu: u32) -> (u64, u64) {
    let s = calib_report::parse_steal(&std::fs::read_to_string("/proc/stat").unwrap_or_default());
    (
        s.get(&format!("cpu{cpu}")).copied().unwrap_or(0),
        s.get("cpu").copied().unwrap_or(0),
    )
}

/// Size the loop: double a probe until it runs >= 50 ms (or a quarter of `work_ms`), then scale.
fn calibrate(work_ms: f64) -> Calibration {
    let target = (work_ms / 4.0).clamp(5.0, 50.0);
    let mut n: u64 = 1 << 16;
    loop {
        let t = Instant::now();
        work(n, 0x9E37_79B9_7F4A_7C15);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if ms >= target || n >= 1 << 40 {
            return Calibration {
                iterations: calib_report::iterations_for(work_ms, n, ms),
                probe_iterations: n,
                probe_ms: ms,
            };
        }
        n *= 2;
    }
}

struct LoopResult {
    calibration: Calibration,
    repeats: Vec<Repeat>,
    pin_error: Option<String>,
}

fn repeat_loop(settings: &CalibSettings, stop: &AtomicBool, quiet: bool) -> LoopResult {
    let pin_error = super::pin_current_thread(settings.cpu)
        .err()
        .map(|e| format!("could not pin the loop to cpu {}: {e}", settings.cpu));
    let calibration = calibrate(settings.work_ms);
    let tick_ms = 1000.0 / host::clock_ticks_per_sec() as f64;
    let mut repeats = Vec::new();
    for index in 1..=settings.repeats {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let (steal_cpu0, steal_all0) = steal_now(settings.cpu);
        let csw0 = involuntary_switches();
        let started = Utc::now();
        let cpu0 = thread_cpu_ms();
        let t = Instant::now();
        work(calibration.iterations, index as u64);
        let wall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let thread_cpu = thread_cpu_ms() - cpu0;
        let csw = involuntary_switches().saturating_sub(csw0);
        let (steal_cpu1, steal_all1) = steal_now(settings.cpu);
        let r = Repeat {
            index,
            started,
            wall_ms,
            thread_cpu_ms: thread_cpu,
            steal_ms_cpu: steal_cpu1.saturating_sub(steal_cpu0) as f64 * tick_ms,
            steal_ms_all: steal_all1.saturating_sub(steal_all0) as f64 * tick_ms,
            involuntary_switches: csw,
        };
        if !quiet {
            crate::say!("  repeat {index:>3}/{}: {wall_ms:.1} ms", settings.repeats);
        }
        repeats.push(r);
    }
    LoopResult {
        calibration,
        repeats,
        pin_error,
    }
}

fn repeats_tsv(repeats: &[Repeat]) -> String {
    let mut s = String::from(
        "index\tstarted\twall_ms\tthread_cpu_ms\tsteal_ms_cpu\tsteal_ms_all\tinvoluntary_switches\n",
    );
    for r in repeats {
        s.push_str(&format!(
            "{}\t{}\t{:.3}\t{:.3}\t{:.0}\t{:.0}\t{}\n",
            r.index,
            r.started
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            r.wall_ms,
            r.thread_cpu_ms,
            r.steal_ms_cpu,
            r.steal_ms_all,
            r.involuntary_switches
        ));
    }
    s
}

/// Run the calibration loop. Returns the exit code (0 complete, 130 interrupted).
pub(crate) async fn run(settings: CalibSettings, common: Common) -> Result<std::process::ExitCode> {
    let interrupt = Interrupt::install_with("stopping, writing what was measured")
        .context("installing signal handlers")?;
    let (_, layout) = super::measured_cpu(Some(settings.cpu))?;
    let mut run = ToolRun::begin(
        "calib",
        "calib",
        ToolArgs::Calib(settings.clone()),
        layout.clone(),
        &common,
        &interrupt,
    )
    .await?;
    super::note_idle_lab(&mut run, common.quiet).await;
    super::pin_others_away(&mut run, settings.cpu, "loop_thread");
    run.write_manifest()?;
    if !common.quiet {
        crate::say!(
            "sizing the loop for ~{} ms on cpu {}, then {} repeats",
            settings.work_ms,
            settings.cpu,
            settings.repeats
        );
    }

    let stat_before = host::read_proc_stat();
    let stop = Arc::new(AtomicBool::new(false));
    let (result, signal) = {
        let (s, flag, quiet) = (settings.clone(), stop.clone(), common.quiet);
        let measuring = super::run_in_thread("calib-loop", &interrupt, stop, move || {
            repeat_loop(&s, &flag, quiet)
        });
        // The loop stops itself on a signal: the Measure phase runs to its end.
        run.session
            .finish_phase(Phase::Measure, measuring)
            .await
            .map_err(Stop::into_error)?
    };
    let busy = super::busy_since(&stat_before);
    if let Some(e) = &result.pin_error {
        run.manifest.caveats.push(e.clone());
    }
    if let Some(sig) = signal {
        run.manifest.caveats.push(format!(
            "interrupted by {sig} after {} repeats",
            result.repeats.len()
        ));
    }
    super::write_text(&run.dir.file(REPEATS_FILE), &repeats_tsv(&result.repeats))?;
    let speed = run.speed_after().await;
    let mut report = calib_report::analyze(
        settings,
        result.calibration,
        result.repeats,
        busy,
        run.manifest.caveats.clone(),
    );
    report.host_speed = speed;
    let text = calib_report::render_text(&report);
    run.write_reports(&text, &calib_report::render_markdown(&report), &report)?;
    run.manifest.measurements.summary = Some(ToolSummary::Calib(CalibSummary {
        iterations: report.calibration.iterations,
        wall_ms: report.wall_ms.clone(),
        steal_repeats: report.steal_repeats.clone(),
        preempted_repeats: report.preempted_repeats.clone(),
    }));
    super::print_and_finish(&run, &common, &text, &report, signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_is_deterministic_and_depends_on_its_inputs() {
        assert_eq!(work(1000, 7), work(1000, 7));
        assert_ne!(work(1000, 7), work(1001, 7));
        assert_ne!(work(1000, 7), work(1000, 8));
    }

    #[test]
    fn raw_file_has_one_line_per_repeat() {
        let r = Repeat {
            index: 1,
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            wall_ms: 200.5,
            thread_cpu_ms: 200.0,
            steal_ms_cpu: 10.0,
            steal_ms_all: 20.0,
            involuntary_switches: 2,
        };
        let t = repeats_tsv(&[r.clone(), Repeat { index: 2, ..r }]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[1],
            "1\t1970-01-01T00:00:00.000Z\t200.500\t200.000\t10\t20\t2"
        );
    }
}
