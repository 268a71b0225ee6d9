//! The load phases of [`DockerEngine`]: k6 generators created and started paused (or gated),
//! sampler agents on engines off this machine, the resume on the aligned instant with the
//! samplers and progress line beside it, and the collection of what the load left.
use std::time::Duration;

use crate::rundir::measurements::K6Resume;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use super::docker_engine::DockerEngine;
use super::generators::{self, Agent};
use super::progress::Progress;
use crate::docker::{self, ExitStatus};
use crate::load;
use crate::plan::{Alignment, Slot};
use crate::rundir::Layout;
use crate::sample::{self, SamplerTargets};
use crate::session::engine::{GeneratorEnd, LoadSpec};
use crate::session::records::{Record, Records};

/// Seconds between k6 leaving its start gate and its test clock starting (init, VU
/// pre-allocation); the gate opens this much before the aligned instant (generators whose
/// API this machine cannot reach, which cannot be resumed).
const K6_STARTUP: Duration = Duration::from_millis(1500);
/// The generators' containers start this long before their gate opens (they sleep in it).
const GATE_LEAD: chrono::Duration = chrono::Duration::seconds(2);
/// How long k6 may take to parse its script and pre-allocate VUs before it reports paused.
const K6_INIT_TIMEOUT: Duration = Duration::from_secs(120);

/// When a gated generator leaves its gate: k6's start-up before the aligned instant.
fn gate_launch(al: &Alignment) -> DateTime<Utc> {
    al.k6_start - chrono::Duration::from_std(K6_STARTUP).unwrap_or_default()
}

fn api_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .context("building the HTTP client for k6's API")
}

