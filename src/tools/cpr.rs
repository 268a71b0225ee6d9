//! `perflab cpu-per-request php|node`: start the lab stack pinned like `perflab run`, warm it
//! up, then per endpoint send N sequential requests from perflab (pinned to the load generator's
//! CPUs) and read every container's cgroup CPU counter before and after. The stack is removed
//! whatever happens (error, Ctrl-C/SIGTERM). Writes `requests.tsv`, `cgroup.tsv`,
//! `logs/<role>.log` and the report.
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::rundir::measurements::containers_of;
use crate::rundir::tool::ToolArgs;
use anyhow::{Context, Result, anyhow};

use super::cpr_report::{self, ContainerCounters, CprSettings, EndpointRaw, IdleBaseline};
use super::{Common, ToolRun};
use crate::docker::{self, Docker};
use crate::experiment::Lab;
use crate::images::{self, ImageSet, Suite};
use crate::plan::CpuLayout;
use crate::rundir::RunState;
use crate::sample::cgroup::CgroupPaths;
use crate::session::signals::Interrupt;
use crate::session::sweep;
use crate::session::{Phase, Stop};
use crate::stack::{LabStack, StartOptions, defaults, warmup};

/// Raw per-request outcomes.
pub(crate) const REQUESTS_FILE: &str = "requests.tsv";
/// Raw counters per endpoint and container.
pub(crate) const CGROUP_FILE: &str = "cgroup.tsv";

/// The endpoints measured by default (the article's three PHP routes; the Node lab's three).
pub(crate) fn default_endpoints(lab: Lab) -> Vec<String> {
    let v = crate::lab::descriptor(lab).info().cpu_per_request_endpoints;
    v.iter().map(|s| s.to_string()).collect()
}

/// Everything a measurement needs besides the stack.
struct Env<'a> {
    docker: &'a Docker,
    images: &'a ImageSet,
    layout: &'a CpuLayout,
    settings: &'a CprSettings,
    run_id: &'a str,
    quiet: bool,
}

/// What the measurement collected so far (kept when it stops early).
#[derive(Default)]
struct Collected {
    raws: Vec<EndpointRaw>,
    idle: Option<IdleBaseline>,
}

/// Run the tool. Returns the exit code (0 complete, 130 interrupted, 1 failed).
pub(crate) async fn run(
    lab: Lab,
    settings: CprSettings,
    layout: CpuLayout,
    suite: Suite,
    common: Common,
) -> Result<std::process::ExitCode> {
    let interrupt = Interrupt::install_with("stopping the requests, removing the containers")
        .context("installing signal handlers")?;
    let docker = Docker::connect().await?;
    let mut progress = crate::images::build_progress(common.quiet);
    let set = images::ensure_built(&docker, suite, &mut progress).await?;
    let tool_dir = format!("cpu-per-request-{}", lab.as_str());
    let mut run = ToolRun::begin(
        "cpu-per-request",
        &tool_dir,
        ToolArgs::Cpr(settings.clone()),
        layout.clone(),
        &common,
        &interrupt,
    )
    .await?;
    // Leftovers of killed runs go (never a live owner's; see `sweep`).
    sweep::sweep(&docker, &common.out_root, &BTreeSet::new())
        .await?
        .tell(common.quiet, docker.endpoint());
    let run_id = format!("{}{tool_dir}-{}", sweep::RUN_ID_PREFIX, run.dir.name()).to_lowercase();
    describe(&mut run, lab, &set, &layout, &docker, &run_id).await;
    run.write_manifest()?;

    let env = Env {
        docker: &docker,
        images: &set,
        layout: &layout,
        settings: &settings,
        run_id: &run_id,
        quiet: common.quiet,
    };
    let mut stack: Option<LabStack> = None;
    let mut got = Collected::default();
    let result = phases(&env, lab, &mut run, &mut stack, &mut got).await;
    wind_down(&env, &mut run, stack.as_ref()).await;
    let verdict = run.session.verdict(&result);
    if let Some(r) = &verdict.reason {
        run.manifest.caveats.push(r.clone());
    }
    super::write_text(&run.dir.file(REQUESTS_FILE), &requests_tsv(&got.raws))?;
    super::write_text(&run.dir.file(CGROUP_FILE), &cgroup_tsv(&got.raws))?;
    let speed = run.speed_after().await;
    let mut report =
        cpr_report::analyze(settings, &got.raws, got.idle, run.manifest.caveats.clone());
    report.host_speed = speed;
    let text = cpr_report::render_text(&report);
    run.write_reports(&text, &cpr_report::render_markdown(&report), &report)?;
    if verdict.state == RunState::Failed {
        if !got.raws.is_empty() {
            crate::output::emit(&text);
        }
        run.finish(verdict.state, verdict.reason.as_deref())?;
        return Err(anyhow!(
            "cpu-per-request failed: {}; see {}",
            verdict.reason.unwrap_or_default(),
            run.dir.path.display()
        ));
    }
    super::print_and_finish(&run, &common, &text, &report, verdict.signal)
}

