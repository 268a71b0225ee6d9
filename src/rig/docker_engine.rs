//! The real [`Engine`]: the lab's stack through `stack` (Docker), the harness's PostgreSQL
//! connection, the k6 generators (`generators`) and the samplers; what every round shares is
//! [`DockerEnv`], what one round holds is [`DockerEngine`]'s state. The load phases' half is in
//! `docker_load`.
use std::path::PathBuf;
use std::sync::Arc;

use crate::rundir::measurements::{self, PublishedEntry, containers_of};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use super::{generators, progress::Progress};
use crate::docker::placement::Placement;
use crate::docker::{self, Docker, ExitStatus};
use crate::experiment::Experiment;
use crate::images::ImageSet;
use crate::plan::{Alignment, CpuLayout};
use crate::rundir::layout::K6Dir;
use crate::sample::{self, ContainerTarget};
use crate::session::engine::{Engine, GeneratorEnd, LoadSpec, RoundContext};
use crate::session::records::{Record, Records};
use crate::session::signals::Interrupt;
use crate::stack::{LabStack, Pinning, StartOptions, warmup};

/// What every round of a command shares: engines, images, layout, placement.
#[derive(Clone)]
pub(crate) struct DockerEnv<'a> {
    pub docker: &'a Docker,
    pub images: &'a ImageSet,
    pub layout: &'a CpuLayout,
    pub quiet: bool,
    /// Sample only the host (CPU, PSI, dockerd, perflab), not the containers (benchmarks).
    pub no_samplers: bool,
    /// The engine of the load generators (the stack's, or another one).
    pub loadgen: &'a generators::LoadgenEngine,
    /// Load generators per round (execution segments of one schedule).
    pub generators: u32,
    pub placement: &'a Placement,
    /// The stack engine's facts (its daemon id tells whether another endpoint is the same daemon).
    pub stack_engine: Option<docker::EngineFacts>,
    /// The stack engine's clock against the orchestrator's.
    pub stack_clock: Option<docker::ClockOffset>,
    pub repo_root: PathBuf,
    /// `--live`: the live page's feed (each load's plan, k6's polls, the samplers' new lines).
    pub live: Option<crate::live::Feed>,
}

/// One round's Docker-side state, filled phase by phase.
#[derive(Default)]
pub(super) struct RoundState {
    pub run_id: String,
    pub experiment: Option<Experiment>,
    pub run_dir: PathBuf,
    pub stack: Option<LabStack>,
    pub pg: Option<Arc<tokio_postgres::Client>>,
    pub commits_before: Option<i64>,
    pub gens: Vec<generators::Generator>,
    /// Sampler agents on engines off this machine: (agent, samples k6, samples the stack).
    pub agents: Vec<(generators::Agent, bool, bool)>,
    pub started_agents: Vec<generators::Agent>,
    pub paused: bool,
    pub gate_ns: i64,
    pub pinned: bool,
    pub samplers: Option<sample::Samplers>,
    /// Where this load's samplers write (`samples/`), set when its generators are ready: the
    /// samplers start while the start is armed, before the instant.
    pub sample_dir: Option<PathBuf>,
    pub progress: Option<Progress>,
    /// The app's freeze during this load (`load.pause`).
    pub freeze: Option<super::freeze::Scheduled>,
    /// The load's timed actions (`load.actions`).
    pub actions: Option<super::actions::Scheduled>,
    /// The trigger during this load (`load.trigger`).
    pub trigger: Option<super::trigger::Scheduled>,
    /// The host's speed was read before the first load of the round (a `--fit` restack warms
    /// up again: that first reading stays the round's).
    pub speed_before: bool,
}

/// The real engine of a session.
pub(crate) struct DockerEngine<'a> {
    pub(super) env: &'a DockerEnv<'a>,
    pub(super) round: RoundState,
}

