//! The live page's feed: the rig hands it what it already reads (the plan and k6's start when
//! a load begins, each poll of k6's REST API the progress line makes), and each poll reads the
//! lines the samplers appended to `samples/` since the last one (`Tail`: only the new bytes,
//! no second sampling). The server reads the state under the same lock.
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::state::{Building, LiveData};
use crate::load::live::Snapshot;
use crate::plan::{CpuLayout, Plan};
use crate::sample::SampleFile;
use crate::sample::records::{CgroupSample, FpmSample, HostSample, PgSample};

/// The end of a JSONL file already read: only whole lines after it are new.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    offset: u64,
}

impl Tail {
    /// The whole lines appended since the last call, parsed; a torn last line waits for its
    /// newline, a line that does not parse is skipped (the report says so after the run).
    pub(crate) fn read_new<T: DeserializeOwned>(&mut self, path: &Path) -> Vec<T> {
        let Ok(mut f) = File::open(path) else {
            return Vec::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len < self.offset {
            self.offset = 0; // replaced: start over
        }
        if len == self.offset || f.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        // bounded: a reader never takes more than 4 MiB per call
        let mut buf = Vec::new();
        let _ = (&mut f).take(4 << 20).read_to_end(&mut buf);
        let Some(end) = buf.iter().rposition(|b| *b == b'\n') else {
            return Vec::new();
        };
        self.offset += end as u64 + 1;
        String::from_utf8_lossy(&buf[..end])
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

#[derive(Default)]
struct Tails {
    dir: PathBuf,
    cgroup: Tail,
    host: Tail,
    fpm: Tail,
    pg: Tail,
}

impl Tails {
    fn feed(&mut self, b: &mut Building) {
        let at = |f: SampleFile| self.dir.join(f.file());
        let (cg, host) = (at(SampleFile::Cgroup), at(SampleFile::Host));
        let (fpm, pg) = (at(SampleFile::Source("fpm")), at(SampleFile::Source("pg")));
        for s in self.cgroup.read_new::<CgroupSample>(&cg) {
            b.cgroup(&s);
        }
        for s in self.host.read_new::<HostSample>(&host) {
            b.host(&s);
        }
        for s in self.fpm.read_new::<FpmSample>(&fpm) {
            b.fpm(&s);
        }
        for s in self.pg.read_new::<PgSample>(&pg) {
            b.pg(&s);
        }
    }
}

/// The live work's cost so far and the clock, at a moment.
type Mark = (Duration, Instant);

struct Inner {
    building: Option<Building>,
    /// The mark when the latest load began, and when it ended.
    load: Option<(Mark, Option<Mark>)>,
    tails: Tails,
    idle: LiveData,
    run_dir: Option<PathBuf>,
}

/// The shared state: the rig writes, the server reads.
#[derive(Clone)]
pub struct Feed {
    inner: Arc<Mutex<Inner>>,
    /// CPU the live work took (ns of thread time): the polls' state and tails, each request.
    cost_ns: Arc<AtomicU64>,
}

/// This thread's CPU time so far (ns).
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is handed.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What the rig knows when a load begins.
pub struct Begin<'a> {
    pub run: &'a str,
    pub plan: &'a Plan,
    pub layout: &'a CpuLayout,
    pub k6_start: DateTime<Utc>,
    pub run_dir: &'a Path,
    pub samples: &'a Path,
}

impl Feed {
    pub fn new(label: &str) -> Feed {
        Feed {
            inner: Arc::new(Mutex::new(Inner {
                building: None,
                load: None,
                tails: Tails::default(),
                idle: LiveData::waiting(label),
                run_dir: None,
            })),
            cost_ns: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Run `f` and charge its thread CPU time to the live view's cost.
    pub fn charged<R>(&self, f: impl FnOnce() -> R) -> R {
        let t0 = thread_cpu_ns();
        let r = f();
        self.cost_ns
            .fetch_add(thread_cpu_ns().saturating_sub(t0), Ordering::Relaxed);
        r
    }

    /// The CPU the live work took during the latest load (from its start to k6's end), and
    /// how long that was.
    pub fn load_cost(&self) -> Option<(Duration, Duration)> {
        let ((c0, t0), end) = self.lock().load?;
        let (c1, t1) = end.unwrap_or((self.cost(), Instant::now()));
        Some((c1.saturating_sub(c0), t1 - t0))
    }

    /// The CPU the live work took so far.
    pub fn cost(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.cost_ns.load(Ordering::Relaxed))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A load begins (each round's; the page shows the latest).
    pub fn begin(&self, b: &Begin) {
        let notes = notes(b.plan);
        let cost = self.cost();
        let mut g = self.lock();
        g.load = Some(((cost, Instant::now()), None));
        g.building = Some(Building::new(
            b.run,
            b.plan,
            b.layout,
            b.k6_start.timestamp_millis(),
            notes,
        ));
        g.tails = Tails {
            dir: b.samples.to_path_buf(),
            ..Default::default()
        };
        g.run_dir = Some(b.run_dir.to_path_buf());
    }

    /// One poll of k6 (`None`: a generator did not answer), then the samplers' new lines.
    pub fn poll(&self, t: DateTime<Utc>, snap: Option<Snapshot>) {
        self.charged(|| {
            let mut g = self.lock();
            let Inner {
                building, tails, ..
            } = &mut *g;
            if let Some(b) = building {
                b.poll(t.timestamp_millis(), snap);
                tails.feed(b);
            }
        })
    }

    /// The load's k6 stopped: the steps not judged yet are, on its last figures.
    pub fn load_ended(&self) {
        let cost = self.cost();
        let mut g = self.lock();
        if let Some((_, end)) = &mut g.load {
            *end = Some((cost, Instant::now()));
        }
        let Inner {
            building, tails, ..
        } = &mut *g;
        if let Some(b) = building {
            tails.feed(b);
            b.load_ended();
        }
    }

    /// The run is over; `report`: report.html's path in the run directory, if written.
    pub fn finish(&self, report: Option<&str>) {
        let mut g = self.lock();
        let Inner {
            building,
            tails,
            idle,
            ..
        } = &mut *g;
        let data = match building {
            Some(b) => {
                tails.feed(b);
                &mut b.data
            }
            None => idle,
        };
        data.status = "finished";
        data.report = report.map(|r| format!("run/{r}"));
    }

    /// Read the state (under the lock: keep `f` short).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&LiveData) -> R) -> R {
        let g = self.lock();
        f(g.building.as_ref().map_or(&g.idle, |b| &b.data))
    }

    /// The run directory of the latest load (its report files are served read-only).
    pub fn run_dir(&self) -> Option<PathBuf> {
        self.lock().run_dir.clone()
    }
}

/// What the page cannot show live for this plan's lab: a source read from the containers'
/// output after the run (the node app's metrics lines).
fn notes(plan: &Plan) -> Vec<String> {
    crate::lab::descriptor(plan.lab)
        .info()
        .sources
        .iter()
        .filter(|s| !s.read.sampled())
        .map(|s| {
            format!(
                "samples/{}.jsonl ({}) is cut from the container's output after the run: its figures are in report.html, not here",
                s.name,
                s.offered_by.column()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_tail_reads_whole_new_lines_once_and_waits_for_a_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        let mut f = std::fs::File::create(&p).unwrap();
        let mut t = Tail::default();
        assert!(t.read_new::<serde_json::Value>(&p).is_empty());
        write!(f, "{{\"a\":1}}\n{{\"a\":2}}\n{{\"a\":").unwrap();
        f.flush().unwrap();
        let v: Vec<serde_json::Value> = t.read_new(&p);
        assert_eq!(v.len(), 2);
        assert!(t.read_new::<serde_json::Value>(&p).is_empty());
        write!(f, "3}}\nnot json\n").unwrap();
        f.flush().unwrap();
        let v: Vec<serde_json::Value> = t.read_new(&p);
        assert_eq!(v, [serde_json::json!({"a": 3})]);
        // a missing file is nothing yet
        assert!(
            Tail::default()
                .read_new::<serde_json::Value>(&dir.path().join("no"))
                .is_empty()
        );
    }
}
