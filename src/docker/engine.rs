//! The connection to an engine (`Docker`, its API version negotiated), facts about the engine
//! (version, CPUs, cgroup version, OS), its clock against ours (the engine's `/info` SystemTime
//! bracketed by local timestamps), and the ssh tunnel behind `ssh://` endpoints.
use super::endpoint::Endpoint;
use super::error::{DockerError, Result};
use chrono::{DateTime, Utc};
use std::path::PathBuf;
use std::time::Duration;

/// A connection to the Docker engine, with the API version negotiated down to the engine's
/// (Docker 20.10 speaks API 1.41 at most).
#[derive(Clone)]
pub struct Docker {
    inner: bollard::Docker,
    api_version: String,
    endpoint: Endpoint,
    /// The `ssh -L` process forwarding an ssh endpoint's socket (ended when the last clone drops).
    _tunnel: Option<std::sync::Arc<SshTunnel>>,
}

impl Docker {
    /// Connect with the local defaults (DOCKER_HOST or the unix socket) and negotiate the version.
    pub async fn connect() -> Result<Docker> {
        Self::connect_to(&Endpoint::Local).await
    }

    /// Connect to an endpoint (see `endpoint`) and negotiate the version.
    pub(crate) async fn connect_to(endpoint: &Endpoint) -> Result<Docker> {
        let api = bollard::API_DEFAULT_VERSION;
        let mut tunnel = None;
        let conn = |e: bollard::errors::Error| DockerError::Connect(format!("{endpoint}: {e}"));
        let d = match endpoint {
            Endpoint::Local => bollard::Docker::connect_with_local_defaults().map_err(conn)?,
            Endpoint::Unix(p) => bollard::Docker::connect_with_unix(p, 600, api).map_err(conn)?,
            Endpoint::Tcp(a) => {
                bollard::Docker::connect_with_http(&format!("tcp://{a}"), 600, api).map_err(conn)?
            }
            Endpoint::Ssh(target) => {
                let t = SshTunnel::open(target)
                    .await
                    .map_err(|e| DockerError::Connect(format!("{endpoint}: {e}")))?;
                let d =
                    bollard::Docker::connect_with_unix(&t.socket_path(), 600, api).map_err(conn)?;
                tunnel = Some(std::sync::Arc::new(t));
                d
            }
        };
        let d = d.with_timeout(std::time::Duration::from_secs(600));
        let d = d
            .negotiate_version()
            .await
            .map_err(|e| DockerError::Connect(format!("{endpoint}: {e}")))?;
        let v = d.client_version();
        let api_version = format!("{}.{}", v.major_version, v.minor_version);
        // Make sure the engine really answers (negotiation falls back silently on some errors).
        d.ping()
            .await
            .map_err(|e| DockerError::Connect(format!("{endpoint}: {e}")))?;
        Ok(Docker {
            inner: d,
            api_version,
            endpoint: endpoint.clone(),
            _tunnel: tunnel,
        })
    }

    /// The endpoint this connection talks to.
    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The negotiated API version, e.g. `1.41`.
    pub(crate) fn api_version(&self) -> &str {
        &self.api_version
    }

    /// The engine's version string (`20.10.24+dfsg1`).
    pub(crate) async fn engine_version(&self) -> Result<String> {
        let v = self
            .inner
            .version()
            .await
            .map_err(|e| DockerError::api("version", e))?;
        Ok(v.version.unwrap_or_default())
    }

    pub(crate) fn raw(&self) -> &bollard::Docker {
        &self.inner
    }
}

/// What the pre-run check records about an engine.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EngineFacts {
    pub endpoint: String,
    pub server_version: Option<String>,
    pub api_version: String,
    pub ncpu: Option<i64>,
    /// `1` or `2`.
    pub cgroup_version: Option<String>,
    pub os: Option<String>,
    pub kernel: Option<String>,
    pub name: Option<String>,
    /// The daemon's id: equal ids are the same daemon reached twice.
    pub id: Option<String>,
}

/// The engine's clock minus ours, from the best of a few `/info` round trips.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClockOffset {
    /// Engine clock - local clock (ms): positive = the engine is ahead.
    pub offset_ms: f64,
    /// Round trip of the sample used (ms); the offset is known to +- half of it.
    pub rtt_ms: f64,
    pub samples: u32,
}