/// Record the versions, images, pinning and caveats of the run in its manifest.
async fn describe(
    run: &mut ToolRun,
    lab: Lab,
    set: &ImageSet,
    layout: &CpuLayout,
    docker: &Docker,
    run_id: &str,
) {
    let m = &mut run.manifest;
    m.components = set.versions_flat();
    if let Ok(v) = docker.engine_version().await {
        m.components.insert("docker-engine".into(), v);
    }
    if let Some(k) = &m.host.kernel {
        m.components.insert("kernel".into(), k.clone());
    }
    m.images = set.tags_and_ids();
    m.measurements.stack.run_id = Some(run_id.to_string());
    m.measurements.stack.suite = Some(set.suite.as_str().to_string());
    let p = crate::stack::Pinning::from(layout);
    m.pinning.insert("app".into(), p.app.clone());
    m.pinning.insert("db".into(), p.db.clone());
    m.pinning.insert("loadgen".into(), p.loadgen.clone());
    m.pinning.insert("orchestrator".into(), p.loadgen.clone());
    if let Some(c) = crate::lab::descriptor(lab).info().cpu_per_request_caveat {
        m.caveats.push(c.into());
    }
}

/// Collect (the stack's logs) and Teardown, whatever happened; perflab unpinned.
async fn wind_down(env: &Env<'_>, run: &mut ToolRun, stack: Option<&LabStack>) {
    let ToolRun {
        dir,
        manifest,
        session,
    } = run;
    if let Some(s) = stack {
        let logs = async {
            write_logs(env.docker, s, dir).await;
            Ok(())
        };
        let _ = session.finish_phase(Phase::Collect, logs).await;
    }
    let label = [format!("{}={}", docker::LABEL_RUN, env.run_id)];
    let down = async {
        env.docker
            .remove_labelled(&label)
            .await
            .map_err(anyhow::Error::from)
    };
    if let Err(Stop::Failed(e)) = session.finish_phase(Phase::Teardown, down).await {
        manifest
            .caveats
            .push(format!("teardown failed: {e:#}; run `perflab cleanup`"));
    }
    let all = crate::plan::layout::online_cpus()
        .map(|c| c.indices())
        .unwrap_or_default();
    if !all.is_empty() {
        let _ = crate::sample::pin_process_to(&all);
    }
}

fn read_all(targets: &[(String, String, CgroupPaths)]) -> Result<Vec<(u64, u64)>> {
    targets
        .iter()
        .map(|(_, name, p)| {
            p.read()
                .map(|r| (r.cpu_ns, r.throttled_ns))
                .with_context(|| format!("reading the cgroup counters of {name}"))
        })
        .collect()
}

fn counters(
    targets: &[(String, String, CgroupPaths)],
    before: &[(u64, u64)],
    after: &[(u64, u64)],
) -> Vec<ContainerCounters> {
    targets
        .iter()
        .zip(before.iter().zip(after))
        .map(|((role, name, _), (b, a))| ContainerCounters {
            role: role.clone(),
            name: name.clone(),
            cpu_ns_before: b.0,
            cpu_ns_after: a.0,
            throttled_ns_before: b.1,
            throttled_ns_after: a.1,
        })
        .collect()
}

