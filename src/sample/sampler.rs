//! The `Sampler` trait (one periodic reading, written as one JSON line) and the loop that runs
//! any sampler: its ticks, its file, its failures in `sampler-errors.jsonl` and its count in
//! the summary. A new sampler is its record (`records.rs`), its own file with an `impl Sampler`
//! and one `spawn` line in `Samplers::start`.
use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use super::writer::JsonlWriter;

/// What the samplers did (`sample::Samplers::stop` returns it).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SamplerSummary {
    pub cgroup_samples: u64,
    pub host_samples: u64,
    /// Lines of `hostprocs.jsonl` (the host's processes by source).
    #[serde(default)]
    pub procs_samples: u64,
    pub fpm_samples: u64,
    pub pg_samples: u64,
    pub errors: u64,
    /// Mean CPU of perflab itself over the sampling (cores).
    pub perflab_cores_mean: Option<f64>,
    /// Mean CPU of dockerd over the sampling (cores).
    pub dockerd_cores_mean: Option<f64>,
}

impl SamplerSummary {
    /// Add another sampler's summary to this one (the means: the first that has one).
    pub(crate) fn add(&mut self, s: &SamplerSummary) {
        self.cgroup_samples += s.cgroup_samples;
        self.host_samples += s.host_samples;
        self.procs_samples += s.procs_samples;
        self.fpm_samples += s.fpm_samples;
        self.pg_samples += s.pg_samples;
        self.errors += s.errors;
        self.perflab_cores_mean = self.perflab_cores_mean.or(s.perflab_cores_mean);
        self.dockerd_cores_mean = self.dockerd_cores_mean.or(s.dockerd_cores_mean);
    }
}

/// One periodic reading of one source (php-fpm's status, `pg_stat_activity`, ...).
pub(crate) trait Sampler: Send + 'static {
    /// The sampler's name in `sampler-errors.jsonl`.
    const NAME: &'static str;
    /// One line of its file.
    type Line: Serialize + Send;
    /// One reading, stamped `t` (unix ms); an error is recorded and the loop goes on.
    fn read(&mut self, t: i64) -> impl Future<Output = Result<Self::Line, String>> + Send;
    /// The summary's count of this sampler's lines.
    fn counter(summary: &mut SamplerSummary) -> &mut u64;
}

/// Run `sampler` every `period` until `stop`, one line per reading to `out`. A sampler that
/// could not be set up (`Err`) records why once and writes nothing.
pub(crate) fn spawn<S: Sampler>(
    sampler: Result<S, String>,
    out: JsonlWriter,
    period: Duration,
    stop: watch::Receiver<bool>,
    errors: JsonlWriter,
) -> JoinHandle<SamplerSummary> {
    tokio::spawn(run(sampler, out, period, stop, errors))
}

