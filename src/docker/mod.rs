//! The only module that talks to the Docker Engine (bollard): connection with API version
//! negotiation, image builds from tar contexts, containers, networks, volumes, logs, file copy
//! in and out, and label-based cleanup. Everything above it uses these types, never bollard.
mod build;
mod container;
pub mod endpoint;
mod engine;
mod objects;
pub mod placement;

pub(crate) use build::BuildEvent;
pub use container::{ContainerInfo, ContainerSpec, ExitStatus, Mount, OneOff};
pub use endpoint::Endpoint;
pub use engine::{ClockOffset, EngineFacts};
pub use objects::{HostAccess, LabelledObject, ObjectKind};

use std::collections::BTreeMap;

/// Label put on every object perflab creates (value `1`).
pub const LABEL_PERFLAB: &str = "perflab";
/// Label with the run id (a stack started by `up`, `smoke` or `run`).
pub const LABEL_RUN: &str = "perflab.run";
/// Label with the container's role (`pg`, `php-fpm`, `nginx`, `app`, `k6`, ...).
pub(crate) const LABEL_ROLE: &str = "perflab.role";
/// Label with the lab (`php`, `node`, `demo`).
pub(crate) const LABEL_LAB: &str = "perflab.lab";
/// Label on the marker volume of a stack handed to the user (`perflab up`, `smoke --keep`):
/// its owner exited on purpose, only `perflab down` removes it.
pub(crate) const LABEL_KEPT: &str = "perflab.kept";

/// Errors of the Docker layer; messages say what to do next.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    #[error(
        "cannot reach the Docker engine ({0}); is dockerd running and is DOCKER_HOST / /var/run/docker.sock accessible to this user?"
    )]
    Connect(String),
    #[error("Docker API call `{op}` failed: {source}")]
    Api {
        op: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("image build of {tag} failed at step {step}: {message}\nlast build output:\n{tail}")]
    Build {
        tag: String,
        step: String,
        message: String,
        tail: String,
    },
    #[error("image build of {tag} stopped at step {step}: {reason}")]
    Cancelled {
        tag: String,
        step: String,
        reason: String,
    },
    #[error("{0}")]
    Other(String),
}

impl DockerError {
    fn api(op: impl Into<String>, source: bollard::errors::Error) -> Self {
        DockerError::Api {
            op: op.into(),
            source,
        }
    }

    /// True when the engine answered 404 (no such container / image / network).
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(
            self,
            DockerError::Api {
                source: bollard::errors::Error::DockerResponseServerError {
                    status_code: 404,
                    ..
                },
                ..
            }
        )
    }
}

pub(crate) type Result<T> = std::result::Result<T, DockerError>;

/// Something that can ask a long engine call (an image build) to stop: Ctrl-C for the
/// commands (`session::signals::Interrupt` implements it), [`Never`] otherwise.
pub(crate) trait Cancel: Send + Sync {
    /// Resolves when the call must stop.
    fn cancelled(&self) -> impl std::future::Future<Output = ()> + Send;
}

/// A [`Cancel`] that never fires.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Never;

impl Cancel for Never {
    async fn cancelled(&self) {
        std::future::pending::<()>().await
    }
}

/// A connection to the Docker engine, with the API version negotiated down to the engine's
/// (Docker 20.10 speaks API 1.41 at most).
#[derive(Clone)]
pub struct Docker {
    inner: bollard::Docker,
    api_version: String,
    endpoint: Endpoint,
    /// The `ssh -L` process forwarding an ssh endpoint's socket (ended when the last clone drops).
    _tunnel: Option<std::sync::Arc<engine::SshTunnel>>,
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
                let t = engine::SshTunnel::open(target)
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

/// The standard label set for an object of a run, with its owner (this process: see `owner`).
pub fn labels(run_id: &str, lab: &str, role: &str) -> BTreeMap<String, String> {
    let mut m = crate::owner::Owner::me().labels();
    m.insert(LABEL_PERFLAB.to_string(), "1".to_string());
    m.insert(LABEL_RUN.to_string(), run_id.to_string());
    m.insert(LABEL_LAB.to_string(), lab.to_string());
    m.insert(LABEL_ROLE.to_string(), role.to_string());
    m
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

/// Random lowercase alphanumerics from the kernel's CSPRNG (passwords, run ids).
pub fn random_token(n: usize) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut buf = vec![0u8; n];
    let mut f = std::fs::File::open("/dev/urandom").expect("/dev/urandom");
    std::io::Read::read_exact(&mut f, &mut buf).expect("reading /dev/urandom");
    buf.iter()
        .map(|b| A[(*b as usize) % A.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random() {
        let a = random_token(24);
        assert_eq!(a.len(), 24);
        assert_ne!(a, random_token(24));
    }
}
