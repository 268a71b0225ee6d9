//! Server-side samplers that run beside k6, and their registry: the files they write under the
//! run's `samples/` folder (`sample_files!` below: `SampleFile`, each file's name and the key
//! of its count in the summary), what to sample (`SamplerTargets`), and `Samplers::start` /
//! `stop`, which spawn one task per sampler and add up their summaries.
//! Every line is JSON (`t` = unix ms, UTC), flushed per line so an aborted run keeps what was
//! sampled. The periodic one-source samplers (`fpm.rs`: php-fpm status through the hidden
//! pool, `pg.rs`: `pg_stat_activity`, every 2 s) are `sampler::Sampler`s run by one loop; the
//! fast sampler (`fast.rs`, every 1 s) reads cgroups, `/proc/stat` and the host's processes in
//! one tick so their lines share `t`. `pin.rs` keeps perflab's own threads off the app's CPUs.
pub mod agent;
pub mod cgroup;
mod fast;
mod fpm;
pub mod host;
mod pg;
mod pin;
pub mod procs;
pub mod records;
mod sampler;
pub mod stack;
mod summary;
mod writer;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::lab::Role;
pub(crate) use pin::pin_process_to;
use sampler::{Sampler, Shared};
pub(crate) use summary::SamplerSummary;

/// The registry of the files under a run's `samples/`, one row each after its doc:
/// `Variant: "name"`, then `, counted as "key"` when the samplers' summary counts its lines.
/// The file is `<name>.jsonl`; a sampler that writes it is `<name>` in `sampler-errors.jsonl`
/// (`Sampler::FILE`); `key` is its count in the manifest's `samplers` object. `SampleFile`,
/// `SampleFile::ALL` (what the run directory's layout lists), `name`, `file` and `count_key`
/// derive from this table; the order of the rows is the order of the counts in the manifest.
/// A row may carry a `#[cfg(..)]` (the unit tests' sampler is one).
macro_rules! sample_files {
    (@key) => { None };
    (@key $key:literal) => { Some($key) };
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $v:ident: $name:literal $(, counted as $key:literal)?;
    )+) => {
        /// A file under a run's `samples/`, one JSON line per reading (`sample::records`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum SampleFile {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? $v, )+
        }

        impl SampleFile {
            /// Every file, in the registry's order.
            pub(crate) const ALL: [SampleFile; {
                let all: &[SampleFile] = &[$( $(#[cfg($cfg)])? SampleFile::$v, )+];
                all.len()
            }] = [$( $(#[cfg($cfg)])? SampleFile::$v, )+];

            /// The file's name without `.jsonl`: its sampler's name in `sampler-errors.jsonl`.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $( $(#[cfg($cfg)])? SampleFile::$v => $name, )+
                }
            }

            /// The file's name in `samples/`.
            pub(crate) const fn file(self) -> &'static str {
                match self {
                    $( $(#[cfg($cfg)])? SampleFile::$v => concat!($name, ".jsonl"), )+
                }
            }

            /// The key of its count of lines in the samplers' summary, if the samplers count
            /// them.
            pub(crate) const fn count_key(self) -> Option<&'static str> {
                match self {
                    $( $(#[cfg($cfg)])? SampleFile::$v => sample_files!(@key $($key)?), )+
                }
            }
        }
    };
}

sample_files! {
    /// `cgroup.jsonl`: each container's cgroup CPU and memory (`CgroupSample`).
    Cgroup: "cgroup", counted as "cgroup_samples";
    /// `host.jsonl`: the host's CPU (`HostSample`).
    Host: "host", counted as "host_samples";
    /// `hostprocs.jsonl`: the host's processes by source, irq and softirq (`HostProcsSample`).
    HostProcs: "hostprocs", counted as "procs_samples";
    /// `fpm.jsonl`: php-fpm's status (`FpmSample`).
    Fpm: "fpm", counted as "fpm_samples";
    /// `pg.jsonl`: `pg_stat_activity` (`PgSample`).
    Pg: "pg", counted as "pg_samples";
    /// `node.jsonl`: the Node app's metrics lines (`NodeSample`), collected from its log.
    Node: "node";
    /// `sampler-errors.jsonl`: what a sampler failed to read.
    Errors: "sampler-errors";
    /// `counting.jsonl`: the unit tests' sampler (`sampler.rs`).
    #[cfg(test)]
    Counting: "counting", counted as "counting_samples";
}

/// Where the samplers write: the run directory's `samples/` folder, handed down by the layout
/// that owns it (`rundir::layout::Layout::sample_files`, above this module); each file in it
/// is named by its [`SampleFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SampleFiles {
    /// The folder, created if missing.
    pub dir: PathBuf,
}

impl SampleFiles {
    /// `file`'s path in the folder.
    pub(crate) fn path(&self, file: SampleFile) -> PathBuf {
        self.dir.join(file.file())
    }
}

/// A container to sample: its role in the lab, its name and the pid of its init process.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub(crate) struct ContainerTarget {
    pub role: Role,
    pub name: String,
    pub pid: u32,
}

/// What to sample. Absent parts are skipped.
#[derive(Default)]
pub(crate) struct SamplerTargets {
    pub containers: Vec<ContainerTarget>,
    /// e.g. `http://127.0.0.1:PORT/fpm-status?json` (through nginx to the hidden status pool).
    pub fpm_status_url: Option<String>,
    /// A connection opened by the caller before the lab's workers take every slot
    /// (exp2-pgconn fills `max_connections` on purpose).
    pub pg: Option<std::sync::Arc<tokio_postgres::Client>>,
}

/// Sampling periods.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SamplerOptions {
    pub fast: Duration,
    pub slow: Duration,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            fast: Duration::from_secs(1),
            slow: Duration::from_secs(2),
        }
    }
}

