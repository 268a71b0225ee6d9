//! The Docker half of a session: `DockerEngine`, the real [`crate::session::Engine`] (the
//! lab's stack up and warm, the k6 generators, the samplers beside the load, the freeze, the
//! progress line, the collection), above the session's core, which knows none of it.
mod actions;
pub mod db;
pub(crate) mod docker_engine;
mod docker_load;
mod freeze;
pub mod generators;
pub mod progress;
mod trigger;

pub(crate) use docker_engine::{DockerEngine, DockerEnv};
