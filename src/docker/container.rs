//! Containers: create from a spec (cpuset, memory, init, nofile, labels, published ports only
//! when asked), copy files in and out as tar, start, inspect (ports, addresses), wait with
//! cancellation, logs, kill, remove, and one-off runs (k6 and friends).
use super::engine::Docker;
use super::error::{DockerError, Result};
use bollard::models::{
    ContainerCreateBody, EndpointSettings, HostConfig, NetworkingConfig, PortBinding,
    ResourcesUlimits,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    KillContainerOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
    UploadToContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;

/// A named volume (or host path) mounted into a container.
#[derive(Debug, Clone)]
pub struct Mount {
    /// Volume name or absolute host path.
    pub source: String,
    pub target: String,
    pub read_only: bool,
}

/// Everything needed to create one container.
#[derive(Debug, Clone, Default)]
pub struct ContainerSpec {
    pub name: String,
    pub image: String,
    pub entrypoint: Option<Vec<String>>,
    pub cmd: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    pub labels: BTreeMap<String, String>,
    /// `--cpuset-cpus`, e.g. `2-3`.
    pub cpuset: Option<String>,
    /// Memory limit in bytes (swap limited to the same value: no swap).
    pub memory_bytes: Option<i64>,
    /// Network to attach to, with DNS aliases on it.
    pub network: Option<String>,
    pub aliases: Vec<String>,
    /// Container TCP ports to publish on 127.0.0.1 with an ephemeral host port.
    pub publish: Vec<u16>,
    /// Container TCP ports to publish on 127.0.0.1 with a fixed host port (`up --publish`).
    pub publish_fixed: Vec<(u16, u16)>,
    /// Host address for the published ports instead of 127.0.0.1 (`run --publish-on`).
    pub publish_ip: Option<String>,
    /// Share the host's pid namespace (`--pid host`: a sampler reading other containers' cgroups).
    pub pid_host: bool,
    /// Use the host's cgroup namespace (`--cgroupns host`).
    pub cgroupns_host: bool,
    pub mounts: Vec<Mount>,
    /// `RLIMIT_NOFILE` soft = hard.
    pub nofile: Option<i64>,
    /// Run docker-init as PID 1.
    pub init: bool,
    pub user: Option<String>,
    pub workdir: Option<String>,
}

/// State of a container as the engine reports it.
#[derive(Debug, Clone)]
pub struct ContainerInfo {
    /// Full 64-hex container id.
    pub id: String,
    pub name: String,
    pub running: bool,
    pub exit_code: Option<i64>,
    pub oom_killed: bool,
    pub status: String,
    /// Host pid of the container's first process while it runs (cgroup lookup for samplers).
    pub pid: Option<u32>,
    /// When the engine started it (RFC 3339).
    pub started_at: Option<String>,
    /// Container port -> host port (on 127.0.0.1, or the `publish_ip`).
    pub host_ports: BTreeMap<u16, u16>,
    /// Network name -> the container's IPv4 address on it.
    pub addresses: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
}

/// How a waited-for container ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Exited(i64),
    /// The cancellation future fired first; the container was killed.
    Cancelled,
}

/// A finished one-off container: its id (still present until removed), exit and logs.
#[derive(Debug, Clone)]
pub struct OneOff {
    pub id: String,
    pub status: ExitStatus,
}