/// Running samplers; `stop` ends them and returns the summary.
pub(crate) struct Samplers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<SamplerSummary>>,
    /// A count of 0 for every sampler `start` knows, run or not (its target absent): the
    /// manifest lists them all.
    base: SamplerSummary,
}

impl Samplers {
    /// Start every sampler the targets allow, writing to `files` (their folder created if
    /// missing). A periodic sampler is one `periodic` call here: its target made its `Sampler`.
    pub(crate) fn start(
        files: &SampleFiles,
        targets: SamplerTargets,
        opts: SamplerOptions,
    ) -> std::io::Result<Samplers> {
        let (stop, shared) = Shared::open(files)?;
        let mut s = Samplers::new(stop);
        let out = fast::FastOut::files(&shared)?;
        s.fast(out, targets.containers, opts.fast, shared.stop.clone());
        s.periodic(
            &shared,
            opts.slow,
            targets.fpm_status_url.map(fpm::FpmSampler::new),
        )?;
        s.periodic(&shared, opts.slow, targets.pg.map(|c| Ok(pg::PgSampler(c))))?;
        Ok(s)
    }

    /// The sample agent's samplers (`perflab sample-agent`, in a container on another engine):
    /// cgroup and host lines, and errors, all to stdout in the files' JSON-lines format.
    pub(crate) fn start_stdout(containers: Vec<ContainerTarget>, period: Duration) -> Samplers {
        let (stop, rx) = watch::channel(false);
        let mut s = Samplers::new(stop);
        s.fast(fast::FastOut::stdout(), containers, period, rx);
        s
    }

    fn new(stop: watch::Sender<bool>) -> Samplers {
        Samplers {
            stop,
            tasks: Vec::new(),
            base: SamplerSummary::default(),
        }
    }

    /// Spawn the fast sampler; its counts are in the summary.
    fn fast(
        &mut self,
        out: fast::FastOut,
        containers: Vec<ContainerTarget>,
        period: Duration,
        stop: watch::Receiver<bool>,
    ) {
        self.base.expect(&fast::FILES);
        self.tasks.push(fast::spawn(out, containers, period, stop));
    }

    /// Spawn `sampler` every `period` if this run has its target (`Some`; `Err`: it could not
    /// be set up, which it records); its count is in the summary either way.
    fn periodic<S: Sampler>(
        &mut self,
        shared: &Shared,
        period: Duration,
        sampler: Option<Result<S, String>>,
    ) -> std::io::Result<()> {
        self.base.expect(&[S::FILE]);
        if let Some(s) = sampler {
            self.tasks.push(sampler::spawn(s, period, shared)?);
        }
        Ok(())
    }

    /// Stop all samplers and merge their summaries.
    pub(crate) async fn stop(self) -> SamplerSummary {
        let _ = self.stop.send(true);
        let mut total = self.base;
        for t in self.tasks {
            if let Ok(s) = t.await {
                total.add(&s);
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_runs_summary_counts_every_sampler_under_the_manifests_keys_in_order() {
        let d = tempfile::tempdir().unwrap();
        let files = SampleFiles {
            dir: d.path().join("samples"),
        };
        let s = Samplers::start(&files, SamplerTargets::default(), Default::default()).unwrap();
        // Stopped before its first tick: no line, no mean; fpm and pg had no target.
        let summary = s.stop().await;
        assert_eq!(
            serde_json::to_string(&summary).unwrap(),
            r#"{"cgroup_samples":0,"host_samples":0,"procs_samples":0,"fpm_samples":0,"pg_samples":0,"errors":0,"perflab_cores_mean":null,"dockerd_cores_mean":null}"#
        );
        for f in [SampleFile::Cgroup, SampleFile::Host, SampleFile::HostProcs] {
            assert!(files.path(f).is_file(), "{f:?}");
        }
        assert!(!files.path(SampleFile::Fpm).exists());
        assert!(files.path(SampleFile::Errors).is_file());
    }

    #[test]
    fn the_files_keep_their_names_and_the_errors_their_samplers() {
        let names: Vec<_> = SampleFile::ALL.iter().map(|f| f.file()).collect();
        assert_eq!(
            names[..7],
            [
                "cgroup.jsonl",
                "host.jsonl",
                "hostprocs.jsonl",
                "fpm.jsonl",
                "pg.jsonl",
                "node.jsonl",
                "sampler-errors.jsonl"
            ]
        );
        assert_eq!(
            [SampleFile::Cgroup, SampleFile::Fpm, SampleFile::Pg].map(SampleFile::name),
            ["cgroup", "fpm", "pg"]
        );
        assert_eq!(SampleFile::Node.count_key(), None);
    }
}
