//! What the samplers watch of a lab's stack: its containers as sampler targets, and one
//! role's cgroup directories, both found from the containers' init processes.
use anyhow::{Context, Result};

use super::cgroup::{self, CgroupPaths};
use super::targets::ContainerTarget;
use crate::docker::Docker;
use crate::lab::Role;
use crate::stack::LabStack;

/// The stack's containers as sampler targets (init pids on the stack engine's host), each
/// under its role's sampler column.
pub(crate) async fn targets(stack: &LabStack, docker: &Docker) -> Result<Vec<ContainerTarget>> {
    let mut containers = Vec::new();
    for (role, c) in &stack.containers {
        let info = docker.inspect_container(&c.id).await?;
        if let Some(pid) = info.pid {
            containers.push(ContainerTarget {
                role: *role,
                name: c.name.clone(),
                pid,
            });
        }
    }
    Ok(containers)
}

/// The cgroup directories of a role's running container on this host.
pub async fn cgroup_of(stack: &LabStack, docker: &Docker, role: Role) -> Result<CgroupPaths> {
    let c = stack
        .containers
        .get(&role)
        .context("no such role in this stack")?;
    let pid = docker
        .inspect_container(&c.id)
        .await?
        .pid
        .with_context(|| format!("{} is not running", c.name))?;
    Ok(cgroup::paths_for_pid(pid)?)
}
