//! The only module that talks to the Docker Engine (bollard): connection with API version
//! negotiation, image builds from tar contexts, containers, networks, volumes, logs, file copy
//! in and out, and label-based cleanup. Everything above it uses these types, never bollard.
mod build;
mod container;
pub mod endpoint;
mod engine;
mod error;
mod exec;
mod objects;
pub mod placement;
mod token;

pub(crate) use build::{BuildEvent, Cancel, Never};
pub use container::{ContainerInfo, ContainerSpec, ExitStatus, Mount, OneOff};
pub use endpoint::Endpoint;
pub use engine::{ClockOffset, Docker, EngineFacts};
pub use error::DockerError;
pub(crate) use error::Result;
#[cfg(test)]
pub(crate) use objects::LABEL_ROLE;
pub use objects::{HostAccess, LABEL_PERFLAB, LABEL_RUN, LabelledObject, ObjectKind, labels};
pub(crate) use objects::{LABEL_KEPT, LABEL_LAB};
pub use token::random_token;
