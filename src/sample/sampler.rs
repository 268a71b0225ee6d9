//! The `Sampler` trait (one periodic reading of one source, written as one JSON line) and the
//! loop that runs any sampler: its ticks, its file in the run's `samples/`, its failures in
//! `sampler-errors.jsonl` under its file's name and its count in the summary under its file's
//! key. Also what every sampler shares: the folder, the errors' file and the stop signal
//! (`Shared`), the ticker, the clock and the error line. The one periodic sampler is
//! `source.rs`'s, which runs every source a lab declares (`lab::source`).
use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use super::files::{SampleFile, SampleFiles};
use super::summary::SamplerSummary;
use super::writer::JsonlWriter;

/// One periodic reading of one source (php-fpm's status, `pg_stat_activity`, ...).
pub(crate) trait Sampler: Send + 'static {
    /// One line of its file.
    type Line: Serialize + Send;
    /// One reading, stamped `t` (unix ms); an error is recorded and the loop goes on.
    fn read(&mut self, t: i64) -> impl Future<Output = Result<Self::Line, String>> + Send;
}

/// What every sampler of a run shares: the `samples/` folder, its `sampler-errors.jsonl`, and
/// the signal to stop.
#[derive(Clone)]
pub(crate) struct Shared {
    pub files: SampleFiles,
    pub errors: JsonlWriter,
    pub stop: watch::Receiver<bool>,
}

impl Shared {
    /// Create the folder if missing and open its errors' file; the sender stops the samplers.
    pub(crate) fn open(files: &SampleFiles) -> std::io::Result<(watch::Sender<bool>, Shared)> {
        std::fs::create_dir_all(&files.dir)?;
        let errors = JsonlWriter::create(&files.path(SampleFile::Errors))?;
        let (stop, rx) = watch::channel(false);
        let files = files.clone();
        Ok((
            stop,
            Shared {
                files,
                errors,
                stop: rx,
            },
        ))
    }

    /// A writer appending to `file` in the folder (created if missing).
    pub(crate) fn create(&self, file: SampleFile) -> std::io::Result<JsonlWriter> {
        JsonlWriter::create(&self.files.path(file))
    }
}

/// Run `sampler` every `period` until the stop, one line per reading to `file` (created now):
/// where its lines go, its name in `sampler-errors.jsonl` and the key the summary counts its
/// lines under. A sampler that could not be set up (`Err`) records why once and writes nothing.
pub(crate) fn spawn<S: Sampler>(
    file: SampleFile,
    sampler: Result<S, String>,
    period: Duration,
    shared: &Shared,
) -> std::io::Result<JoinHandle<SamplerSummary>> {
    let out = shared.create(file)?;
    Ok(tokio::spawn(run(
        file,
        sampler,
        out,
        period,
        shared.clone(),
    )))
}

async fn run<S: Sampler>(
    file: SampleFile,
    sampler: Result<S, String>,
    out: JsonlWriter,
    period: Duration,
    shared: Shared,
) -> SamplerSummary {
    let Shared {
        errors, mut stop, ..
    } = shared;
    let mut summary = SamplerSummary::default();
    let mut sampler = match sampler {
        Ok(s) => s,
        Err(e) => {
            summary.errors += 1;
            record_error(&errors, file.name(), e);
            return summary;
        }
    };
    let mut t = ticker(period);
    while next_tick(&mut t, &mut stop).await {
        match sampler.read(now_ms()).await {
            Ok(line) => {
                if out.write(&line).is_ok() {
                    summary.count_line(file);
                }
            }
            Err(e) => {
                summary.errors += 1;
                record_error(&errors, file.name(), e);
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

    /// A sampler of the tests only, with a file of its own (`SampleFile::Counting`, a
    /// `#[cfg(test)]` row of the registry): reads 1, 2, 3, ..., fails on every third reading,
    /// and asks the loop to stop after the sixth (so the test needs no clock).
    struct Counting(u64, Option<watch::Sender<bool>>);

    impl Sampler for Counting {
        type Line = u64;
        async fn read(&mut self, _t: i64) -> Result<u64, String> {
            self.0 += 1;
            if self.0 == 6
                && let Some(stop) = &self.1
            {
                let _ = stop.send(true);
            }
            if self.0.is_multiple_of(3) {
                Err(format!("reading {} failed", self.0))
            } else {
                Ok(self.0)
            }
        }
    }

    fn lines(p: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// A run's `samples/` folder in `dir`.
    fn folder(dir: &std::path::Path) -> SampleFiles {
        SampleFiles {
            dir: dir.join("samples"),
        }
    }

    #[tokio::test]
    async fn the_loop_writes_each_reading_to_its_file_and_counts_it_under_its_key() {
        let d = tempfile::tempdir().unwrap();
        let files = folder(d.path());
        let (stop, shared) = Shared::open(&files).unwrap();
        let sampler = Counting(0, Some(stop));
        // six readings (the sixth stops the loop); the third and the sixth fail
        let s = spawn(
            SampleFile::Counting,
            Ok(sampler),
            Duration::from_millis(1),
            &shared,
        )
        .unwrap()
        .await
        .unwrap();
        assert_eq!((s.lines(SampleFile::Counting), s.errors), (4, 2), "{s:?}");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["counting_samples"], 4, "{json}");
        let out = d.path().join("samples/counting.jsonl");
        assert_eq!(lines(&out), ["1", "2", "4", "5"]);
        let errs = lines(&d.path().join("samples/sampler-errors.jsonl"));
        assert_eq!(errs.len(), 2);
        assert!(errs[0].contains(r#""sampler":"counting""#), "{errs:?}");
        assert!(errs[1].contains("reading 6 failed"), "{errs:?}");
    }

    #[tokio::test]
    async fn a_sampler_that_could_not_start_says_why_once_and_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let files = folder(d.path());
        let (_stop, shared) = Shared::open(&files).unwrap();
        let s = spawn::<Counting>(
            SampleFile::Counting,
            Err("no client".into()),
            Duration::from_millis(1),
            &shared,
        )
        .unwrap()
        .await
        .unwrap();
        assert_eq!((s.lines(SampleFile::Counting), s.errors), (0, 1));
        assert!(lines(&files.path(SampleFile::Counting)).is_empty());
        let errs = lines(&files.path(SampleFile::Errors));
        assert!(errs[0].contains(r#""sampler":"counting""#), "{errs:?}");
        assert!(errs[0].contains("no client"), "{errs:?}");
    }
}