impl<'a> DockerEngine<'a> {
    pub(crate) fn new(env: &'a DockerEnv<'a>) -> DockerEngine<'a> {
        DockerEngine {
            env,
            round: RoundState::default(),
        }
    }

    pub(super) fn stack(&self) -> Result<&LabStack> {
        self.round.stack.as_ref().context("the stack is not up")
    }

    pub(super) fn experiment(&self) -> Result<&Experiment> {
        self.round.experiment.as_ref().context("no round begun")
    }

    fn stack_off_host(&self) -> bool {
        *self.env.docker.endpoint() != docker::Endpoint::Local
    }

    /// Where the stack and generators run, as the manifest records it.
    fn record_placement(&self, rec: &mut Records, stack: &LabStack) {
        let (env, lg) = (self.env, self.env.loadgen);
        let id = |f: &Option<docker::EngineFacts>| f.as_ref().and_then(|f| f.id.clone());
        rec.push(Record::Placement(measurements::Placement {
            loadgen: lg.docker.endpoint().to_string(),
            db: env.docker.endpoint().to_string(),
            app: env.docker.endpoint().to_string(),
            loadgen_remote: lg.remote,
            published_entry: PublishedEntry {
                ip: stack.entry_ip.clone(),
                port: stack.entry_port,
                published: Some(stack.entry_published),
            },
            loadgen_engine: lg.facts.clone(),
            stack_engine: env.stack_engine.clone(),
            loadgen_clock_offset: lg.clock,
            stack_clock_offset: env.stack_clock,
            same_daemon_as_stack: lg
                .remote
                .then(|| id(&lg.facts).is_some() && id(&lg.facts) == id(&env.stack_engine)),
        }));
        // (An engine elsewhere publishes by design: the two-machine mode.)
        if let Some(why) = &stack.access.fallback
            && env.docker.endpoint().is_on_this_machine()
        {
            rec.push(Record::Caveat(format!(
                "this host cannot reach the stack's containers at their addresses ({why}): the entry point, PostgreSQL{} were published on {}, where every local user can reach them",
                if lg.remote { "" } else { " and k6's API" },
                stack.entry_ip
            )));
        }
        if let Some(c) = env.stack_clock.filter(|c| c.offset_ms.abs() > 10.0) {
            rec.push(Record::Caveat(format!(
                "the stack's engine clock is {:+.1} ms off the orchestrator's (+- {:.1} ms; goal within 10 ms): timestamps written there are not corrected",
                c.offset_ms,
                c.rtt_ms / 2.0
            )));
        }
        if let Some(c) = lg.clock {
            rec.push(Record::LoadgenClockOffsetMs(c.offset_ms));
            if c.offset_ms.abs() > 10.0 {
                rec.push(Record::Caveat(format!(
                    "the load generator's engine clock is {:+.1} ms off the orchestrator's (+- {:.1} ms; goal within 10 ms): gates are corrected, its timestamps are not",
                    c.offset_ms,
                    c.rtt_ms / 2.0
                )));
            }
        }
    }

    /// The stack's containers as sampler targets (init pids on the stack engine's host).
    pub(super) async fn stack_targets(&self) -> Result<Vec<ContainerTarget>> {
        sample::stack::targets(self.stack()?, self.env.docker).await
    }

    async fn teardown_on(docker: &Docker, run_id: &str) -> Result<()> {
        docker
            .remove_labelled_settled(&[format!("{}={run_id}", docker::LABEL_RUN)])
            .await?;
        Ok(())
    }
}