/// Offset from one sample: the engine's time against the midpoint of the local send/receive
/// instants. Pure.
pub(crate) fn offset_of(
    sent: DateTime<Utc>,
    engine: DateTime<Utc>,
    received: DateTime<Utc>,
) -> ClockOffset {
    let rtt_ns = (received - sent).num_nanoseconds().unwrap_or(0);
    let mid = sent + chrono::Duration::nanoseconds(rtt_ns / 2);
    let off_ns = (engine - mid).num_nanoseconds().unwrap_or(0);
    ClockOffset {
        offset_ms: off_ns as f64 / 1e6,
        rtt_ms: rtt_ns as f64 / 1e6,
        samples: 1,
    }
}

impl Docker {
    /// Version, CPUs, cgroup version, OS and daemon id.
    pub(crate) async fn facts(&self) -> Result<EngineFacts> {
        let i = self
            .raw()
            .info()
            .await
            .map_err(|e| DockerError::api("info", e))?;
        Ok(EngineFacts {
            endpoint: self.endpoint().to_string(),
            server_version: i.server_version,
            api_version: self.api_version().to_string(),
            ncpu: i.ncpu,
            cgroup_version: i.cgroup_version.map(|v| v.to_string()),
            os: i.operating_system,
            kernel: i.kernel_version,
            name: i.name,
            id: i.id,
        })
    }

    /// Measure the engine's clock against ours: `samples` `/info` calls, the one with the
    /// shortest round trip wins.
    pub(crate) async fn clock_offset(&self, samples: u32) -> Result<ClockOffset> {
        let mut best: Option<ClockOffset> = None;
        for _ in 0..samples.max(1) {
            let sent = Utc::now();
            let i = self
                .raw()
                .info()
                .await
                .map_err(|e| DockerError::api("info", e))?;
            let received = Utc::now();
            let Some(t) = i
                .system_time
                .as_deref()
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            else {
                return Err(DockerError::Other(format!(
                    "{}: the engine's /info has no SystemTime",
                    self.endpoint()
                )));
            };
            let o = offset_of(sent, t.with_timezone(&Utc), received);
            if best.is_none_or(|b| o.rtt_ms < b.rtt_ms) {
                best = Some(o);
            }
        }
        let mut b = best.expect("at least one sample");
        b.samples = samples.max(1);
        Ok(b)
    }
}

/// `ssh -nNT -L <socket>:/var/run/docker.sock <target>`, ended (SIGTERM to the process this
/// struct started) when dropped.
pub(crate) struct SshTunnel {
    child: std::process::Child,
    socket: PathBuf,
}

impl SshTunnel {
    pub(crate) async fn open(target: &str) -> std::result::Result<SshTunnel, String> {
        let socket = std::env::temp_dir().join(format!(
            "perflab-ssh-{}-{}.sock",
            std::process::id(),
            super::token::random_token(6)
        ));
        let (host, port) = match target.rsplit_once(':') {
            Some((h, p)) if p.parse::<u16>().is_ok() => (h.to_string(), Some(p.to_string())),
            _ => (target.to_string(), None),
        };
        let mut cmd = std::process::Command::new("ssh");
        cmd.args([
            "-nNT",
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "BatchMode=yes",
        ]);
        if let Some(p) = &port {
            cmd.args(["-p", p]);
        }
        cmd.arg("-L")
            .arg(format!("{}:/var/run/docker.sock", socket.display()))
            .arg(&host)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run ssh ({e}); install openssh-client"))?;
        let t0 = std::time::Instant::now();
        while !socket.exists() {
            if let Ok(Some(st)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                return Err(format!(
                    "ssh {host} exited with {st}: {} (the remote user needs access to /var/run/docker.sock; use key-based login)",
                    err.trim()
                ));
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("ssh {host}: no forwarded socket after 20 s"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(SshTunnel { child, socket })
    }

    pub(crate) fn socket_path(&self) -> String {
        self.socket.display().to_string()
    }
}

impl Drop for SshTunnel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn offset_against_the_midpoint() {
        let t0 = Utc.with_ymd_and_hms(2026, 11, 30, 4, 0, 0).unwrap();
        let ms = |m: i64| chrono::Duration::milliseconds(m);
        // Sent at 0, received at 4 ms, the engine said 2 ms + 15 ms: 15 ms ahead.
        let o = offset_of(t0, t0 + ms(17), t0 + ms(4));
        assert!((o.offset_ms - 15.0).abs() < 1e-6, "{o:?}");
        assert!((o.rtt_ms - 4.0).abs() < 1e-6);
        // An engine behind us gives a negative offset.
        let o = offset_of(t0, t0 - ms(8), t0 + ms(2));
        assert!((o.offset_ms + 9.0).abs() < 1e-6, "{o:?}");
    }
}