async fn run<S: Sampler>(
    sampler: Result<S, String>,
    out: JsonlWriter,
    period: Duration,
    mut stop: watch::Receiver<bool>,
    errors: JsonlWriter,
) -> SamplerSummary {
    let mut summary = SamplerSummary::default();
    let mut sampler = match sampler {
        Ok(s) => s,
        Err(e) => {
            summary.errors += 1;
            record_error(&errors, S::NAME, e);
            return summary;
        }
    };
    let mut t = ticker(period);
    while next_tick(&mut t, &mut stop).await {
        match sampler.read(now_ms()).await {
            Ok(line) => {
                if out.write(&line).is_ok() {
                    *S::counter(&mut summary) += 1;
                }
            }
            Err(e) => {
                summary.errors += 1;
                record_error(&errors, S::NAME, e);
            }
        }
    }
    summary
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A ticker that skips missed ticks (a slow reading does not cause a burst after it).
pub(super) fn ticker(period: Duration) -> tokio::time::Interval {
    let mut t = tokio::time::interval(period);
    t.set_missed_tick_behavior(MissedTickBehavior::Skip);
    t
}

/// Wait for the next tick; false when asked to stop.
pub(super) async fn next_tick(
    t: &mut tokio::time::Interval,
    rx: &mut watch::Receiver<bool>,
) -> bool {
    if *rx.borrow() {
        return false;
    }
    tokio::select! {
        _ = t.tick() => !*rx.borrow(),
        _ = rx.changed() => false,
    }
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    t: i64,
    sampler: &'a str,
    error: String,
}

/// One line of `sampler-errors.jsonl`.
pub(super) fn record_error(errors: &JsonlWriter, sampler: &str, error: String) {
    let _ = errors.write(&ErrorLine {
        t: now_ms(),
        sampler,
        error,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Reads 1, 2, 3, ..., fails on every third reading, and asks the loop to stop after the
    /// sixth (so the test needs no clock).
    struct Counting(u64, Option<watch::Sender<bool>>);

    impl Sampler for Counting {
        const NAME: &'static str = "counting";
        type Line = u64;
        async fn read(&mut self, _t: i64) -> Result<u64, String> {
            self.0 += 1;
            if self.0 == 6 {
                if let Some(stop) = &self.1 {
                    let _ = stop.send(true);
                }
            }
            if self.0 % 3 == 0 {
                Err(format!("reading {} failed", self.0))
            } else {
                Ok(self.0)
            }
        }
        fn counter(summary: &mut SamplerSummary) -> &mut u64 {
            &mut summary.pg_samples
        }
    }

    fn lines(p: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The sampler's file and the errors' file in `dir`, with their writers.
    fn files(dir: &std::path::Path) -> (PathBuf, PathBuf, JsonlWriter, JsonlWriter) {
        let (out_p, err_p) = (dir.join("c.jsonl"), dir.join("e.jsonl"));
        let out = JsonlWriter::create(&out_p).unwrap();
        let errors = JsonlWriter::create(&err_p).unwrap();
        (out_p, err_p, out, errors)
    }

    #[tokio::test]
    async fn the_loop_writes_each_reading_and_records_each_failure() {
        let d = tempfile::tempdir().unwrap();
        let (out_p, err_p, out, errors) = files(d.path());
        let (stop, rx) = watch::channel(false);
        let sampler = Counting(0, Some(stop));
        // six readings (the sixth stops the loop); the third and the sixth fail
        let s = spawn(Ok(sampler), out, Duration::from_millis(1), rx, errors)
            .await
            .unwrap();
        assert_eq!((s.pg_samples, s.errors), (4, 2), "{s:?}");
        assert_eq!(lines(&out_p), ["1", "2", "4", "5"]);
        let errs = lines(&err_p);
        assert_eq!(errs.len(), 2);
        assert!(errs[0].contains(r#""sampler":"counting""#), "{errs:?}");
        assert!(errs[1].contains("reading 6 failed"), "{errs:?}");
    }

    #[tokio::test]
    async fn a_sampler_that_could_not_start_says_why_once_and_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (out_p, err_p, out, errors) = files(d.path());
        let (_stop, rx) = watch::channel(false);
        let s = spawn::<Counting>(
            Err("no client".into()),
            out,
            Duration::from_millis(1),
            rx,
            errors,
        )
        .await
        .unwrap();
        assert_eq!((s.pg_samples, s.errors), (0, 1));
        assert!(lines(&out_p).is_empty());
        assert!(lines(&err_p)[0].contains("no client"));
    }

    #[test]
    fn summaries_add_up_and_keep_the_first_mean() {
        let mut total = SamplerSummary::default();
        total.add(&SamplerSummary {
            cgroup_samples: 3,
            errors: 1,
            perflab_cores_mean: Some(0.1),
            ..Default::default()
        });
        total.add(&SamplerSummary {
            fpm_samples: 2,
            errors: 2,
            perflab_cores_mean: Some(0.9),
            dockerd_cores_mean: Some(0.2),
            ..Default::default()
        });
        assert_eq!(
            (total.cgroup_samples, total.fpm_samples, total.errors),
            (3, 2, 3)
        );
        assert_eq!(total.perflab_cores_mean, Some(0.1));
        assert_eq!(total.dockerd_cores_mean, Some(0.2));
    }
}
