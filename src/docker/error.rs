//! The Docker layer's errors; their messages say what to do next.

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
    pub(super) fn api(op: impl Into<String>, source: bollard::errors::Error) -> Self {
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
