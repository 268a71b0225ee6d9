//! One round of one experiment: run directory and manifest, a fresh stack, warm-up, smoke
//! check, minute-aligned k6 (one or several generators, on this or another engine: see
//! `generators`) in pinned containers with the samplers beside it, log collection, teardown,
//! report. Breaking the system is a successful run; only the harness
//! failing (or an interrupt) is not.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use chrono::Utc;
use serde_json::json;

use super::generators;
use super::progress::Progress;
use super::signals::Interrupt;
use crate::cli::catalog::Resolved;
use crate::docker::{self, Docker, ExitStatus};
use crate::experiment::Experiment;
use crate::images::ImageSet;
use crate::load;
use crate::plan::{self, CpuLayout, Plan, Slot};
use crate::rundir::{Manifest, RunDir, RunState};
use crate::sample::{self, SamplerTargets};
use crate::stack::{LabStack, Pinning, StartOptions, warmup};

/// Seconds between k6 leaving its start gate and its test clock starting (init, VU
/// pre-allocation); the gate opens this much before the aligned instant (generators whose
/// API this machine cannot reach, which cannot be resumed).
const K6_STARTUP: Duration = Duration::from_millis(1500);
/// The generators' containers start this long before their gate opens (they sleep in it).
const GATE_LEAD: chrono::Duration = chrono::Duration::seconds(2);
/// With `--no-align`, k6's test clock starts this long from now (room to start N containers).
const NO_ALIGN_LEAD: Duration = Duration::from_millis(3500);
/// How long k6 may take to parse its script and pre-allocate VUs before it reports paused.
const K6_INIT_TIMEOUT: Duration = Duration::from_secs(120);

/// What every round shares.
pub struct RoundEnv<'a> {
    pub docker: &'a Docker,
    pub images: &'a ImageSet,
    pub layout: &'a CpuLayout,
    pub out_root: &'a Path,
    pub overrides: &'a [String],
    pub align: bool,
    pub quiet: bool,
    /// Sample only the host (CPU, PSI, dockerd, perflab), not the containers (benchmarks).
    pub no_samplers: bool,
    /// The engine of the load generators (the stack's, or another one).
    pub loadgen: &'a generators::LoadgenEngine,
    /// Load generators per round (execution segments of one schedule).
    pub generators: u32,
    pub placement: &'a super::placement::Placement,
    /// The stack engine's facts (its daemon id tells whether another endpoint is the same daemon).
    pub stack_engine: Option<docker::EngineFacts>,
    /// The stack engine's clock against the orchestrator's.
    pub stack_clock: Option<docker::ClockOffset>,
    pub interrupt: Interrupt,
    pub repo_root: PathBuf,
}

/// How a round ended.
#[derive(Debug, Clone)]
pub struct RoundOutcome {
    pub dir: PathBuf,
    pub state: RunState,
    pub reason: Option<String>,
    /// The report's one-line verdict, when a report was written.
    pub verdict: Option<String>,
}

