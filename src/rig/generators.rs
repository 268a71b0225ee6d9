//! The load generators of a round: N k6 containers (execution segments of one schedule) on the
//! load generator's engine, started paused and resumed together through their APIs (or, when
//! this machine cannot reach those, held by a start gate until the same instant in the engine's
//! clock, corrected by the measured offset); outputs in `k6/` (one generator) or `k6/g<i>/`;
//! on another engine than the stack's, host networking to the published entry point; on an
//! engine off this machine, outputs copied out of the stopped containers and a sampler agent.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::docker::{self, ClockOffset, ContainerSpec, Docker, EngineFacts, ExitStatus, Mount};
use crate::images::ImageSet;
use crate::lab::Role;
use crate::load::{self, K6Invocation, segments::Segment};
use crate::plan::Plan;
use crate::rundir;
use crate::rundir::layout::{K6Dir, Layout, SampleFile};
use crate::sample::{ContainerTarget, agent};
use crate::stack::LabStack;

const K6_MEMORY: i64 = 1024 * 1024 * 1024;
/// File in a k6 container holding the gate instant (unix ns, the engine's clock).
const GATE_FILE: &str = "/perflab-gate";
/// Sleep until the gate instant, then become k6 (`"$@"`). dash arithmetic is 64-bit.
const GATE_SCRIPT: &str = r#"g=$(cat /perflab-gate 2>/dev/null || echo 0); n=$(date +%s%N); d=$((g - n)); if [ "$d" -gt 0 ]; then sleep "$((d / 1000000000)).$(printf %09d $((d % 1000000000)))"; fi; exec "$@""#;
/// First REST API port of generators with host networking (instance i uses base + i).
pub(crate) const HOST_API_PORT_BASE: u16 = 6565;

/// The engine the load generators run on.
pub(crate) struct LoadgenEngine {
    pub docker: Docker,
    /// Not the stack's engine: host networking to the published entry point.
    pub remote: bool,
    /// Not this machine's local engine: outputs copied out of the containers (no bind mount),
    /// CPU sampled by the sampler agent there.
    pub off_host: bool,
    /// The images as that engine has them (same tags).
    pub images: ImageSet,
    pub facts: Option<EngineFacts>,
    pub clock: Option<ClockOffset>,
    /// `--k6-dashboard`: each k6 exports its web dashboard into its output folder.
    pub dashboard: bool,
}

impl LoadgenEngine {
    fn offset(&self) -> chrono::Duration {
        let ms = self.clock.map(|c| c.offset_ms).unwrap_or(0.0);
        chrono::Duration::microseconds((ms * 1000.0).round() as i64)
    }
}

/// One created k6 container.
pub(crate) struct Generator {
    pub seg: Segment,
    pub id: String,
    pub name: String,
    pub out_dir: PathBuf,
    pub inv: K6Invocation,
    /// `http://host:port` of its REST API as this machine reaches it, once started.
    pub api: Option<String>,
    /// `host:port` of that API (resume on the second), when this machine reaches it: the
    /// container's lab address (nothing published), or a port on 127.0.0.1.
    pub api_addr: Option<String>,
    pub pid: Option<u32>,
}

/// Where instance `i` of `n` writes: `k6/` for a single generator (the layout every run had),
/// `k6/g<i>/` otherwise.
pub(crate) fn out_dir(run_dir: &Path, seg: &Segment) -> PathBuf {
    Layout::new(run_dir)
        .generator_of(seg.index as usize, seg.count as usize)
        .path
}

/// Container name of instance `i` (a single generator keeps `…-k6`).
pub(crate) fn container_name(run_id: &str, seg: &Segment) -> String {
    if seg.count <= 1 {
        format!("perflab-{run_id}-k6")
    } else {
        format!("perflab-{run_id}-k6-g{}", seg.index)
    }
}

/// The base URL the generators use: the lab network alias on the stack's engine, the
/// published entry point from another engine.
pub(crate) fn target_base(stack: &LabStack, remote: bool) -> String {
    if remote {
        crate::stack::entry_url(&stack.entry_ip, stack.entry_port)
    } else {
        stack.target_url.clone()
    }
}