/// Stack up, warm-up, then the Measure phase; each raced against the interrupt.
async fn phases(
    env: &Env<'_>,
    lab: Lab,
    run: &mut ToolRun,
    slot: &mut Option<LabStack>,
    got: &mut Collected,
) -> Result<(), Stop> {
    let exp = defaults::lab_experiment(lab);
    let pinning = crate::stack::Pinning::from(env.layout);
    if !env.quiet {
        crate::say!(
            "starting the {} lab (app cpus {}, db cpus {})",
            lab.as_str(),
            pinning.app,
            pinning.db
        );
    }
    let opts = StartOptions::default();
    let start = async {
        LabStack::start(env.docker, &exp, &pinning, env.run_id, env.images, &opts)
            .await
            .context("starting the lab stack")
    };
    let s = run.session.phase(Phase::StackUp, start).await?;
    run.manifest.measurements.stack.stack_start_s = Some(s.start_seconds);
    run.manifest.measurements.stack.containers = Some(containers_of(&s.containers));
    let stack = slot.insert(s).clone();
    let warm = async { warmup::warm_up(&stack, &exp).await.context("warm-up") };
    let wu = run.session.phase(Phase::WarmUp, warm).await?;
    run.manifest.measurements.stack.warmup = Some((&wu).into());
    run.write_manifest()?;
    let ToolRun {
        manifest, session, ..
    } = run;
    let measuring = async {
        measure(env, &stack, &mut manifest.caveats, got)
            .await
            .map_err(Stop::into_error)
    };
    session.phase(Phase::Measure, measuring).await
}

/// The Measure phase: cgroup counters of every container around an idle baseline and around
/// N sequential requests per endpoint, sent from the load generator's CPUs.
async fn measure(
    env: &Env<'_>,
    stack: &LabStack,
    caveats: &mut Vec<String>,
    got: &mut Collected,
) -> Result<(), Stop> {
    // The app's containers first (php-fpm, nginx / app), PostgreSQL last.
    let mut roles: Vec<_> = stack.containers.keys().copied().collect();
    roles.sort_by_key(|r| (*r == crate::lab::Role::PG, *r));
    let mut targets = Vec::new();
    for role in roles {
        let paths = crate::sample::stack::cgroup_of(stack, env.docker, role).await?;
        targets.push((
            role.log_name().to_string(),
            stack.containers[&role].name.clone(),
            paths,
        ));
    }
    // perflab sends from the load generator's CPUs, as k6 would.
    let loadgen = env.layout.get(crate::plan::Slot::Loadgen).indices();
    if let Err(e) = crate::sample::pin_process_to(&loadgen) {
        caveats.push(format!(
            "could not pin perflab to the load generator's CPUs: {e}"
        ));
    }
    let idle_s = env.settings.idle_s;
    if idle_s > 0.0 {
        if !env.quiet {
            crate::say!("idle baseline: {idle_s} s with no requests");
        }
        let before = read_all(&targets)?;
        tokio::time::sleep(Duration::from_secs_f64(idle_s)).await;
        let after = read_all(&targets)?;
        got.idle = Some(cpr_report::idle_baseline(
            &counters(&targets, &before, &after),
            idle_s,
        ));
    }
    let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(15));
    if env.settings.fresh_connections {
        builder = builder.pool_max_idle_per_host(0);
    }
    let client = builder.build().map_err(|e| Stop::Failed(e.into()))?;
    let base = stack.entry_url.trim_end_matches('/').to_string();
    for endpoint in &env.settings.endpoints {
        let raw = endpoint_raw(
            env,
            &client,
            &format!("{base}{endpoint}"),
            endpoint,
            &targets,
        )
        .await?;
        let row = cpr_report::row(&raw, got.idle.as_ref());
        say_row(env.quiet, endpoint, &row, raw.elapsed_s);
        got.raws.push(raw);
        if row.ok == 0 {
            return Err(Stop::Failed(anyhow!(
                "{endpoint} never answered 200 in {} requests; see logs/ in the run directory",
                row.requests
            )));
        }
    }
    Ok(())
}