impl Engine for DockerEngine<'_> {
    async fn begin(&mut self, round: &RoundContext<'_>, rec: &mut Records) -> Result<()> {
        self.round = RoundState {
            run_id: round.run_id.to_string(),
            experiment: Some(round.experiment.clone()),
            run_dir: round.dir.path.clone(),
            ..Default::default()
        };
        let images = self.env.images;
        rec.push(Record::Components(images.versions_flat()));
        rec.push(Record::Images(images.tags_and_ids()));
        rec.push(Record::Suite(images.suite.as_str().to_string()));
        if let Ok(v) = self.env.docker.engine_version().await {
            rec.push(Record::Component("docker-engine".into(), v));
        }
        Ok(())
    }

    fn set_experiment(&mut self, e: &Experiment) {
        self.round.experiment = Some(e.clone());
    }

    async fn stack_up(&mut self, rec: &mut Records) -> Result<()> {
        let pinning = Pinning::from(self.env.layout);
        let pl = self.env.placement;
        let off_host = self.stack_off_host();
        let opts = StartOptions {
            publish_ip: (pl.loadgen_remote() || pl.publish_explicit || off_host)
                .then(|| pl.publish_on.clone()),
            publish_pg_ip: off_host.then(|| pl.publish_on.clone()),
            ..Default::default()
        };
        let exp = self.experiment()?.clone();
        let run_id = self.round.run_id.clone();
        // The slot is filled as soon as the stack exists, so teardown and logs find it.
        let s = LabStack::start(
            self.env.docker,
            &exp,
            &pinning,
            &run_id,
            self.env.images,
            &opts,
        )
        .await
        .context("starting the lab stack")?;
        rec.push(Record::StackStarted {
            start_s: s.start_seconds,
            containers: Some(containers_of(&s.containers)),
        });
        self.record_placement(rec, &s);
        self.round.stack = Some(s);
        Ok(())
    }

    async fn warm_up(&mut self, rec: &mut Records) -> Result<()> {
        let stack = self.stack()?.clone();
        let exp = self.experiment()?.clone();
        // The harness's one PostgreSQL connection (commit counter and pg sampler) is opened
        // before the warm-up, so experiments that fill every slot on purpose (exp2-pgconn)
        // cannot lock it out.
        if let Some(pg) = &stack.pg {
            let c = pg
                .connect()
                .await
                .context("connecting to PostgreSQL for the samplers")?;
            let slots = super::db::pg_slots(&c)
                .await
                .context("reading PostgreSQL's connection settings")?;
            rec.push(Record::PostgresSlots(slots));
            self.round.pg = Some(Arc::new(c));
        }
        let wu = warmup::warm_up(&stack, &exp).await.context("warm-up")?;
        rec.push(Record::Warmup((&wu).into()));
        super::db::smoke_check(&stack.entry_url, &exp.load.endpoint).await?;
        if let Some(c) = &self.round.pg {
            self.round.commits_before = Some(super::db::xact_commit(c).await?);
        }
        // The host's speed before the first load (a `--fit` restack warms up again: the
        // reading before its calibration stays the run's first).
        if !self.round.speed_before {
            let before = crate::host::speed::measure_online().await?;
            rec.push(Record::HostSpeedBefore(before));
            self.round.speed_before = true;
        }
        Ok(())
    }

    async fn generators_ready(&mut self, load: &LoadSpec, rec: &mut Records) -> Result<bool> {
        self.round.sample_dir = Some(load.out_dir.clone());
        self.ready_generators(load, rec).await
    }

    async fn arm(&mut self, al: &Alignment, rec: &mut Records) -> Result<DateTime<Utc>> {
        self.arm_start(al, rec).await
    }

    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    async fn sleep_until(&mut self, t: DateTime<Utc>) -> Result<()> {
        tokio::time::sleep((t - Utc::now()).to_std().unwrap_or_default()).await;
        Ok(())
    }

    async fn start_load(
        &mut self,
        load: &LoadSpec,
        al: &Alignment,
        rec: &mut Records,
    ) -> Result<()> {
        self.start_on_instant(load, al, rec).await?;
        if let Some(p) = &load.plan.pause {
            let ids = (self.stack()?.containers.values())
                .filter(|c| c.role.is_app_box())
                .map(|c| c.id.clone())
                .collect();
            let f = super::freeze::schedule(self.env.docker, ids, &load.label, al, p);
            self.round.freeze = Some(f);
        }
        if load.measured && !load.plan.actions.is_empty() {
            let stack = self.stack()?;
            let of = |role: &str| {
                let r = crate::lab::Role::named(role)?;
                stack.containers.get(&r).map(|c| c.id.clone())
            };
            let a = super::actions::schedule(self.env.docker, &load.plan.actions, al, of);
            self.round.actions = Some(a);
        }
        if let Some(p) = &load.plan.trigger {
            let stack = self.stack()?;
            let id = (stack.containers.values())
                .find(|c| c.role.column() == p.role)
                .map(|c| c.id.clone());
            let t = super::trigger::schedule(self.env.docker, id, &stack.entry_url, al, p);
            self.round.trigger = Some(t);
        }
        Ok(())
    }

    async fn wait_load(&mut self, stop: Interrupt) -> Result<Vec<ExitStatus>> {
        let statuses = generators::wait_all(self.env.loadgen, &self.round.gens, || {
            let mut i = stop.clone();
            async move {
                i.wait().await;
            }
        })
        .await;
        let mut out = Vec::new();
        for (g, st) in self.round.gens.iter().zip(statuses) {
            out.push(st.with_context(|| format!("waiting for {}", g.name))?);
        }
        Ok(out)
    }

    async fn collect_load(
        &mut self,
        load: &LoadSpec,
        statuses: Vec<ExitStatus>,
        rec: &mut Records,
    ) -> Result<Vec<GeneratorEnd>> {
        if let Some(f) = self.round.freeze.take() {
            rec.push(Record::Freeze(f.finish().await));
        }
        if let Some(a) = self.round.actions.take() {
            a.finish()
                .await
                .into_iter()
                .for_each(|r| rec.push(Record::Action(r)));
        }
        if let Some(t) = self.round.trigger.take() {
            rec.push(Record::Trigger(t.finish().await));
        }
        self.collect_generators(load, statuses, rec).await
    }

    async fn collect_logs(&mut self, rec: &mut Records) -> Result<()> {
        // The host's speed after the last load, beside the one taken before the first; its
        // failure is a caveat, never a reason to leave the logs behind.
        if self.round.speed_before {
            match crate::host::speed::measure_online().await {
                Ok(r) => rec.push(Record::HostSpeedAfter(r)),
                Err(e) => rec.push(Record::Caveat(format!(
                    "host speed after the loads not measured: {e:#}"
                ))),
            }
        }
        let (Some(stack), Some(exp)) = (&self.round.stack, &self.round.experiment) else {
            return Ok(());
        };
        stack
            .collect_logs(
                self.env.docker,
                exp,
                &crate::rundir::Layout::new(&self.round.run_dir).collect_paths(),
            )
            .await
    }

    async fn teardown(&mut self) -> Result<()> {
        let run_id = self.round.run_id.clone();
        if run_id.is_empty() {
            return Ok(());
        }
        if let Some(f) = self.round.freeze.take() {
            // a load that failed while measuring left its freeze: thaw before removing
            f.finish().await;
        }
        if let Some(a) = self.round.actions.take() {
            a.finish().await;
        }
        if let Some(t) = self.round.trigger.take() {
            // and its CPU cut: lifted before removing
            t.finish().await;
        }
        let mut r = Self::teardown_on(self.env.docker, &run_id).await;
        let lg = self.env.loadgen;
        if lg.remote
            && let Err(e) = Self::teardown_on(&lg.docker, &run_id).await
        {
            r = Err(e.context(format!("on {}", lg.docker.endpoint())));
        }
        // Whatever a load left running (an interrupt or a failure mid-load) stops first.
        if let Some(s) = self.round.samplers.take() {
            s.stop().await;
        }
        if let Some(p) = self.round.progress.take() {
            p.finish().await;
        }
        self.unpin();
        // The stack's handles are gone with its containers.
        self.round.stack = None;
        self.round.pg = None;
        r
    }
}

/// Each generator's first request (unix ms, from its CSV) and the spread between them.
pub(super) fn record_first_requests(
    rec: &mut Records,
    gens: &[generators::Generator],
    quiet: bool,
) {
    let firsts: Vec<Option<i64>> = gens
        .iter()
        .map(|g| {
            K6Dir::new(&g.out_dir)
                .csv_candidates()
                .into_iter()
                .find(|p| p.exists())
                .and_then(|p| generators::first_request_ms(&p))
        })
        .collect();
    let spread_ms = crate::analyze::merge::start_spread_ms(&firsts);
    rec.push(Record::K6FirstRequests { firsts, spread_ms });
    if let Some(spread) = spread_ms
        && spread > 100
    {
        let msg =
            format!("the load generators' first requests are {spread} ms apart (goal <= 100 ms)");
        if !quiet {
            crate::say!("warning: {msg}");
        }
        rec.push(Record::Caveat(msg));
    }
}