/// The files copied into each k6 container: the scripts, and on another host the output
/// folder (no bind mount there: k6 writes inside the container, copied out at the end).
fn script_files(lg: &LoadgenEngine, scripts_dir: &Path) -> Result<Vec<(String, Vec<u8>, u32)>> {
    let mut files = Vec::new();
    for name in ["stepped.js", "breakpoint.js", "drop.js"] {
        let p = scripts_dir.join(name);
        let body = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        files.push((format!("{}/{name}", load::SCRIPTS_DIR), body, 0o644));
    }
    if lg.off_host {
        files.push((format!("{}/.keep", load::OUT_DIR), Vec::new(), 0o644));
    }
    Ok(files)
}

/// Create the N k6 containers (not started), scripts copied in.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn create(
    lg: &LoadgenEngine,
    stack: &LabStack,
    lab: &str,
    run_id: &str,
    plan: &Plan,
    n: u32,
    run_dir: &Path,
    cpuset: &str,
    scripts_dir: &Path,
    paused: bool,
) -> Result<Vec<Generator>> {
    let files = script_files(lg, scripts_dir)?;
    let base = target_base(stack, lg.remote);
    let mut out = Vec::new();
    for seg in load::segments::segments(n) {
        let dir = out_dir(run_dir, &seg);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let dir = dir
            .canonicalize()
            .context("resolving the k6 output folder")?;
        let api = if lg.remote {
            format!("127.0.0.1:{}", HOST_API_PORT_BASE + seg.index as u16)
        } else {
            format!("0.0.0.0:{}", load::API_PORT)
        };
        let mut inv = load::invocation_for(plan, &base, &seg, &api, paused);
        if lg.dashboard {
            load::with_dashboard(&mut inv);
        }
        let name = container_name(run_id, &seg);
        let mut labels = docker::labels(run_id, lab, "k6");
        labels.insert("perflab.generator".into(), seg.index.to_string());
        let mut cmd = vec!["/usr/local/bin/k6".to_string()];
        cmd.extend(inv.args.iter().cloned());
        let spec = ContainerSpec {
            name: name.clone(),
            image: lg.images.get(Role::K6).tag.clone(),
            entrypoint: Some(vec![
                "/bin/sh".into(),
                "-c".into(),
                GATE_SCRIPT.into(),
                "k6-gate".into(),
            ]),
            cmd: Some(cmd),
            env: inv
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            labels,
            cpuset: Some(cpuset.to_string()),
            memory_bytes: Some(K6_MEMORY),
            network: Some(if lg.remote {
                "host".into()
            } else {
                stack.network.clone()
            }),
            // Published only when this host cannot reach the lab network (k6's API has no
            // authentication: on 127.0.0.1 any local user could pause or stop the run).
            publish: if lg.remote || stack.access.direct {
                Vec::new()
            } else {
                vec![load::API_PORT]
            },
            mounts: if lg.off_host {
                Vec::new()
            } else {
                vec![Mount {
                    source: dir.display().to_string(),
                    target: load::OUT_DIR.into(),
                    read_only: false,
                }]
            },
            nofile: Some(crate::stack::nofile_limit()),
            init: true,
            user: Some("0:0".into()),
            ..Default::default()
        };
        let id = create_filled(&lg.docker, &spec, &files, "the k6 container").await?;
        out.push(Generator {
            seg,
            id,
            name,
            out_dir: dir,
            inv,
            api: None,
            api_addr: None,
            pid: None,
        });
    }
    Ok(out)
}

/// Set every generator's gate to `launch` (our clock; written in the engine's clock).
pub(crate) async fn set_gate(
    lg: &LoadgenEngine,
    gens: &[Generator],
    launch: DateTime<Utc>,
) -> Result<i64> {
    let at = launch + lg.offset();
    let ns = at.timestamp_nanos_opt().unwrap_or(0);
    for g in gens {
        lg.docker
            .upload_files(
                &g.id,
                &[(GATE_FILE.into(), format!("{ns}\n").into_bytes(), 0o644)],
            )
            .await
            .with_context(|| format!("setting the start gate of {}", g.name))?;
    }
    Ok(ns)
}

