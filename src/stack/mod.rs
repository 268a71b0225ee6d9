//! The labs' containers: one private network per stack, PostgreSQL, php-fpm + nginx (PHP lab),
//! the Express app (Node lab) or the capacity server (demo lab), as each lab's descriptor
//! (`lab::descriptor`) declares them: each pinned, memory-limited, labelled with its run and
//! owner. The host reaches them at their addresses on the lab network, so nothing is published
//! (a port on 127.0.0.1 is open to every local user) unless the host cannot (Docker Desktop,
//! rootless, an engine elsewhere: then 127.0.0.1 or `--publish-on`, said in `Access`), or a load
//! generator on another host needs the entry point. Readiness, smoke, warm-up and log
//! collection interpret the descriptor.
mod access;
mod collect;
pub mod defaults;
pub(crate) mod footprint;
mod options;
mod ready;
pub mod smoke;
mod started;
pub mod warmup;

use crate::docker::{self, ContainerSpec, Docker, Mount};
use crate::experiment::{Experiment, Lab};
use crate::images::ImageSet;
use crate::lab::{ContainerDecl, Publish, Role, StartContext, WaitFor};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::time::Instant;

pub use crate::docker::random_token;
pub(crate) use access::{Access, entry_url};
pub(crate) use collect::CollectPaths;
pub use options::StartOptions;
pub use started::{LabStack, PgConn, Pinning, StackContainer};

/// The labels every object of a stack carries.
pub fn stack_labels(run_id: &str, lab: Lab, role: &str) -> BTreeMap<String, String> {
    docker::labels(run_id, lab.as_str(), role)
}

const MIB: i64 = 1024 * 1024;
/// The load generator's memory limit (1 GiB, as the article's).
const K6_MEMORY_BYTES: i64 = 1024 * MIB;
/// `RLIMIT_NOFILE` for lab containers: 65536, or less when the host's hard limit is lower
/// (the engine cannot raise a container above its own limit).
pub(crate) fn nofile_limit() -> i64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
    if ok {
        (r.rlim_max as i64).clamp(1024, 65536)
    } else {
        4096
    }
}

impl LabStack {
    /// Start the stack of `exp` with `pinning`, wait until every part is ready, and return it.
    /// On any failure everything created so far is removed and the error carries the failing
    /// container's last log lines.
    pub async fn start(
        docker: &Docker,
        exp: &Experiment,
        pinning: &Pinning,
        run_id: &str,
        images: &ImageSet,
        opts: &StartOptions,
    ) -> Result<LabStack> {
        let t0 = Instant::now();
        let r = Self::start_inner(docker, exp, pinning, run_id, images, opts).await;
        match r {
            Ok(mut s) => {
                s.start_seconds = t0.elapsed().as_secs_f64();
                Ok(s)
            }
            Err(e) => {
                let _ = docker
                    .remove_labelled_settled(&[format!("{}={run_id}", docker::LABEL_RUN)])
                    .await;
                Err(e)
            }
        }
    }

