//! One round of one experiment: run directory and manifest, a fresh stack, warm-up, smoke
//! check, minute-aligned k6 in its own pinned container with the samplers beside it, log
//! collection, teardown, report. Breaking the system is a successful run; only the harness
//! failing (or an interrupt) is not.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use chrono::Utc;
use serde_json::json;

use super::progress::Progress;
use super::signals::Interrupt;
use crate::analyze::samples::Role as SampleRole;
use crate::cli::catalog::Resolved;
use crate::docker::{self, ContainerSpec, Docker, ExitStatus, Mount};
use crate::experiment::{Experiment, Lab};
use crate::images::{ImageSet, Role as ImageRole};
use crate::load::{self, K6Invocation};
use crate::plan::{self, CpuLayout, Plan, Role};
use crate::rundir::{self, Manifest, RunDir, RunState};
use crate::sample::{self, ContainerTarget, SamplerTargets};
use crate::stack::{LabStack, Pinning, StackRole, StartOptions, warmup};

/// Seconds between starting the k6 container and k6's test clock starting (init, VU
/// pre-allocation); the container is started this much before the aligned instant.
/// How long k6 may take to parse its script and pre-allocate VUs before it reports paused.
const K6_INIT_TIMEOUT: Duration = Duration::from_secs(120);
const K6_MEMORY: i64 = 1024 * 1024 * 1024;

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

/// Docker cpusets of the three roles.
pub fn pinning_of(layout: &CpuLayout) -> Pinning {
    Pinning {
        loadgen: layout.cpuset(Role::Loadgen),
        db: layout.cpuset(Role::Db),
        app: layout.cpuset(Role::App),
    }
}