/// Start every generator (each waits in its gate), then record pids and API addresses.
pub(crate) async fn start(
    lg: &LoadgenEngine,
    stack: &LabStack,
    gens: &mut [Generator],
) -> Result<()> {
    for g in gens.iter() {
        lg.docker
            .start_container(&g.id)
            .await
            .with_context(|| format!("starting {}", g.name))?;
    }
    let here = lg.docker.endpoint().is_on_this_machine();
    for g in gens.iter_mut() {
        let info = lg
            .docker
            .inspect_container(&g.id)
            .await
            .with_context(|| format!("inspecting {}", g.name))?;
        g.pid = info.pid;
        g.api_addr = match (here, lg.remote) {
            (true, true) => Some(format!(
                "127.0.0.1:{}",
                HOST_API_PORT_BASE + g.seg.index as u16
            )),
            (true, false) => match info.host_ports.get(&load::API_PORT) {
                Some(p) => Some(format!("127.0.0.1:{p}")),
                None => info
                    .addresses
                    .get(&stack.network)
                    .map(|a| format!("{a}:{}", load::API_PORT)),
            },
            (false, _) => None,
        };
        g.api = g.api_addr.as_ref().map(|a| format!("http://{a}"));
    }
    Ok(())
}

/// Sampler targets for the generators (their init pids on their engine's host).
pub(crate) fn targets(gens: &[Generator]) -> Vec<ContainerTarget> {
    gens.iter()
        .filter_map(|g| {
            Some(ContainerTarget {
                role: Role::K6,
                name: g.name.clone(),
                pid: g.pid?,
            })
        })
        .collect()
}

/// Wait for every generator; `cancel` (cloned per instance) kills them all when it fires.
pub(crate) async fn wait_all<F, Fut>(
    lg: &LoadgenEngine,
    gens: &[Generator],
    cancel: F,
) -> Vec<docker::Result<ExitStatus>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let waits = gens
        .iter()
        .map(|g| lg.docker.wait_container(&g.id, cancel()));
    futures_util::future::join_all(waits).await
}

/// Logs (and, from another engine, the output files) of every generator into its folder.
/// Returns the log texts in instance order.
pub(crate) async fn collect(lg: &LoadgenEngine, gens: &[Generator]) -> Result<Vec<String>> {
    let mut logs = Vec::new();
    for g in gens {
        let log = lg.docker.logs(&g.id, None).await.unwrap_or_default();
        crate::rundir::write_atomic(&K6Dir::new(&g.out_dir).log(), log.as_bytes())
            .context("writing k6.log")?;
        if lg.off_host {
            let tar = lg
                .docker
                .download_tar(&g.id, load::OUT_DIR)
                .await
                .with_context(|| format!("copying {} out of {}", load::OUT_DIR, g.name))?;
            unpack_out(&tar, &g.out_dir)?;
        }
        logs.push(log);
    }
    Ok(logs)
}

/// Extract the files of a `/out` tar archive (entries `out/<file>`) into `dir`.
fn unpack_out(tar: &[u8], dir: &Path) -> Result<()> {
    let mut a = tar::Archive::new(tar);
    for e in a.entries().context("reading the k6 output archive")? {
        let mut e = e.context("reading the k6 output archive")?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let path = e.path().context("entry path")?.into_owned();
        let Some(name) = path.file_name().filter(|n| *n != ".keep") else {
            continue;
        };
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut buf)?;
        crate::rundir::write_atomic(&dir.join(name), &buf)
            .with_context(|| format!("writing {}", dir.join(name).display()))?;
    }
    Ok(())
}