    async fn start_inner(
        docker: &Docker,
        exp: &Experiment,
        pinning: &Pinning,
        run_id: &str,
        images: &ImageSet,
        opts: &StartOptions,
    ) -> Result<LabStack> {
        let lab = crate::lab::descriptor(exp.lab);
        let mut stack = LabStack::new(run_id, exp.lab, pinning, opts);
        docker
            .create_network(&stack.network, &stack_labels(run_id, exp.lab, "network"))
            .await?;
        stack.access = access::access(docker, &stack.network, opts).await?;
        let ctx = StartContext {
            password: random_token(24),
            monitor_password: random_token(24),
            app_cpus: pinning.app_cpus(),
            nofile: nofile_limit(),
            sampler_addr: stack.access.sampler_addr.clone(),
        };
        let decls = lab
            .containers(&exp.stack, &ctx)
            .map_err(anyhow::Error::msg)?;
        if let Some(v) = lab.info().volume {
            let volume = format!("{}-{}", stack.prefix(), v.suffix);
            docker
                .create_volume(&volume, &stack_labels(run_id, exp.lab, v.label))
                .await?;
            stack.volume = Some(volume);
        }
        let ready_of = |role: Role| -> &[WaitFor] {
            decls
                .iter()
                .find(|d| d.role == role)
                .map(|d| d.ready.as_slice())
                .unwrap_or_default()
        };
        stack.code_volumes = create_code_volumes(docker, &stack, &decls, exp.lab).await?;
        for decl in &decls {
            if let Some(before) = decl.after_ready {
                ready::wait_role(docker, &stack, before, ready_of(before), opts.ready_timeout)
                    .await?;
            }
            let spec = stack.spec(decl, images, opts);
            let files: Vec<_> = decl
                .files
                .iter()
                .map(|f| (f.path.clone(), f.contents.clone(), f.mode))
                .collect();
            let mut c = create_and_start(docker, decl.role, spec, &files, &stack.network).await?;
            c.code_volumes = decl.code_volumes.iter().map(|p| p.to_string()).collect();
            stack.attach(decl, c, &ctx, opts);
        }
        for decl in &decls {
            ready::wait_role(docker, &stack, decl.role, &decl.ready, opts.ready_timeout).await?;
        }
        Ok(stack)
    }

    /// A stack with nothing started yet.
    pub(crate) fn new(run_id: &str, lab: Lab, pinning: &Pinning, opts: &StartOptions) -> LabStack {
        LabStack {
            run_id: run_id.to_string(),
            lab,
            network: format!("perflab-{run_id}-net"),
            volume: None,
            code_volumes: Vec::new(),
            containers: BTreeMap::new(),
            pinning: pinning.clone(),
            pg: None,
            entry_url: String::new(),
            entry_port: 0,
            entry_ip: opts
                .publish_ip
                .clone()
                .unwrap_or_else(|| "127.0.0.1".into()),
            entry_published: false,
            access: Access::default(),
            target_url: String::new(),
            start_seconds: 0.0,
        }
    }

    /// `perflab-<run id>`: the names of the stack's objects start so.
    fn prefix(&self) -> String {
        format!("perflab-{}", self.run_id)
    }

    /// `perflab-<run id>-<role>-code<i>`: the volumes of a container's `code_volumes`.
    fn code_volume_names(&self, decl: &ContainerDecl) -> Vec<String> {
        (0..decl.code_volumes.len())
            .map(|i| format!("{}-{}-code{i}", self.prefix(), decl.role.log_name()))
            .collect()
    }

    /// The container spec of a declared container: named and aliased after its role, pinned to
    /// its role's slot, labelled with the run.
    pub(crate) fn spec(
        &self,
        decl: &ContainerDecl,
        images: &ImageSet,
        opts: &StartOptions,
    ) -> ContainerSpec {
        let role = decl.role;
        let mut spec = ContainerSpec {
            name: format!("{}-{}", self.prefix(), role.log_name()),
            image: images.get(role).tag.clone(),
            labels: stack_labels(&self.run_id, self.lab, role.log_name()),
            cpuset: Some(self.pinning.cpuset(role.slot()).to_string()),
            memory_bytes: Some(decl.memory_mib * MIB),
            network: Some(self.network.clone()),
            aliases: vec![role.log_name().to_string()],
            nofile: Some(nofile_limit()),
            init: true,
            env: decl.env.clone(),
            cmd: decl.cmd.clone(),
            ..Default::default()
        };
        if let (true, Some(volume), Some(v)) = (
            decl.shared_volume,
            &self.volume,
            crate::lab::descriptor(self.lab).info().volume,
        ) {
            spec.mounts = vec![Mount {
                source: volume.clone(),
                target: v.target.into(),
                read_only: false,
            }];
        }
        for (target, volume) in decl.code_volumes.iter().zip(self.code_volume_names(decl)) {
            spec.mounts.push(Mount {
                source: volume,
                target: target.to_string(),
                read_only: false,
            });
        }
        let direct = self.access.direct;
        match decl.publish {
            // `perflab up --publish PORT`: asked for, on 127.0.0.1.
            Some(Publish::Entry(port)) if opts.publish_entry.is_some() => {
                spec.publish_fixed = vec![(port, opts.publish_entry.unwrap_or_default())];
            }
            Some(Publish::Entry(port)) if !direct || opts.publish_ip.is_some() => {
                spec.publish = vec![port];
                spec.publish_ip = opts.publish_ip.clone();
            }
            Some(Publish::Database(port)) if !direct => {
                spec.publish = vec![port];
                spec.publish_ip = opts.publish_pg_ip.clone();
            }
            _ => {}
        }
        spec
    }