/// Warm one endpoint up, then N sequential requests between two cgroup readings.
async fn endpoint_raw(
    env: &Env<'_>,
    client: &reqwest::Client,
    url: &str,
    endpoint: &str,
    targets: &[(String, String, CgroupPaths)],
) -> Result<EndpointRaw, Stop> {
    for _ in 0..env.settings.warmup {
        let _ = get(client, url).await;
    }
    let before = read_all(targets)?;
    let t0 = Instant::now();
    let mut statuses = Vec::with_capacity(env.settings.n as usize);
    let mut wall_ms = Vec::with_capacity(env.settings.n as usize);
    for _ in 0..env.settings.n {
        let t = Instant::now();
        let status = get(client, url).await;
        wall_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        statuses.push(status);
    }
    let elapsed_s = t0.elapsed().as_secs_f64();
    let after = read_all(targets)?;
    Ok(EndpointRaw {
        endpoint: endpoint.to_string(),
        statuses,
        wall_ms,
        elapsed_s,
        containers: counters(targets, &before, &after),
    })
}

fn say_row(quiet: bool, endpoint: &str, row: &cpr_report::EndpointRow, elapsed_s: f64) {
    if quiet {
        return;
    }
    let cpu: Vec<String> = row
        .cpu_ms_per_request
        .iter()
        .map(|(r, v)| format!("{r} {v:.2}"))
        .collect();
    crate::say!(
        "  {endpoint}: {}/{} ok in {elapsed_s:.1} s; CPU ms/request: {}",
        row.ok,
        row.requests,
        cpu.join(", ")
    );
}

/// GET and read the body; the status, or 0 for a transport error.
async fn get(client: &reqwest::Client, url: &str) -> u16 {
    match client.get(url).send().await {
        Ok(r) => {
            let s = r.status().as_u16();
            match r.bytes().await {
                Ok(_) => s,
                Err(_) => 0,
            }
        }
        Err(_) => 0,
    }
}

async fn write_logs(docker: &Docker, stack: &LabStack, run_dir: &crate::rundir::RunDir) {
    let l = crate::rundir::Layout::new(&run_dir.path);
    if std::fs::create_dir_all(l.logs_dir()).is_err() {
        return;
    }
    for (role, c) in &stack.containers {
        let text = docker.logs(&c.id, None).await.unwrap_or_default();
        let _ = super::write_text(&l.log(role.log_name()), &text);
    }
}

fn requests_tsv(raws: &[EndpointRaw]) -> String {
    let mut s = String::from("endpoint\tseq\tstatus\twall_ms\n");
    for r in raws {
        for (i, (st, w)) in r.statuses.iter().zip(&r.wall_ms).enumerate() {
            s.push_str(&format!("{}\t{}\t{st}\t{w:.3}\n", r.endpoint, i + 1));
        }
    }
    s
}

fn cgroup_tsv(raws: &[EndpointRaw]) -> String {
    let mut s = String::from(
        "endpoint\trole\tcontainer\trequests\telapsed_s\tcpu_ns_before\tcpu_ns_after\tthrottled_ns_before\tthrottled_ns_after\n",
    );
    for r in raws {
        for c in &r.containers {
            s.push_str(&format!(
                "{}\t{}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}\n",
                r.endpoint,
                c.role,
                c.name,
                r.statuses.len(),
                r.elapsed_s,
                c.cpu_ns_before,
                c.cpu_ns_after,
                c.throttled_ns_before,
                c.throttled_ns_after
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_files_have_one_line_per_request_and_per_container() {
        let raw = EndpointRaw {
            endpoint: "/api/db".into(),
            statuses: vec![200, 500],
            wall_ms: vec![12.5, 3.25],
            elapsed_s: 0.02,
            containers: vec![ContainerCounters {
                role: "php-fpm".into(),
                name: "perflab-x-php-fpm".into(),
                cpu_ns_before: 1,
                cpu_ns_after: 9,
                throttled_ns_before: 0,
                throttled_ns_after: 0,
            }],
        };
        let req = requests_tsv(std::slice::from_ref(&raw));
        assert_eq!(
            req.lines().collect::<Vec<_>>(),
            vec![
                "endpoint\tseq\tstatus\twall_ms",
                "/api/db\t1\t200\t12.500",
                "/api/db\t2\t500\t3.250"
            ]
        );
        let cg = cgroup_tsv(&[raw]);
        assert_eq!(cg.lines().count(), 2);
        assert!(cg.ends_with("/api/db\tphp-fpm\tperflab-x-php-fpm\t2\t0.020\t1\t9\t0\t0\n"));
        assert_eq!(
            default_endpoints(Lab::Node),
            vec!["/cpu", "/db", "/dbsleep"]
        );
    }
}