/// Start (unix ms) of the first request in a k6 CSV, from its first rows (k6 writes rows as
/// requests end, so the earliest start is among the first few hundred).
pub(crate) fn first_request_ms(csv: &Path) -> Option<i64> {
    use crate::rundir::read::{self, FileKind, LineReader, RunFile};
    let (stream, _) = read::k6_csv(&RunFile::loose(csv, FileKind::K6Csv)).ok()?;
    let max = FileKind::K6Csv.max_line();
    let mut r = LineReader::new(std::io::BufReader::new(stream), max);
    let mut next = move || -> Option<String> {
        let l = r.next_line().ok()??;
        Some(String::from_utf8_lossy(l.bytes).into_owned())
    };
    let header = next()?;
    let header = header.strip_prefix('\u{FEFF}').unwrap_or(&header);
    let cols: Vec<&str> = header.split(',').collect();
    let find = |n: &str| cols.iter().position(|c| *c == n);
    let (name, ts, val) = (
        find("metric_name")?,
        find("timestamp")?,
        find("metric_value")?,
    );
    let mut best: Option<i64> = None;
    let mut seen = 0;
    for _ in 0..20_000 {
        let Some(line) = next() else {
            break;
        };
        let f: Vec<&str> = line.split(',').collect();
        if f.get(name) != Some(&"http_req_duration") {
            continue;
        }
        let (Some(t), Some(v)) = (
            f.get(ts).and_then(|t| t.parse::<i64>().ok()),
            f.get(val).and_then(|v| v.parse::<f64>().ok()),
        ) else {
            continue;
        };
        let start = t - v.round() as i64;
        best = Some(best.map_or(start, |b| b.min(start)));
        seen += 1;
        if seen >= 500 {
            break;
        }
    }
    best
}

/// The placement record for the manifest.
pub(crate) fn placement_json(
    lg: &LoadgenEngine,
    gens: &[Generator],
    cpuset: &str,
    gate_ns: i64,
) -> rundir::measurements::Generators {
    use rundir::measurements::{GeneratorInstance, GeneratorStart, Generators};
    Generators {
        count: gens.len(),
        engine: lg.docker.endpoint().to_string(),
        remote: lg.remote,
        off_host: lg.off_host,
        cpuset: cpuset.to_string(),
        shared_cpuset: gens.len() > 1,
        // Resumed together through their APIs, or released by their start gates.
        start: if gate_ns > 0 {
            GeneratorStart::Gate
        } else {
            GeneratorStart::Resume
        },
        gate_unix_ns_engine_clock: gate_ns,
        k6_dashboard: lg.dashboard.then(|| load::DASHBOARD_FILE.to_string()),
        instances: gens
            .iter()
            .map(|g| GeneratorInstance {
                index: g.seg.index,
                segment: g.seg.segment.clone(),
                sequence: g.seg.sequence.clone(),
                container: g.name.clone(),
                cpuset: cpuset.to_string(),
                out: g
                    .out_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned()),
                api: g.api.clone(),
                command: g.inv.shell_line(),
            })
            .collect(),
    }
}

/// The sampler agent on an engine that is not this machine's (the generators' or the stack's):
/// created with the perflab binary copied in, started with its containers' pids, stopped and
/// read back at the end.
pub(crate) struct Agent {
    pub id: String,
    pub docker: Docker,
    pub role: String,
}

