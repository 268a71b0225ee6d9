//! Server-side samplers that run beside k6, and their registry: the files they write under the
//! run's `samples/` folder (`sample_files!` in `files.rs`: `SampleFile`, each file's name and
//! the key of its count in the summary; a lab's declared sources are `SampleFile::Source`), what
//! to sample (`SamplerTargets`, `targets.rs`), and `Samplers::start` / `stop`, which spawn one
//! task per sampler and add up their summaries. Every line is JSON (`t` = unix ms, UTC), flushed per line so an
//! aborted run keeps what was sampled. The sources a lab declares (`lab::source`: php-fpm's
//! status, nginx's `stub_status`, `pg_stat_activity`, each every 2 s) are read by one generic
//! `sampler::Sampler` (`source.rs`) run by one loop; the fast sampler (`fast.rs`, every 1 s)
//! reads cgroups, `/proc/stat` and the host's processes in one tick so their lines share `t`.
//! `pin.rs` keeps perflab's own threads off the app's CPUs.
pub mod agent;
pub mod cgroup;
mod fast;
mod files;
pub mod host;
pub(crate) mod memory;
mod pin;
pub mod procs;
pub mod records;
mod sampler;
mod source;
pub mod stack;
mod summary;
mod targets;
mod writer;

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use files::SampleFile;
pub(crate) use files::SampleFiles;
pub(crate) use pin::pin_process_to;
use sampler::Shared;
pub(crate) use source::ExecWay;
pub(crate) use summary::SamplerSummary;
pub(crate) use targets::{ContainerTarget, SamplerOptions, SamplerTargets};

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
    /// missing): the fast one, and each declared source the run has a way to (an entry point,
    /// a database connection). Every source any lab declares is counted, 0 when not run.
    pub(crate) fn start(
        files: &SampleFiles,
        targets: SamplerTargets,
        opts: SamplerOptions,
    ) -> std::io::Result<Samplers> {
        let (stop, shared) = Shared::open(files)?;
        let mut s = Samplers::new(stop);
        let out = fast::FastOut::files(&shared)?;
        s.fast(out, targets.containers, opts.fast, shared.stop.clone());
        let declared: Vec<SampleFile> = crate::lab::sources()
            .into_iter()
            .filter(|d| d.read.sampled())
            .map(|d| SampleFile::Source(d.name))
            .collect();
        s.base.expect(&declared);
        for decl in targets.sources.iter().copied() {
            let (entry, pg) = (targets.entry_url.as_deref(), targets.pg.as_ref());
            let exec = targets.exec.as_ref();
            if let Some(sampler) = source::SourceSampler::new(decl, entry, pg, exec) {
                let every = Duration::from_millis(decl.every_ms);
                let file = SampleFile::Source(decl.name);
                s.tasks.push(sampler::spawn(file, sampler, every, &shared)?);
            }
        }
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
            r#"{"cgroup_samples":0,"host_samples":0,"procs_samples":0,"fpm_samples":0,"fpm_net_samples":0,"fpm_syn_samples":0,"front_samples":0,"nginx_samples":0,"nginx_syn_samples":0,"pg_samples":0,"errors":0,"perflab_cores_mean":null,"dockerd_cores_mean":null}"#
        );
        for f in [SampleFile::Cgroup, SampleFile::Host, SampleFile::HostProcs] {
            assert!(files.path(f).is_file(), "{f:?}");
        }
        assert!(!files.path(SampleFile::Source("fpm")).exists());
        assert!(files.path(SampleFile::Errors).is_file());
    }

    #[test]
    fn the_files_keep_their_names_and_the_errors_their_samplers() {
        let names: Vec<_> = SampleFile::all().iter().map(|f| f.file()).collect();
        for n in [
            "cgroup.jsonl",
            "host.jsonl",
            "hostprocs.jsonl",
            "fpm.jsonl",
            "pg.jsonl",
            "nginx.jsonl",
            "node.jsonl",
            "sampler-errors.jsonl",
        ] {
            assert!(names.contains(&n.to_string()), "{n}: {names:?}");
        }
        assert_eq!(
            [SampleFile::Cgroup, SampleFile::Source("fpm")].map(SampleFile::name),
            ["cgroup", "fpm"]
        );
        assert_eq!(
            SampleFile::Source("node").count_key(),
            None,
            "cut, not sampled"
        );
        // the recorded manifests' keys
        let keys: Vec<_> = ["fpm", "pg"]
            .map(|n| SampleFile::Source(n).count_key().unwrap())
            .to_vec();
        assert_eq!(keys, ["fpm_samples", "pg_samples"]);
    }
}