    /// Record a started container: the entry point's URLs, PostgreSQL's connection.
    fn attach(
        &mut self,
        decl: &ContainerDecl,
        c: StackContainer,
        ctx: &StartContext,
        opts: &StartOptions,
    ) {
        let lab_addr = c.address.clone().unwrap_or_default();
        match decl.publish {
            Some(Publish::Entry(port)) => {
                let published = c.host_ports.get(&port).copied();
                (self.entry_ip, self.entry_port) = match published {
                    Some(h) => (self.entry_ip.clone(), h),
                    None => (lab_addr.clone(), port),
                };
                self.entry_published = published.is_some();
                self.entry_url = if self.access.direct {
                    entry_url(&lab_addr, port)
                } else {
                    entry_url(&self.entry_ip, self.entry_port)
                };
                self.target_url = format!("http://{}:{port}", decl.role.log_name());
            }
            Some(Publish::Database(port)) => {
                let (host, port) = match c.host_ports.get(&port) {
                    Some(h) => (access::pg_host(opts.publish_pg_ip.as_deref()), *h),
                    None => (lab_addr, port),
                };
                self.pg = Some(PgConn {
                    host,
                    port,
                    user: "perflab".into(),
                    password: ctx.monitor_password.clone(),
                    dbname: "lab".into(),
                    app_user: "lab".into(),
                    prewarm_table: decl.prewarm_table,
                });
            }
            None => {}
        }
        self.containers.insert(decl.role, c);
    }

    /// The URL from the host of the lab's HTTP sampler source `name` (`fpm`: php-fpm's status
    /// through the hidden pool, `nginx`: nginx's `stub_status`), if the lab declares it.
    pub fn source_url(&self, name: &str) -> Option<String> {
        let info = crate::lab::descriptor(self.lab).info();
        let s = info.sources.iter().find(|s| s.name == name)?;
        Some(format!("{}{}", self.entry_url, s.read.http_path()?))
    }

    pub fn container(&self, role: Role) -> Option<&StackContainer> {
        self.containers.get(&role)
    }

    /// The full output (stdout + stderr) of a role's container so far.
    pub async fn logs(&self, docker: &Docker, role: Role) -> Result<String> {
        let c = self.containers.get(&role).with_context(|| {
            format!(
                "this {} stack has no {} container",
                self.lab.as_str(),
                role.log_name()
            )
        })?;
        Ok(docker.logs(&c.id, None).await?)
    }

    /// Copy a file out of a role's container (e.g. `storage/logs/laravel.log`, access logs).
    pub(crate) async fn read_file(
        &self,
        docker: &Docker,
        role: Role,
        path: &str,
    ) -> Result<Vec<u8>> {
        let c = self
            .containers
            .get(&role)
            .context("no such role in this stack")?;
        Ok(docker.read_file(&c.id, path).await?)
    }

    /// A container spec for the load generator of this stack: the k6 image, pinned to the
    /// load generator's cpuset, 1 GiB (as the article), on the lab network, labelled with the
    /// run (so `teardown` and `cleanup` remove it). Fill `cmd`/`env`, then `Docker::run_oneoff`.
    pub fn k6_spec(&self, images: &ImageSet, name_suffix: &str) -> ContainerSpec {
        ContainerSpec {
            name: format!("perflab-{}-{name_suffix}", self.run_id),
            image: images.get(Role::K6).tag.clone(),
            labels: stack_labels(&self.run_id, self.lab, Role::K6.log_name()),
            cpuset: Some(self.pinning.cpuset(Role::K6.slot()).to_string()),
            memory_bytes: Some(K6_MEMORY_BYTES),
            network: Some(self.network.clone()),
            nofile: Some(nofile_limit()),
            init: true,
            ..Default::default()
        }
    }