/// The sampler's role name for a stack container (the report's column names).
fn sample_role(lab: Lab, role: StackRole) -> SampleRole {
    match (lab, role) {
        (_, StackRole::Pg) => SampleRole::Pg,
        (_, StackRole::PhpFpm) => SampleRole::Fpm,
        (_, StackRole::Nginx) => SampleRole::Nginx,
        (Lab::Demo, StackRole::App) => SampleRole::Demo,
        (_, StackRole::App) => SampleRole::App,
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
        .map(|(role, i)| (role.as_str().to_owned(), format!("{} ({})", i.tag, i.id)))
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
        eprintln!("run {} -> {}", exp.id, dir.path.display());
    }

    let mut stack: Option<LabStack> = None;
    let result = measure(env, exp, &r.plan, &dir, &run_id, &mut manifest, &mut stack).await;
    // Whatever happened: logs out, containers and network gone.
    if let Some(s) = &stack
        && let Err(e) = collect_logs(env.docker, s, exp, &dir).await
    {
        manifest
            .caveats
            .push(format!("collecting logs failed: {e:#}"));
    }
    let teardown = teardown(env.docker, &run_id).await;
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
    if dir.file("k6/requests.csv.gz").exists() {
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
    let pinning = pinning_of(env.layout);
    let opts = StartOptions::default();
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

    // The k6 container, ready to start: scripts copied in, outputs bound to the run directory.
    let inv = load::invocation(plan, &stack.target_url);
    manifest
        .measurements
        .insert("k6_command".into(), json!(inv.shell_line()));
    let k6_out = dir.path.join("k6");
    std::fs::create_dir_all(&k6_out).context("creating the k6 output folder")?;
    let k6_out = k6_out
        .canonicalize()
        .context("resolving the k6 output folder")?;
    let k6_id = create_k6(env, &stack, exp, run_id, &inv, &k6_out).await?;

    // k6 starts paused: its init (script, pre-allocated VUs) is done before the aligned instant,
    // and the resume through its API starts the schedule within milliseconds.
    env.docker
        .start_container(&k6_id)
        .await
        .context("starting k6 (paused)")?;
    let k6_info = env
        .docker
        .inspect_container(&k6_id)
        .await
        .context("inspecting k6")?;
    manifest
        .measurements
        .insert("k6_started_at".into(), json!(k6_info.started_at));
    let api_port = k6_info
        .host_ports
        .get(&load::API_PORT)
        .copied()
        .context("k6's API port is not published: cannot resume it")?;
    let api = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .context("building the HTTP client for k6's API")?;
    let docker = env.docker;
    let k6_ready = or_interrupt(&env.interrupt, async {
        load::control::wait_paused(&api, api_port, K6_INIT_TIMEOUT, || async {
            docker
                .inspect_container(&k6_id)
                .await
                .map(|i| i.running)
                .unwrap_or(false)
        })
        .await
        .map_err(|e| anyhow::Error::new(e).context("waiting for k6 to initialise"))
    })
    .await?;
    manifest
        .measurements
        .insert("k6_vus_allocated".into(), json!(k6_ready.vus_max));

    let al = plan::align(Utc::now(), plan, env.align);
    manifest.measurements.insert(
        "alignment".into(),
        serde_json::to_value(&al).unwrap_or_default(),
    );
    dir.write_manifest(manifest)?;
    let wait = (al.k6_start - Utc::now()).to_std().unwrap_or_default();
    if !env.quiet && wait > Duration::from_secs(1) {
        eprintln!(
            "waiting {:.0} s so the first step starts at {} UTC (--no-align to skip)",
            wait.as_secs_f64(),
            al.first_step_at.format("%H:%M:%S")
        );
    }
    // Measurement: the orchestrator moves to the load generator's CPUs before the resume.
    let loadgen: Vec<usize> = env
        .layout
        .get(Role::Loadgen)
        .cpus()
        .iter()
        .map(|c| *c as usize)
        .collect();
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
    let resume_sent = Utc::now();
    load::control::resume(&api, api_port)
        .await
        .context("resuming k6 through its API")?;
    let resume_done = Utc::now();
    manifest.measurements.insert(
        "k6_resume".into(),
        json!({
            "sent_at": resume_sent,
            "answered_at": resume_done,
            "late_ms": (resume_sent - al.k6_start).num_milliseconds(),
            "latency_ms": (resume_done - resume_sent).num_milliseconds(),
        }),
    );
    let targets = if env.no_samplers {
        manifest.caveats.push(
            "server-side samplers off (--no-samplers): only host CPU, PSI, dockerd and perflab CPU were sampled".into(),
        );
        SamplerTargets::default()
    } else {
        sampler_targets(env.docker, &stack, exp.lab, &k6_info, pg_client.clone()).await?
    };
    let samplers = sample::Samplers::start(&dir.path.join("samples"), targets, Default::default())
        .context("starting samplers")?;
    let progress = Progress::start(
        plan,
        al.k6_start,
        k6_info.host_ports.get(&load::API_PORT).copied(),
        env.quiet,
    );

    let mut interrupt = env.interrupt.clone();
    let waited = env.docker.wait_container(&k6_id, async move {
        interrupt.wait().await;
    });
    let status = waited.await;

    let summary = samplers.stop().await;
    progress.finish().await;
    let all: Vec<usize> = plan::layout::online_cpus()
        .map(|c| c.cpus().iter().map(|x| *x as usize).collect())
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
    let k6_log = env.docker.logs(&k6_id, None).await.unwrap_or_default();
    rundir::write_atomic(&dir.path.join("k6/k6.log"), k6_log.as_bytes())
        .context("writing k6.log")?;

    match status.context("waiting for k6")? {
        ExitStatus::Cancelled => Err(Stop::Interrupted(
            env.interrupt.reason().unwrap_or("a signal"),
        )),
        ExitStatus::Exited(code) => {
            manifest
                .measurements
                .insert("k6_exit_code".into(), json!(code));
            if code == 99 {
                manifest
                    .measurements
                    .insert("k6_thresholds_crossed".into(), json!(true));
            }
            if load::exit_is_outcome(code) {
                Ok(())
            } else {
                let tail: Vec<&str> = k6_log.lines().rev().take(8).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                Err(Stop::Failed(anyhow!(
                    "k6 exited with code {code} (not a threshold outcome); last lines of k6/k6.log:\n{}",
                    tail.join("\n")
                )))
            }
        }
    }
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

async fn create_k6(
    env: &RoundEnv<'_>,
    stack: &LabStack,
    exp: &Experiment,
    run_id: &str,
    inv: &K6Invocation,
    out: &Path,
) -> Result<String> {
    let scripts_dir = env.repo_root.join("labs/k6");
    let mut files = Vec::new();
    for name in ["stepped.js", "breakpoint.js"] {
        let p = scripts_dir.join(name);
        let body = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        files.push((format!("{}/{name}", load::SCRIPTS_DIR), body, 0o644));
    }
    let spec = ContainerSpec {
        name: format!("perflab-{run_id}-k6"),
        image: env.images.get(ImageRole::K6).tag.clone(),
        cmd: Some(inv.args.clone()),
        env: inv
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        labels: docker::labels(run_id, exp.lab.as_str(), "k6"),
        cpuset: Some(env.layout.cpuset(Role::Loadgen)),
        memory_bytes: Some(K6_MEMORY),
        network: Some(stack.network.clone()),
        publish: vec![load::API_PORT],
        mounts: vec![Mount {
            source: out.display().to_string(),
            target: load::OUT_DIR.into(),
            read_only: false,
        }],
        nofile: Some(crate::stack::nofile_limit()),
        init: true,
        user: Some("0:0".into()),
        ..Default::default()
    };
    let id = env
        .docker
        .create_container(&spec)
        .await
        .context("creating the k6 container")?;
    env.docker
        .upload_files(&id, &files)
        .await
        .context("copying the k6 scripts")?;
    Ok(id)
}

async fn sampler_targets(
    docker: &Docker,
    stack: &LabStack,
    lab: Lab,
    k6: &docker::ContainerInfo,
    pg: Option<std::sync::Arc<tokio_postgres::Client>>,
) -> Result<SamplerTargets> {
    let mut containers = Vec::new();
    for (role, c) in &stack.containers {
        let info = docker.inspect_container(&c.id).await?;
        if let Some(pid) = info.pid {
            containers.push(ContainerTarget {
                role: sample_role(lab, *role),
                name: c.name.clone(),
                pid,
            });
        }
    }
    if let Some(pid) = k6.pid {
        containers.push(ContainerTarget {
            role: SampleRole::K6,
            name: k6.name.clone(),
            pid,
        });
    }
    Ok(SamplerTargets {
        containers,
        fpm_status_url: stack.fpm_status_url.clone(),
        pg,
    })
}

/// Container logs into `logs/<role>.log`; the Node app's metrics lines into `samples/node.jsonl`;
/// Laravel's log file when present; the access logs into `logs/access/` when turned on.
async fn collect_logs(
    docker: &Docker,
    stack: &LabStack,
    exp: &Experiment,
    dir: &RunDir,
) -> Result<()> {
    let logs_dir = dir.path.join("logs");
    std::fs::create_dir_all(&logs_dir)?;
    for (role, c) in &stack.containers {
        let text = docker.logs(&c.id, None).await.unwrap_or_default();
        rundir::write_atomic(
            &logs_dir.join(format!("{}.log", role.as_str())),
            text.as_bytes(),
        )?;
        if *role == StackRole::App {
            let lines = metrics_lines(&text, &c.name);
            if !lines.is_empty() {
                std::fs::create_dir_all(dir.path.join("samples"))?;
                rundir::write_atomic(&dir.path.join("samples/node.jsonl"), lines.as_bytes())?;
            }
        }
    }
    if stack.lab == Lab::Php
        && let Ok(bytes) = stack
            .read_file(
                docker,
                StackRole::PhpFpm,
                "/srv/app/storage/logs/laravel.log",
            )
            .await
    {
        rundir::write_atomic(&logs_dir.join("laravel.log"), &bytes)?;
    }
    // diag-acc: the access logs, beside (not in) the digested logs
    if exp.stack.php.as_ref().is_some_and(|p| p.access_log) {
        let access_dir = logs_dir.join("access");
        std::fs::create_dir_all(&access_dir)?;
        for (role, path, name) in [
            (
                StackRole::PhpFpm,
                crate::stack::templates::FPM_ACCESS_LOG,
                "fpm.log",
            ),
            (
                StackRole::Nginx,
                crate::stack::templates::NGINX_ACCESS_LOG,
                "nginx.log",
            ),
        ] {
            let bytes = stack
                .read_file(docker, role, path)
                .await
                .with_context(|| format!("reading the access log {path}"))?;
            rundir::write_atomic(&access_dir.join(name), &bytes)?;
        }
    }
    Ok(())
}

/// The app's 2-second JSON metrics lines (those with `t` and `elu` or `inflight`), each with the
/// container name added, as JSON lines.
pub fn metrics_lines(log: &str, container: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let l = line.trim();
        if !l.starts_with('{') {
            continue;
        }
        let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str::<serde_json::Value>(l)
        else {
            continue;
        };
        if !m.contains_key("t") || !(m.contains_key("elu") || m.contains_key("inflight")) {
            continue;
        }
        m.insert("container".into(), json!(container));
        out.push_str(&serde_json::Value::Object(m).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_keep_only_the_apps_json_lines() {
        let log = "listening on 3000\n{\"t\":\"2026-10-30T11:21:45.694Z\",\"pid\":1,\"rps\":150,\"elu\":0.81,\"inflight\":0}\nnot json {\n{\"msg\":\"other\"}\n";
        let out = metrics_lines(log, "perflab-x-app");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["container"], "perflab-x-app");
        assert_eq!(v["rps"], 150);
    }

    #[test]
    fn sample_roles_match_the_report_columns() {
        assert_eq!(sample_role(Lab::Php, StackRole::PhpFpm).as_str(), "fpm");
        assert_eq!(sample_role(Lab::Node, StackRole::App).as_str(), "app");
        assert_eq!(sample_role(Lab::Demo, StackRole::App).as_str(), "demo");
        assert_eq!(sample_role(Lab::Php, StackRole::Pg).as_str(), "pg");
    }
}