/// Why the measurement part stopped early.
pub(crate) enum Stop {
    Interrupted(&'static str),
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Self {
        Stop::Failed(e)
    }
}

/// Run one round. Returns Err only when the run directory itself could not be created.
pub async fn run_round(env: &RoundEnv<'_>, r: &Resolved, round: u32) -> Result<RoundOutcome> {
    let exp = &r.experiment;
    let dir = RunDir::create(env.out_root, &exp.id, round)?;
    let run_id = format!("{}{}-{}", super::sweep::RUN_ID_PREFIX, exp.id, dir.name()).to_lowercase();
    let mut manifest = Manifest::new(
        &dir,
        exp.clone(),
        env.overrides.to_vec(),
        r.plan.clone(),
        env.layout.clone(),
    );
    manifest.components = env.images.versions_flat();
    manifest.images = env
        .images
        .images
        .iter()
        .map(|(role, i)| {
            (
                role.image_name().to_owned(),
                format!("{} ({})", i.tag, i.id),
            )
        })
        .collect();
    manifest.measurements.insert("run_id".into(), json!(run_id));
    manifest
        .measurements
        .insert("suite".into(), json!(env.images.suite.as_str()));
    if let Ok(v) = env.docker.engine_version().await {
        manifest.components.insert("docker-engine".into(), v);
    }
    dir.write_manifest(&manifest)?;
    if !env.quiet {
        crate::say!("run {} -> {}", exp.id, dir.path.display());
    }

    let mut stack: Option<LabStack> = None;
    let result = measure(env, exp, &r.plan, &dir, &run_id, &mut manifest, &mut stack).await;
    // Whatever happened: logs out, containers and network gone.
    if let Some(s) = &stack
        && let Err(e) = s.collect_logs(env.docker, exp, &dir.path).await
    {
        manifest
            .caveats
            .push(format!("collecting logs failed: {e:#}"));
    }
    let mut teardown = teardown(env.docker, &run_id).await;
    if env.loadgen.remote
        && let Err(e) = self::teardown(&env.loadgen.docker, &run_id).await
    {
        teardown = Err(e.context(format!("on {}", env.loadgen.docker.endpoint())));
    }
    if let Err(e) = &teardown {
        manifest
            .caveats
            .push(format!("teardown failed: {e:#}; run `perflab cleanup`"));
    }
    dir.write_manifest(&manifest)?;

    let (state, reason) = match result {
        Ok(()) => (RunState::Complete, None),
        Err(Stop::Interrupted(sig)) => (
            RunState::Aborted,
            Some(format!("interrupted by {sig}; partial data kept")),
        ),
        Err(Stop::Failed(e)) => (RunState::Failed, Some(format!("{e:#}"))),
    };
    // A report is worth writing whenever k6 produced data, even for an aborted run.
    let mut verdict = None;
    let mut reason = reason;
    let mut state = state;
    if dir.file("k6/requests.csv.gz").exists() || dir.file("k6/g0/requests.csv.gz").exists() {
        match write_report(&dir.path) {
            Ok(v) => verdict = Some(v),
            Err(e) if state == RunState::Complete => {
                state = RunState::Failed;
                reason = Some(format!("report: {e:#}"));
            }
            Err(_) => {}
        }
    }
    dir.mark(state, reason.as_deref())?;
    Ok(RoundOutcome {
        dir: dir.path.clone(),
        state,
        reason,
        verdict,
    })
}

/// Analyze the run directory and write report.txt/.md/.json and the plots. Returns a verdict line.
pub fn write_report(dir: &Path) -> Result<String> {
    let report = crate::report::render_run_dir(dir)?;
    let fmt = |v: Option<u32>| v.map(|x| format!("{x}")).unwrap_or_else(|| "none".into());
    Ok(match &report.knee_why {
        Some(why) => format!("last passing {}; {why}", fmt(report.last_passing)),
        None => format!(
            "last passing {}, no knee in the steps run",
            fmt(report.last_passing)
        ),
    })
}

async fn teardown(docker: &Docker, run_id: &str) -> Result<()> {
    docker
        .remove_labelled(&[format!("{}={run_id}", docker::LABEL_RUN)])
        .await?;
    Ok(())
}

/// Wait for `fut` unless interrupted first.
pub(crate) async fn or_interrupt<T>(
    interrupt: &Interrupt,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T, Stop> {
    let mut i = interrupt.clone();
    tokio::select! {
        r = fut => r.map_err(Stop::Failed),
        sig = i.wait() => Err(Stop::Interrupted(sig)),
    }
}

async fn measure(
    env: &RoundEnv<'_>,
    exp: &Experiment,
    plan: &Plan,
    dir: &RunDir,
    run_id: &str,
    manifest: &mut Manifest,
    stack_slot: &mut Option<LabStack>,
) -> Result<(), Stop> {
    let pinning = Pinning::from(env.layout);
    let pl = env.placement;
    let stack_off_host = *env.docker.endpoint() != docker::Endpoint::Local;
    let opts = StartOptions {
        publish_ip: (pl.loadgen_remote() || pl.publish_explicit || stack_off_host)
            .then(|| pl.publish_on.clone()),
        publish_pg_ip: stack_off_host.then(|| pl.publish_on.clone()),
        ..Default::default()
    };
    let s = or_interrupt(&env.interrupt, async {
        LabStack::start(env.docker, exp, &pinning, run_id, env.images, &opts)
            .await
            .context("starting the lab stack")
    })
    .await?;
    manifest
        .measurements
        .insert("stack_start_s".into(), json!(s.start_seconds));
    manifest.measurements.insert(
        "containers".into(),
        serde_json::to_value(&s.containers).unwrap_or_default(),
    );
    let stack = stack_slot.insert(s).clone();
    manifest.measurements.insert(
        "placement".into(),
        json!({
            "loadgen": env.loadgen.docker.endpoint().to_string(),
            "db": env.docker.endpoint().to_string(),
            "app": env.docker.endpoint().to_string(),
            "loadgen_remote": env.loadgen.remote,
            "published_entry": {"ip": stack.entry_ip, "port": stack.entry_port},
            "loadgen_engine": env.loadgen.facts,
            "stack_engine": env.stack_engine,
            "loadgen_clock_offset": env.loadgen.clock,
            "stack_clock_offset": env.stack_clock,
            "same_daemon_as_stack": env.loadgen.remote.then(|| {
                env.loadgen.facts.as_ref().and_then(|f| f.id.clone()).is_some()
                    && env.loadgen.facts.as_ref().and_then(|f| f.id.clone())
                        == env.stack_engine.as_ref().and_then(|f| f.id.clone())
            }),
        }),
    );
    if let Some(c) = env.stack_clock.filter(|c| c.offset_ms.abs() > 10.0) {
        manifest.caveats.push(format!(
            "the stack's engine clock is {:+.1} ms off the orchestrator's (+- {:.1} ms; goal within 10 ms): timestamps written there are not corrected",
            c.offset_ms,
            c.rtt_ms / 2.0
        ));
    }
    if let Some(c) = env.loadgen.clock {
        manifest
            .measurements
            .insert("loadgen_clock_offset_ms".into(), json!(c.offset_ms));
        if c.offset_ms.abs() > 10.0 {
            manifest.caveats.push(format!(
                "the load generator's engine clock is {:+.1} ms off the orchestrator's (+- {:.1} ms; goal within 10 ms): gates are corrected, its timestamps are not",
                c.offset_ms,
                c.rtt_ms / 2.0
            ));
        }
    }

    // The harness's one PostgreSQL connection (commit counter and pg sampler) is opened before
    // the warm-up, so experiments that fill every slot on purpose (exp2-pgconn) cannot lock it out.
    let pg_client = match &stack.pg {
        Some(pg) => Some(std::sync::Arc::new(
            pg.connect()
                .await
                .context("connecting to PostgreSQL for the samplers")?,
        )),
        None => None,
    };

    if let Some(c) = &pg_client {
        let slots = pg_slots(c)
            .await
            .context("reading PostgreSQL's connection settings")?;
        manifest
            .measurements
            .insert("postgres_slots".into(), json!(slots));
    }

    let wu = or_interrupt(&env.interrupt, async {
        warmup::warm_up(&stack, exp).await.context("warm-up")
    })
    .await?;
    manifest.measurements.insert(
        "warmup".into(),
        serde_json::to_value(&wu).unwrap_or_default(),
    );
    smoke_check(&stack.entry_url, &exp.load.endpoint).await?;

    let commits_before = match &pg_client {
        Some(c) => Some(xact_commit(c).await?),
        None => None,
    };

    // The load generators, ready to start: scripts copied in, each held by a start gate.
    let lg = env.loadgen;
    let n = env.generators;
    let cpuset = env.layout.cpuset(Slot::Loadgen);
    let paused = lg.docker.endpoint().is_on_this_machine();
    let mut gens = generators::create(
        lg,
        &stack,
        exp.lab.as_str(),
        run_id,
        plan,
        n,
        &dir.path,
        &cpuset,
        &env.repo_root.join("labs/k6"),
        paused,
    )
    .await?;
    manifest.measurements.insert(
        "k6_command".into(),
        json!(gens.first().map(|g| g.inv.shell_line())),
    );
    // Sampler agents on engines that are not this machine's: one on the stack's engine, one on
    // the generators' engine (a single one when both are the same endpoint).
    let stack_off_host = *env.docker.endpoint() != docker::Endpoint::Local;
    let same_engine = lg.docker.endpoint() == env.docker.endpoint();
    let mut agents: Vec<(generators::Agent, bool, bool)> = Vec::new();
    if !env.no_samplers {
        if stack_off_host {
            let a = generators::Agent::create(
                env.docker,
                env.images,
                run_id,
                exp.lab.as_str(),
                &cpuset,
                "stack",
            )
            .await?;
            agents.push((a, lg.off_host && same_engine, true));
        }
        if lg.off_host && !(stack_off_host && same_engine) {
            let a = generators::Agent::create(
                &lg.docker,
                &lg.images,
                run_id,
                exp.lab.as_str(),
                &cpuset,
                "loadgen",
            )
            .await?;
            agents.push((a, true, false));
        }
    }

    // Generators whose REST API this machine reaches start paused (script parsed, VUs
    // allocated) and are resumed together on the planned instant; the others (another
    // machine's engine) wait in their start gate, timed in that engine's clock.
    let api = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .context("building the HTTP client for k6's API")?;
    let mut gate_ns = 0;
    let al = if paused {
        generators::start(lg, &mut gens).await?;
        let mut vus = 0;
        for g in &gens {
            let port = g
                .api_port
                .context("k6's API port is not reachable: cannot resume it")?;
            let (d, id) = (&lg.docker, g.id.clone());
            let st = or_interrupt(&env.interrupt, async {
                load::control::wait_paused(&api, port, K6_INIT_TIMEOUT, || async {
                    d.inspect_container(&id)
                        .await
                        .map(|i| i.running)
                        .unwrap_or(false)
                })
                .await
                .map_err(|e| {
                    anyhow::Error::new(e).context(format!("waiting for {} to initialise", g.name))
                })
            })
            .await?;
            vus += st.vus_max;
        }
        manifest
            .measurements
            .insert("k6_vus_allocated".into(), json!(vus));
        plan::align(Utc::now(), plan, env.align)
    } else {
        // Without alignment the gate still holds every generator to one instant, a moment ahead.
        let al = if env.align {
            plan::align(Utc::now(), plan, true)
        } else {
            plan::align(
                Utc::now() + chrono::Duration::from_std(NO_ALIGN_LEAD).unwrap_or_default(),
                plan,
                false,
            )
        };
        gate_ns = generators::set_gate(lg, &gens, gate_launch(&al)).await?;
        al
    };
    manifest.measurements.insert(
        "alignment".into(),
        serde_json::to_value(&al).unwrap_or_default(),
    );
    dir.write_manifest(manifest)?;
    let until = if paused {
        al.k6_start
    } else {
        gate_launch(&al) - GATE_LEAD
    };
    let wait = (until - Utc::now()).to_std().unwrap_or_default();
    if !env.quiet && wait > Duration::from_secs(1) {
        crate::say!(
            "waiting {:.0} s so the first step starts at {} UTC (--no-align to skip)",
            wait.as_secs_f64(),
            al.first_step_at.format("%H:%M:%S")
        );
    }
    // Measurement: the orchestrator moves to the load generator's CPUs before the start.
    let loadgen = env.layout.get(Slot::Loadgen).indices();
    let pinned = sample::pin_process_to(&loadgen);
    if let Err(e) = &pinned {
        manifest.caveats.push(format!(
            "could not pin perflab to the load generator's CPUs: {e}"
        ));
    }
    or_interrupt(&env.interrupt, async {
        tokio::time::sleep(wait).await;
        Ok(())
    })
    .await?;
    if paused {
        let resume_sent = Utc::now();
        let resumed = futures_util::future::join_all(
            gens.iter()
                .filter_map(|g| g.api_port)
                .map(|port| load::control::resume(&api, port)),
        )
        .await;
        let resume_done = Utc::now();
        for r in resumed {
            r.context("resuming k6 through its API")?;
        }
        manifest.measurements.insert(
            "k6_resume".into(),
            json!({
                "sent_at": resume_sent,
                "answered_at": resume_done,
                "late_ms": (resume_sent - al.k6_start).num_milliseconds(),
                "latency_ms": (resume_done - resume_sent).num_milliseconds(),
            }),
        );
    } else {
        generators::start(lg, &mut gens).await?;
    }
    manifest.measurements.insert(
        "generators".into(),
        generators::placement_json(lg, &gens, &cpuset, gate_ns),
    );
    if n > 1 {
        manifest.caveats.push(format!(
            "{n} load generators (k6 execution segments) share the load generator's CPUs {cpuset} on {}",
            if lg.remote { lg.docker.endpoint().to_string() } else { "this host".into() }
        ));
    }
    if let Some(g) = gens.first() {
        let info = lg.docker.inspect_container(&g.id).await.ok();
        manifest.measurements.insert(
            "k6_started_at".into(),
            json!(info.and_then(|i| i.started_at)),
        );
    }
    let targets = if env.no_samplers {
        manifest.caveats.push(
            "server-side samplers off (--no-samplers): only host CPU, PSI, dockerd and perflab CPU were sampled".into(),
        );
        SamplerTargets::default()
    } else {
        let mut containers = if stack_off_host {
            Vec::new()
        } else {
            stack.sampler_targets(env.docker).await?
        };
        if !lg.off_host {
            containers.extend(generators::targets(&gens));
        }
        SamplerTargets {
            containers,
            fpm_status_url: stack.fpm_status_url.clone(),
            pg: pg_client.clone(),
        }
    };
    let mut started_agents = Vec::new();
    for (a, k6, stack_too) in agents {
        let mut t = Vec::new();
        if k6 {
            t.extend(generators::targets(&gens));
        }
        if stack_too {
            t.extend(stack.sampler_targets(env.docker).await?);
        }
        match a.start(&t).await {
            Ok(()) => started_agents.push(a),
            Err(e) => manifest.caveats.push(format!(
                "no CPU samples from {}: the sampler agent did not start: {e:#}",
                a.docker.endpoint()
            )),
        }
    }
    let samplers = sample::Samplers::start(&dir.path.join("samples"), targets, Default::default())
        .context("starting samplers")?;
    let progress = Progress::start(
        plan,
        al.k6_start,
        gens.iter().filter_map(|g| g.api.clone()).collect(),
        env.quiet,
    );

    let interrupt = env.interrupt.clone();
    let statuses = generators::wait_all(lg, &gens, || {
        let mut i = interrupt.clone();
        async move {
            i.wait().await;
        }
    })
    .await;

    let summary = samplers.stop().await;
    progress.finish().await;
    for a in &started_agents {
        match a.finish(&dir.path.join("samples")).await {
            Ok(lines) => {
                manifest.measurements.insert(
                    format!("sampler_agent_{}_cgroup_lines", a.role),
                    json!(lines),
                );
            }
            Err(e) => manifest.caveats.push(format!(
                "the sampler agent on {} failed: {e:#}",
                a.docker.endpoint()
            )),
        }
    }
    let all = plan::layout::online_cpus()
        .map(|c| c.indices())
        .unwrap_or_default();
    if pinned.is_ok() && !all.is_empty() {
        let _ = sample::pin_process_to(&all);
    }
    manifest.measurements.insert(
        "samplers".into(),
        serde_json::to_value(&summary).unwrap_or_default(),
    );
    if let Some(c) = summary.perflab_cores_mean {
        manifest.measurements.insert(
            "perflab_cpu_pct_of_core".into(),
            json!((c * 1000.0).round() / 10.0),
        );
    }
    if let Some(c) = summary.dockerd_cores_mean {
        manifest.measurements.insert(
            "dockerd_cpu_pct_of_core".into(),
            json!((c * 1000.0).round() / 10.0),
        );
    }
    if let (Some(c), Some(before)) = (&pg_client, commits_before)
        && let Ok(after) = xact_commit(c).await
    {
        manifest
            .measurements
            .insert("pg_xact_commit_delta".into(), json!(after - before));
    }
    let logs = generators::collect(lg, &gens).await?;
    record_first_requests(manifest, &gens, env.quiet);

    let mut codes = Vec::new();
    for (g, st) in gens.iter().zip(statuses) {
        match st.with_context(|| format!("waiting for {}", g.name))? {
            ExitStatus::Cancelled => {
                return Err(Stop::Interrupted(
                    env.interrupt.reason().unwrap_or("a signal"),
                ));
            }
            ExitStatus::Exited(code) => codes.push(code),
        }
    }
    // One code for the run: a harness failure first, else 99 when any instance crossed a threshold.
    let code = codes
        .iter()
        .copied()
        .find(|c| !load::exit_is_outcome(*c))
        .or_else(|| codes.iter().copied().find(|c| *c == 99))
        .unwrap_or(0);
    manifest
        .measurements
        .insert("k6_exit_code".into(), json!(code));
    if n > 1 {
        manifest
            .measurements
            .insert("k6_exit_codes".into(), json!(codes));
    }
    if code == 99 {
        manifest
            .measurements
            .insert("k6_thresholds_crossed".into(), json!(true));
    }
    if load::exit_is_outcome(code) {
        Ok(())
    } else {
        let i = codes.iter().position(|c| *c == code).unwrap_or(0);
        let tail: Vec<&str> = logs[i].lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(Stop::Failed(anyhow!(
            "k6 ({}) exited with code {code} (not a threshold outcome); last lines of its k6.log:\n{}",
            gens[i].name,
            tail.join("\n")
        )))
    }
}

/// When a gated generator leaves its gate: k6's start-up before the aligned instant.
fn gate_launch(al: &plan::Alignment) -> chrono::DateTime<Utc> {
    al.k6_start - chrono::Duration::from_std(K6_STARTUP).unwrap_or_default()
}

/// Each generator's first request (unix ms, from its CSV) and the spread between them.
fn record_first_requests(manifest: &mut Manifest, gens: &[generators::Generator], quiet: bool) {
    let firsts: Vec<Option<i64>> = gens
        .iter()
        .map(|g| {
            ["requests.csv.gz", "requests.csv"]
                .iter()
                .map(|f| g.out_dir.join(f))
                .find(|p| p.exists())
                .and_then(|p| generators::first_request_ms(&p))
        })
        .collect();
    manifest
        .measurements
        .insert("k6_first_request_ms".into(), json!(firsts));
    if let Some(spread) = crate::analyze::merge::start_spread_ms(&firsts) {
        manifest
            .measurements
            .insert("k6_first_request_spread_ms".into(), json!(spread));
        if spread > 100 {
            let msg = format!(
                "the load generators' first requests are {spread} ms apart (goal <= 100 ms)"
            );
            if !quiet {
                crate::say!("warning: {msg}");
            }
            manifest.caveats.push(msg);
        }
    }
}

/// How many of `max_connections` the lab's app can really use, read from the server before the
/// warm-up: PostgreSQL keeps `superuser_reserved_connections` (and, from 16, `reserved_connections`)
/// for privileged roles, and the harness holds its own connections for the samplers.
#[derive(Debug, serde::Serialize)]
struct PgSlots {
    max_connections: i64,
    superuser_reserved: i64,
    reserved: i64,
    harness: i64,
    usable: i64,
}

async fn pg_slots(c: &tokio_postgres::Client) -> Result<PgSlots> {
    let row = c
        .query_one(
            "select current_setting('max_connections')::bigint, \
                    current_setting('superuser_reserved_connections')::bigint, \
                    coalesce(current_setting('reserved_connections', true), '0')::bigint, \
                    (select count(*) from pg_stat_activity \
                      where backend_type = 'client backend' and usename = current_user)::bigint",
            &[],
        )
        .await?;
    let (max, su, res, harness): (i64, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    Ok(PgSlots {
        max_connections: max,
        superuser_reserved: su,
        reserved: res,
        harness,
        usable: (max - su - res - harness).max(0),
    })
}

async fn xact_commit(c: &tokio_postgres::Client) -> Result<i64> {
    let row = c
        .query_one(
            "select coalesce(sum(xact_commit), 0)::bigint from pg_stat_database",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

/// The experiment's endpoint must answer 200 before any load is sent: up to 10 sequential
/// tries (experiments such as exp2-pgconn fail a share of requests by design), none 200 = stop.
async fn smoke_check(entry_url: &str, endpoint: &str) -> Result<()> {
    let url = format!("{}{}", entry_url.trim_end_matches('/'), endpoint);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()?;
    let mut seen = Vec::new();
    for _ in 0..10 {
        match client.get(&url).send().await {
            Ok(r) if r.status() == reqwest::StatusCode::OK => return Ok(()),
            Ok(r) => {
                let status = r.status();
                let body: String = r
                    .text()
                    .await
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect();
                seen.push(format!("{status}: {body}"));
            }
            Err(e) => seen.push(e.to_string()),
        }
    }
    bail!(
        "smoke check: GET {endpoint} never answered 200 in 10 tries before any load; the stack is misconfigured (see logs/ in the run directory). Last answer: {}",
        seen.last().map(String::as_str).unwrap_or("none")
    )
}