    /// Hand the stack to the user (`perflab up`, `smoke --keep`): a marker volume tells the
    /// sweep before each run that the owner's exit is no accident; `perflab down` removes it.
    pub(crate) async fn hand_over(&self, docker: &Docker) -> Result<()> {
        let mut labels = stack_labels(&self.run_id, self.lab, "kept");
        labels.insert(docker::LABEL_KEPT.to_string(), "1".to_string());
        docker
            .create_volume(&format!("{}-kept", self.prefix()), &labels)
            .await?;
        Ok(())
    }

    /// Remove every container, the network and the volume of this stack (by run label).
    pub async fn teardown(&self, docker: &Docker) -> Result<()> {
        docker
            .remove_labelled_settled(&[format!("{}={}", docker::LABEL_RUN, self.run_id)])
            .await?;
        Ok(())
    }
}

/// Create the empty volumes of every container's `code_volumes` (labelled with the run, so
/// teardown and the sweep remove them): the engine fills each from the image when the
/// container that mounts it is created. Returns their names.
async fn create_code_volumes(
    docker: &Docker,
    stack: &LabStack,
    decls: &[ContainerDecl],
    lab: Lab,
) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for decl in decls {
        for name in stack.code_volume_names(decl) {
            let label = format!("{}-code", decl.role.log_name());
            docker
                .create_volume(&name, &stack_labels(&stack.run_id, lab, &label))
                .await?;
            names.push(name);
        }
    }
    Ok(names)
}

/// Create a container, copy `files` in, start it, and return what the stack records (its
/// address on `network`).
async fn create_and_start(
    docker: &Docker,
    role: Role,
    spec: ContainerSpec,
    files: &[(String, Vec<u8>, u32)],
    network: &str,
) -> Result<StackContainer> {
    let id = docker.create_container(&spec).await?;
    if !files.is_empty() {
        docker.upload_files(&id, files).await?;
    }
    docker.start_container(&id).await?;
    let info = docker.inspect_container(&id).await?;
    if !info.running {
        // It died between start and inspect (a crash, or a kill): it has no address, and what
        // the user needs is how it ended.
        return Err(ready::exited(docker, role, &spec.name, &info).await.into());
    }
    if spec
        .publish
        .iter()
        .any(|p| !info.host_ports.contains_key(p))
    {
        bail!("container {} started without its port mapping", spec.name);
    }
    let address = info.addresses.get(network).cloned();
    if address.is_none() {
        bail!("container {} has no address on {network}", spec.name);
    }
    let mut host_ports = info.host_ports;
    for (c, h) in &spec.publish_fixed {
        host_ports.insert(*c, *h);
    }
    Ok(StackContainer {
        role,
        name: spec.name.clone(),
        id: info.id,
        image: spec.image.clone(),
        cpuset: spec.cpuset.clone().unwrap_or_default(),
        memory_bytes: spec.memory_bytes.unwrap_or(0),
        host_ports,
        address,
        code_volumes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_follows_the_plan_layout() {
        let online = crate::plan::CpuSet::parse("0-3").unwrap();
        let p = Pinning::from(&crate::plan::layout::auto(&online).unwrap());
        assert_eq!((p.loadgen.as_str(), p.db.as_str()), ("0", "1"));
        assert_eq!(p.app_cpus(), 2);
        let online = crate::plan::CpuSet::parse("0-1").unwrap();
        let p =
            Pinning::from(&crate::plan::layout::resolve(&online, Some("app=1"), false).unwrap());
        assert_eq!(
            (p.loadgen.as_str(), p.db.as_str(), p.app.as_str()),
            ("0", "0", "1")
        );
    }
}