impl Agent {
    /// `role` names the engine's role in the run (`loadgen`, `stack`): container
    /// `perflab-<run>-sampler-<role>`, host samples into `samples/host-<role>.jsonl`.
    pub(crate) async fn create(
        engine: &Docker,
        images: &ImageSet,
        run_id: &str,
        lab: &str,
        cpuset: &str,
        role: &str,
    ) -> Result<Agent> {
        let exe = std::env::current_exe().context("locating the perflab binary")?;
        let bin = std::fs::read(&exe).with_context(|| format!("reading {}", exe.display()))?;
        let name = format!("perflab-{run_id}-sampler-{role}");
        let spec = ContainerSpec {
            name,
            image: images.get(Role::BASE).tag.clone(),
            entrypoint: Some(vec![
                agent::BINARY_PATH.into(),
                "sample-agent".into(),
                "--targets".into(),
                agent::TARGETS_PATH.into(),
            ]),
            labels: docker::labels(run_id, lab, "sampler"),
            cpuset: Some(cpuset.to_string()),
            memory_bytes: Some(256 * 1024 * 1024),
            network: Some("none".into()),
            mounts: vec![Mount {
                source: "/sys/fs/cgroup".into(),
                target: "/sys/fs/cgroup".into(),
                read_only: true,
            }],
            pid_host: true,
            cgroupns_host: true,
            init: true,
            user: Some("0:0".into()),
            ..Default::default()
        };
        let id = create_filled(
            engine,
            &spec,
            &[(agent::BINARY_PATH.into(), bin, 0o755)],
            "the sampler agent",
        )
        .await?;
        Ok(Agent {
            id,
            docker: engine.clone(),
            role: role.to_string(),
        })
    }

    pub(crate) async fn start(&self, targets: &[ContainerTarget]) -> Result<()> {
        let body = serde_json::to_vec(targets)?;
        self.docker
            .upload_files(&self.id, &[(agent::TARGETS_PATH.into(), body, 0o644)])
            .await
            .context("giving the sampler agent its targets")?;
        self.docker
            .start_container(&self.id)
            .await
            .context("starting the sampler agent")?;
        Ok(())
    }

    /// Stop the agent and file its lines under `to`'s `samples/`: cgroup lines into
    /// `cgroup.jsonl` (beside the local samplers' lines), host lines into `host-<role>.jsonl`,
    /// the rest into `sampler-errors.jsonl`. Returns the number of cgroup lines.
    pub(crate) async fn finish(&self, to: &Layout) -> Result<usize> {
        self.docker.kill_container(&self.id, "SIGTERM").await.ok();
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            self.docker.wait_container(&self.id, std::future::pending()),
        )
        .await;
        let out = self
            .docker
            .logs(&self.id, None)
            .await
            .context("reading the sampler agent's output")?;
        let (cg, host, other) = agent::split(&out);
        std::fs::create_dir_all(to.samples_dir())?;
        append(&to.samples(SampleFile::Cgroup), &cg)?;
        append(&to.agent_host_samples(&self.role), &host)?;
        append(&to.samples(SampleFile::Errors), &other)?;
        Ok(cg.lines().count())
    }
}

/// Create a container and copy files into it (removed again if the copy fails).
async fn create_filled(
    docker: &Docker,
    spec: &ContainerSpec,
    files: &[(String, Vec<u8>, u32)],
    what: &str,
) -> Result<String> {
    let id = docker
        .create_container(spec)
        .await
        .with_context(|| format!("creating {what} {}", spec.name))?;
    if let Err(e) = docker.upload_files(&id, files).await {
        docker.remove_container(&id).await.ok();
        return Err(anyhow::Error::new(e).context(format!("copying files into {what}")));
    }
    Ok(id)
}

fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    if text.is_empty() {
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_keeps_the_single_generator_paths() {
        let segs = load::segments::segments(1);
        assert_eq!(out_dir(Path::new("/r"), &segs[0]), Path::new("/r/k6"));
        assert_eq!(container_name("run-x", &segs[0]), "perflab-run-x-k6");
        let segs = load::segments::segments(2);
        assert_eq!(out_dir(Path::new("/r"), &segs[1]), Path::new("/r/k6/g1"));
        assert_eq!(container_name("run-x", &segs[1]), "perflab-run-x-k6-g1");
    }

    #[test]
    fn first_request_from_the_csv_head() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("requests.csv");
        std::fs::write(
            &p,
            "metric_name,timestamp,metric_value,status\nhttp_reqs,1700000000150,1,200\nhttp_req_duration,1700000000150,50.2,200\nhttp_req_duration,1700000000160,80,200\n",
        )
        .unwrap();
        // 160 - 80 = 80 is earlier than 150 - 50 = 100.
        assert_eq!(first_request_ms(&p), Some(1_700_000_000_080));
    }
}