impl Docker {
    /// Create (not start) a container. Returns its full id.
    pub async fn create_container(&self, spec: &ContainerSpec) -> Result<String> {
        let mut port_bindings: HashMap<String, Option<Vec<PortBinding>>> = HashMap::new();
        let mut exposed = Vec::new();
        let ip = spec.publish_ip.as_deref().unwrap_or("127.0.0.1");
        for p in &spec.publish {
            exposed.push(format!("{p}/tcp"));
            port_bindings.insert(
                format!("{p}/tcp"),
                Some(vec![PortBinding {
                    host_ip: Some(ip.into()),
                    host_port: Some(String::new()),
                }]),
            );
        }
        for (cport, hport) in &spec.publish_fixed {
            exposed.push(format!("{cport}/tcp"));
            port_bindings.insert(
                format!("{cport}/tcp"),
                Some(vec![PortBinding {
                    host_ip: Some(ip.into()),
                    host_port: Some(hport.to_string()),
                }]),
            );
        }
        let binds: Vec<String> = spec
            .mounts
            .iter()
            .map(|m| {
                format!(
                    "{}:{}{}",
                    m.source,
                    m.target,
                    if m.read_only { ":ro" } else { "" }
                )
            })
            .collect();
        let host_config = HostConfig {
            cpuset_cpus: spec.cpuset.clone(),
            memory: spec.memory_bytes,
            memory_swap: spec.memory_bytes,
            init: Some(spec.init),
            ulimits: spec.nofile.map(|n| {
                vec![ResourcesUlimits {
                    name: Some("nofile".into()),
                    soft: Some(n),
                    hard: Some(n),
                }]
            }),
            network_mode: spec.network.clone(),
            pid_mode: spec.pid_host.then(|| "host".to_string()),
            cgroupns_mode: spec
                .cgroupns_host
                .then_some(bollard::models::HostConfigCgroupnsModeEnum::HOST),
            port_bindings: (!port_bindings.is_empty()).then_some(port_bindings),
            binds: (!binds.is_empty()).then_some(binds),
            ..Default::default()
        };
        let networking_config = spec
            .network
            .as_ref()
            .filter(|n| !matches!(n.as_str(), "host" | "none"))
            .map(|n| NetworkingConfig {
                endpoints_config: Some(HashMap::from([(
                    n.clone(),
                    EndpointSettings {
                        aliases: (!spec.aliases.is_empty()).then(|| spec.aliases.clone()),
                        ..Default::default()
                    },
                )])),
            });
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: spec.entrypoint.clone(),
            cmd: spec.cmd.clone(),
            env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            labels: Some(spec.labels.clone().into_iter().collect()),
            exposed_ports: (!exposed.is_empty()).then_some(exposed),
            user: spec.user.clone(),
            working_dir: spec.workdir.clone(),
            host_config: Some(host_config),
            networking_config,
            ..Default::default()
        };
        let opts = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let r = self
            .raw()
            .create_container(Some(opts), body)
            .await
            .map_err(|e| DockerError::api(format!("create container {}", spec.name), e))?;
        Ok(r.id)
    }

    /// Copy files into a container (created or running) as a tar archive extracted at `/`.
    pub(crate) async fn upload_files(
        &self,
        id: &str,
        files: &[(String, Vec<u8>, u32)],
    ) -> Result<()> {
        let tar = tar_of(files).map_err(|e| DockerError::Other(e.to_string()))?;
        self.upload_tar(id, "/", tar).await
    }

    /// Upload a tar archive and extract it at `dir` inside the container.
    pub(crate) async fn upload_tar(&self, id: &str, dir: &str, tar: Vec<u8>) -> Result<()> {
        let opts = UploadToContainerOptionsBuilder::default().path(dir).build();
        self.raw()
            .upload_to_container(id, Some(opts), bollard::body_full(tar.into()))
            .await
            .map_err(|e| DockerError::api(format!("copy files into {id}"), e))
    }

    /// Download `path` (file or directory) from a container as a tar archive.
    pub(crate) async fn download_tar(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        let opts = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut s = self.raw().download_from_container(id, Some(opts));
        let mut out = Vec::new();
        while let Some(chunk) = s.next().await {
            let chunk =
                chunk.map_err(|e| DockerError::api(format!("copy {path} out of {id}"), e))?;
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// Read one regular file out of a container.
    pub async fn read_file(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        let tar = self.download_tar(id, path).await?;
        let mut a = tar::Archive::new(tar.as_slice());
        let entries = a.entries().map_err(|e| DockerError::Other(e.to_string()))?;
        for e in entries {
            let mut e = e.map_err(|e| DockerError::Other(e.to_string()))?;
            if e.header().entry_type().is_file() {
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut e, &mut buf)
                    .map_err(|e| DockerError::Other(e.to_string()))?;
                return Ok(buf);
            }
        }
        Err(DockerError::Other(format!(
            "{path} in container {id} is not a regular file"
        )))
    }

    pub async fn start_container(&self, id: &str) -> Result<()> {
        self.raw()
            .start_container(id, None::<bollard::query_parameters::StartContainerOptions>)
            .await
            .map_err(|e| DockerError::api(format!("start container {id}"), e))
    }

    /// Inspect a container: state, full id, published 127.0.0.1 ports.
    pub async fn inspect_container(&self, id: &str) -> Result<ContainerInfo> {
        let i = self.inspect_raw(id).await?;
        let state = i.state.unwrap_or_default();
        let mut host_ports = BTreeMap::new();
        let addresses: BTreeMap<String, String> = i
            .network_settings
            .as_ref()
            .and_then(|n| n.networks.clone())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(net, e)| Some((net, e.ip_address.filter(|a| !a.is_empty())?)))
            .collect();
        if let Some(ports) = i.network_settings.and_then(|n| n.ports) {
            for (k, v) in ports {
                let cport: Option<u16> = k.split('/').next().and_then(|p| p.parse().ok());
                // 127.0.0.1 by default; another address with `--publish-on` (one binding each).
                let hport = v
                    .unwrap_or_default()
                    .into_iter()
                    .find_map(|b| b.host_port.and_then(|p| p.parse::<u16>().ok()));
                if let (Some(c), Some(h)) = (cport, hport) {
                    host_ports.insert(c, h);
                }
            }
        }
        Ok(ContainerInfo {
            id: i.id.unwrap_or_default(),
            name: i
                .name
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string(),
            running: state.running.unwrap_or(false),
            exit_code: state.exit_code,
            oom_killed: state.oom_killed.unwrap_or(false),
            status: state.status.map(|s| s.to_string()).unwrap_or_default(),
            pid: state.pid.filter(|p| *p > 0).map(|p| p as u32),
            started_at: state.started_at.clone(),
            host_ports,
            addresses,
            labels: i
                .config
                .and_then(|c| c.labels)
                .unwrap_or_default()
                .into_iter()
                .collect(),
        })
    }

    /// Wait until the container stops, or until `cancel` completes (then kill it).
    pub(crate) async fn wait_container(
        &self,
        id: &str,
        cancel: impl Future<Output = ()>,
    ) -> Result<ExitStatus> {
        let opts = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let mut s = self.raw().wait_container(id, Some(opts));
        tokio::select! {
            r = s.next() => match r {
                Some(Ok(w)) => Ok(ExitStatus::Exited(w.status_code)),
                // bollard maps a non-zero exit to an error carrying the code.
                Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(ExitStatus::Exited(code)),
                Some(Err(e)) => Err(DockerError::api(format!("wait for container {id}"), e)),
                None => {
                    let i = self.inspect_container(id).await?;
                    Ok(ExitStatus::Exited(i.exit_code.unwrap_or(-1)))
                }
            },
            _ = cancel => {
                self.kill_container(id, "SIGTERM").await.ok();
                Ok(ExitStatus::Cancelled)
            }
        }
    }

    /// Send a signal to a running container (no error if it already stopped).
    pub async fn kill_container(&self, id: &str, signal: &str) -> Result<()> {
        let opts = KillContainerOptionsBuilder::default()
            .signal(signal)
            .build();
        match self.raw().kill_container(id, Some(opts)).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404 | 409,
                ..
            }) => Ok(()),
            Err(e) => Err(DockerError::api(format!("kill container {id}"), e)),
        }
    }

    /// Freeze every process of a running container (the cgroup freezer: none of them runs,
    /// whichever is PID 1 and whatever it does with signals; the kernel still queues its
    /// connections), or thaw it again (`freeze = false`).
    pub(crate) async fn freeze_container(&self, id: &str, freeze: bool) -> Result<()> {
        let r = if freeze {
            self.raw().pause_container(id).await
        } else {
            self.raw().unpause_container(id).await
        };
        let what = if freeze { "pause" } else { "unpause" };
        r.map_err(|e| DockerError::api(format!("{what} container {id}"), e))
    }

    /// Cut a running container's CPU to `keep` (0 to 1) of the CPUs of its cpuset (cgroup
    /// `cpu.max`: a quota per 100 ms period, through the Engine's container update), or lift
    /// the quota again (`keep = None`). Returns the CPUs the quota leaves it (None: lifted).
    pub(crate) async fn cut_cpu(&self, id: &str, keep: Option<f64>) -> Result<Option<f64>> {
        const PERIOD_US: i64 = 100_000;
        let (quota, cpus) = match keep {
            Some(k) => {
                let i = self.inspect_raw(id).await?;
                let set = i
                    .host_config
                    .and_then(|h| h.cpuset_cpus)
                    .unwrap_or_default();
                let n = cpuset_len(&set)
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
                let cpus = k.clamp(0.01, 1.0) * n as f64;
                (
                    ((cpus * PERIOD_US as f64).round() as i64).max(1000),
                    Some(cpus),
                )
            }
            // -1: no quota (`cpu.max` back to `max`)
            None => (-1, None),
        };
        let body = bollard::models::ContainerUpdateBody {
            cpu_period: Some(PERIOD_US),
            cpu_quota: Some(quota),
            ..Default::default()
        };
        self.raw().update_container(id, body).await.map_err(|e| {
            DockerError::api(format!("update container {id} (cpu quota {quota})"), e)
        })?;
        Ok(cpus)
    }

    async fn inspect_raw(&self, id: &str) -> Result<bollard::models::ContainerInspectResponse> {
        self.raw()
            .inspect_container(
                id,
                None::<bollard::query_parameters::InspectContainerOptions>,
            )
            .await
            .map_err(|e| DockerError::api(format!("inspect container {id}"), e))
    }

    /// Force-remove a container and its anonymous volumes (no error if it is gone).
    pub async fn remove_container(&self, id: &str) -> Result<()> {
        let opts = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match self.raw().remove_container(id, Some(opts)).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409,
                message,
            }) if message.contains("already in progress") => Ok(()),
            Err(e) => Err(DockerError::api(format!("remove container {id}"), e)),
        }
    }

    /// The container's output so far (stdout and stderr interleaved); `tail` lines or all.
    pub async fn logs(&self, id: &str, tail: Option<usize>) -> Result<String> {
        let tail = tail.map(|t| t.to_string()).unwrap_or_else(|| "all".into());
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .tail(&tail)
            .build();
        let mut s = self.raw().logs(id, Some(opts));
        let mut out = String::new();
        while let Some(item) = s.next().await {
            let item = item.map_err(|e| DockerError::api(format!("logs of {id}"), e))?;
            out.push_str(&String::from_utf8_lossy(&item.into_bytes()));
        }
        Ok(out)
    }

    /// Create, fill (`files`), start and wait for a one-off container; kill it when `cancel`
    /// completes first. The container is left in place (read its logs or files), remove it after.
    pub async fn run_oneoff(
        &self,
        spec: &ContainerSpec,
        files: &[(String, Vec<u8>, u32)],
        cancel: impl Future<Output = ()>,
    ) -> Result<OneOff> {
        let id = self.create_container(spec).await?;
        let r = async {
            if !files.is_empty() {
                self.upload_files(&id, files).await?;
            }
            self.start_container(&id).await?;
            self.wait_container(&id, cancel).await
        }
        .await;
        match r {
            Ok(status) => Ok(OneOff { id, status }),
            Err(e) => {
                self.remove_container(&id).await.ok();
                Err(e)
            }
        }
    }
}

/// Build an in-memory tar archive from `(path, contents, mode)` entries.
pub(crate) fn tar_of(files: &[(String, Vec<u8>, u32)]) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data, mode) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(*mode);
        h.set_mtime(0);
        h.set_cksum();
        b.append_data(&mut h, path.trim_start_matches('/'), data.as_slice())?;
    }
    b.into_inner()
}

/// How many CPUs a cpuset list names (`0-1,3` is 3); None for an empty or unreadable one.
fn cpuset_len(set: &str) -> Option<usize> {
    let mut n = 0;
    for part in set.split(',').filter(|p| !p.trim().is_empty()) {
        n += match part.trim().split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()?.checked_sub(a.parse().ok()?)? + 1,
            None => part.trim().parse::<usize>().map(|_| 1).ok()?,
        };
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod cpuset_tests {
    #[test]
    fn a_cpuset_list_counts_its_cpus() {
        assert_eq!(super::cpuset_len("0-1,3"), Some(3));
        assert_eq!(super::cpuset_len("1"), Some(1));
        assert_eq!(super::cpuset_len(""), None);
        assert_eq!(super::cpuset_len("3-1"), None);
    }
}