impl DockerEngine<'_> {
    /// Generators ready: created (scripts copied in), sampler agents created off this machine,
    /// and, when this machine reaches their APIs, started paused until k6 reports paused.
    pub(super) async fn ready_generators(
        &mut self,
        load: &LoadSpec,
        rec: &mut Records,
    ) -> Result<bool> {
        let (env, lg) = (self.env, self.env.loadgen);
        let exp = self.experiment()?.clone();
        let cpuset = env.layout.cpuset(Slot::Loadgen);
        let paused = lg.docker.endpoint().is_on_this_machine();
        let gens = generators::create(
            lg,
            self.stack()?,
            exp.lab.as_str(),
            &self.round.run_id,
            &load.plan,
            env.generators,
            &load.out_dir,
            &cpuset,
            &env.repo_root.join("labs/k6"),
            paused,
        )
        .await?;
        self.round.gens = gens;
        self.round.paused = paused;
        rec.push(Record::K6Command(
            self.round.gens.first().map(|g| g.inv.shell_line()),
        ));
        self.create_agents(&cpuset).await?;
        if paused {
            let stack = self.round.stack.as_ref().context("the stack is not up")?;
            generators::start(lg, stack, &mut self.round.gens).await?;
            let vus = self.wait_all_paused().await?;
            rec.push(Record::K6VusAllocated(vus));
        }
        Ok(paused)
    }

    /// Sampler agents on engines that are not this machine's: one on the stack's engine, one
    /// on the generators' engine (a single one when both are the same endpoint).
    async fn create_agents(&mut self, cpuset: &str) -> Result<()> {
        let (env, lg) = (self.env, self.env.loadgen);
        if env.no_samplers {
            return Ok(());
        }
        let lab = self.experiment()?.lab.as_str();
        let run_id = self.round.run_id.clone();
        let stack_off_host = *env.docker.endpoint() != docker::Endpoint::Local;
        let same_engine = lg.docker.endpoint() == env.docker.endpoint();
        if stack_off_host {
            let a = Agent::create(env.docker, env.images, &run_id, lab, cpuset, "stack").await?;
            self.round
                .agents
                .push((a, lg.off_host && same_engine, true));
        }
        if lg.off_host && !(stack_off_host && same_engine) {
            let a = Agent::create(&lg.docker, &lg.images, &run_id, lab, cpuset, "loadgen").await?;
            self.round.agents.push((a, true, false));
        }
        Ok(())
    }

    /// Wait until every started generator reports paused; returns the VUs they allocated.
    async fn wait_all_paused(&self) -> Result<u64> {
        let api = api_client()?;
        let lg = self.env.loadgen;
        let mut vus = 0;
        for g in &self.round.gens {
            let addr = g
                .api_addr
                .as_deref()
                .context("k6's API is not reachable: cannot resume it")?;
            let (d, id) = (&lg.docker, g.id.clone());
            let st = load::control::wait_paused(&api, addr, K6_INIT_TIMEOUT, || async {
                d.inspect_container(&id)
                    .await
                    .map(|i| i.running)
                    .unwrap_or(false)
            })
            .await
            .map_err(|e| {
                anyhow::Error::new(e).context(format!("waiting for {} to initialise", g.name))
            })?;
            vus += st.vus_max;
        }
        Ok(vus)
    }

    /// Arm the start: gated generators get their gate instant; perflab moves to the load
    /// generator's CPUs. Returns when to wake before the start.
    pub(super) async fn arm_start(
        &mut self,
        al: &Alignment,
        rec: &mut Records,
    ) -> Result<DateTime<Utc>> {
        let until = if self.round.paused {
            al.k6_start
        } else {
            let lg = self.env.loadgen;
            self.round.gate_ns =
                generators::set_gate(lg, &self.round.gens, gate_launch(al)).await?;
            gate_launch(al) - GATE_LEAD
        };
        // Measurement: the orchestrator moves to the load generator's CPUs before the start.
        let loadgen = self.env.layout.get(Slot::Loadgen).indices();
        match sample::pin_process_to(&loadgen) {
            Ok(_) => self.round.pinned = true,
            Err(e) => rec.push(Record::Caveat(format!(
                "could not pin perflab to the load generator's CPUs: {e}"
            ))),
        }
        // The samplers start before the instant: a cgroup CPU figure is read between two
        // samples, so the first step's window needs one before its start (started after k6,
        // a --quick run's first 5 s step had samples covering about 4 s of it: under the 90 %
        // rule, its CPU figures unusable).
        if let Some(dir) = self.round.sample_dir.take() {
            self.start_samplers(&dir, rec).await?;
        }
        Ok(until)
    }

    /// The sampler targets, the agents on other engines, and the samplers writing into `dir`'s
    /// `samples/`.
    async fn start_samplers(&mut self, dir: &std::path::Path, rec: &mut Records) -> Result<()> {
        let targets = self.sampler_targets(rec).await?;
        self.start_agents(rec).await?;
        let samplers = sample::Samplers::start(
            &Layout::new(dir).sample_files(),
            targets,
            Default::default(),
        )
        .context("starting samplers")?;
        self.round.samplers = Some(samplers);
        Ok(())
    }

    /// Start on the instant: resume the paused generators together (or start the gated ones),
    /// then the samplers, the agents and the progress line.
    pub(super) async fn start_on_instant(
        &mut self,
        load: &LoadSpec,
        al: &Alignment,
        rec: &mut Records,
    ) -> Result<()> {
        let lg = self.env.loadgen;
        if self.round.paused {
            self.resume_all(al, rec).await?;
        } else {
            let stack = self.round.stack.as_ref().context("the stack is not up")?;
            generators::start(lg, stack, &mut self.round.gens).await?;
        }
        self.record_generators(rec).await;
        if self.round.samplers.is_none() {
            self.start_samplers(&load.out_dir, rec).await?;
        }
        if let Some(feed) = &self.env.live {
            let run = self.round.run_dir.file_name().map(|n| n.to_string_lossy());
            feed.begin(&crate::live::Begin {
                run: run.as_deref().unwrap_or(&self.round.run_id),
                plan: &load.plan,
                layout: self.env.layout,
                k6_start: al.k6_start,
                run_dir: &self.round.run_dir,
                samples: &Layout::new(&load.out_dir).sample_files().dir,
            });
        }
        self.round.progress = Some(Progress::start(
            &load.plan,
            al.k6_start,
            self.round
                .gens
                .iter()
                .filter_map(|g| g.api.clone())
                .collect(),
            self.env.quiet,
            self.env.live.clone(),
        ));
        Ok(())
    }

    async fn resume_all(&self, al: &Alignment, rec: &mut Records) -> Result<()> {
        let api = api_client()?;
        let resume_sent = Utc::now();
        let resumed = futures_util::future::join_all(
            self.round
                .gens
                .iter()
                .filter_map(|g| g.api_addr.as_deref())
                .map(|addr| load::control::resume(&api, addr)),
        )
        .await;
        let resume_done = Utc::now();
        for r in resumed {
            r.context("resuming k6 through its API")?;
        }
        rec.push(Record::K6Resume(K6Resume {
            sent_at: resume_sent,
            answered_at: resume_done,
            late_ms: (resume_sent - al.k6_start).num_milliseconds(),
            latency_ms: (resume_done - resume_sent).num_milliseconds(),
        }));
        Ok(())
    }

    /// The generators' placement, the caveat for several of them, k6's start time.
    async fn record_generators(&self, rec: &mut Records) {
        let (lg, n) = (self.env.loadgen, self.env.generators);
        let cpuset = self.env.layout.cpuset(Slot::Loadgen);
        let gens = &self.round.gens;
        rec.push(Record::Generators(generators::placement_json(
            lg,
            gens,
            &cpuset,
            self.round.gate_ns,
        )));
        if n > 1 {
            rec.push(Record::Caveat(format!(
                "{n} load generators (k6 execution segments) share the load generator's CPUs {cpuset} on {}",
                if lg.remote { lg.docker.endpoint().to_string() } else { "this host".into() }
            )));
        }
        if let Some(g) = gens.first() {
            let info = lg.docker.inspect_container(&g.id).await.ok();
            rec.push(Record::K6StartedAt(info.and_then(|i| i.started_at)));
        }
    }

    async fn sampler_targets(&self, rec: &mut Records) -> Result<SamplerTargets> {
        if self.env.no_samplers {
            rec.push(Record::Caveat(
                "server-side samplers off (--no-samplers): only host CPU, PSI, dockerd and perflab CPU were sampled".into(),
            ));
            return Ok(SamplerTargets::default());
        }
        let stack_off_host = *self.env.docker.endpoint() != docker::Endpoint::Local;
        let mut containers = if stack_off_host {
            Vec::new()
        } else {
            self.stack_targets().await?
        };
        if !self.env.loadgen.off_host {
            containers.extend(generators::targets(&self.round.gens));
        }
        let settings = &self.experiment()?.stack;
        let stack = self.stack()?;
        let lab = crate::lab::descriptor(stack.lab);
        Ok(SamplerTargets {
            containers,
            // the sources this experiment reads (an exec source only when it asks for it)
            sources: (lab.info().sources.iter())
                .filter(|s| lab.samples(s.name, settings))
                .collect(),
            entry_url: Some(stack.entry_url.clone()),
            pg: self.round.pg.clone(),
            exec: Some(crate::sample::ExecWay {
                docker: self.env.docker.clone(),
                containers: (stack.containers.iter())
                    .map(|(role, c)| (*role, c.id.clone()))
                    .collect(),
            }),
        })
    }

    async fn start_agents(&mut self, rec: &mut Records) -> Result<()> {
        for (a, k6, stack_too) in std::mem::take(&mut self.round.agents) {
            let mut t = Vec::new();
            if k6 {
                t.extend(generators::targets(&self.round.gens));
            }
            if stack_too {
                t.extend(self.stack_targets().await?);
            }
            match a.start(&t).await {
                Ok(()) => self.round.started_agents.push(a),
                Err(e) => rec.push(Record::Caveat(format!(
                    "no CPU samples from {}: the sampler agent did not start: {e:#}",
                    a.docker.endpoint()
                ))),
            }
        }
        Ok(())
    }

    /// Collect the load: samplers and progress stopped, agents' samples read back, perflab
    /// unpinned, the database's commits counted, the generators' files and logs out.
    pub(super) async fn collect_generators(
        &mut self,
        load: &LoadSpec,
        statuses: Vec<ExitStatus>,
        rec: &mut Records,
    ) -> Result<Vec<GeneratorEnd>> {
        if let Some(s) = self.round.samplers.take() {
            rec.push(Record::Samplers(s.stop().await));
        }
        if let Some(p) = self.round.progress.take() {
            p.finish().await;
        }
        for a in std::mem::take(&mut self.round.started_agents) {
            match a.finish(&Layout::new(&load.out_dir)).await {
                Ok(lines) => rec.push(Record::SamplerAgentLines(a.role.clone(), lines as u64)),
                Err(e) => rec.push(Record::Caveat(format!(
                    "the sampler agent on {} failed: {e:#}",
                    a.docker.endpoint()
                ))),
            }
        }
        self.unpin();
        if let (Some(c), Some(before)) = (&self.round.pg, self.round.commits_before)
            && let Ok(after) = super::db::xact_commit(c).await
        {
            rec.push(Record::PgXactCommitDelta(after - before));
        }
        let lg = self.env.loadgen;
        let logs = generators::collect(lg, &self.round.gens).await?;
        super::docker_engine::record_first_requests(rec, &self.round.gens, self.env.quiet);
        // The generators are spent: another load on this stack creates its own (same names).
        let gens = std::mem::take(&mut self.round.gens);
        for g in &gens {
            lg.docker
                .remove_container(&g.id)
                .await
                .with_context(|| format!("removing {}", g.name))?;
        }
        Ok(gens
            .iter()
            .zip(statuses)
            .zip(logs)
            .map(|((g, status), log)| GeneratorEnd {
                name: g.name.clone(),
                status,
                log,
            })
            .collect())
    }

    pub(super) fn unpin(&mut self) {
        let all = crate::plan::layout::online_cpus()
            .map(|c| c.indices())
            .unwrap_or_default();
        if self.round.pinned && !all.is_empty() {
            let _ = sample::pin_process_to(&all);
            self.round.pinned = false;
        }
    }
}
