//! One container of a lab's stack as its lab declares it for an experiment (`ContainerDecl`:
//! env, command, files, volumes, published port, readiness, the table PostgreSQL prewarms),
//! and what those declarations are rendered with (`StartContext`). The fixed part of a
//! container, its role, is `role::RoleDecl`. Pure data: the stack interprets it.
use super::Role;

/// Secrets and host facts the containers' declarations are rendered with.
#[derive(Debug, Clone)]
pub(crate) struct StartContext {
    /// The app role's PostgreSQL password.
    pub password: String,
    /// The harness role's (`perflab`, pg_monitor) password.
    pub monitor_password: String,
    /// CPUs of the app slot.
    pub app_cpus: usize,
    /// `RLIMIT_NOFILE` of the containers.
    pub nofile: i64,
    /// The address the samplers' requests come from (the lab network's gateway: perflab on
    /// the host); the only one allowed to read php-fpm's status page.
    pub sampler_addr: String,
}

/// A published port: the entry point (nginx or the app, `--publish-on`) or the database (for
/// the harness).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Publish {
    Entry(u16),
    Database(u16),
}

/// A file copied into a container before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDecl {
    pub path: String,
    pub contents: Vec<u8>,
    pub mode: u32,
}

/// How to tell that a container is ready; every check also requires it to keep running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WaitFor {
    /// PostgreSQL answers `SELECT 1` on its published port.
    Sql,
    /// `GET <entry point><path>` answers `status` with a body containing `body`.
    Http {
        path: &'static str,
        status: u16,
        body: &'static str,
    },
    /// A line of the container's output starts with `prefix`.
    LogLine { prefix: &'static str },
}

/// One container of a lab's stack, in start order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContainerDecl {
    pub role: Role,
    pub memory_mib: i64,
    pub env: Vec<(String, String)>,
    /// Overrides the image's command.
    pub cmd: Option<Vec<String>>,
    pub files: Vec<FileDecl>,
    /// Mounts the lab's shared volume (`LabDescriptor::volume`).
    pub shared_volume: bool,
    /// Folders of the image served from a volume of their own, filled from the image when the
    /// container is created, instead of through the engine's storage driver: with
    /// fuse-overlayfs every file lookup of a request (php-fpm's includes and stats) crosses a
    /// FUSE daemon outside the container's cgroup, a cost of perflab's layout, not of the lab.
    pub code_volumes: Vec<&'static str>,
    pub publish: Option<Publish>,
    /// Start only once this earlier role passed its readiness checks.
    pub after_ready: Option<Role>,
    /// Readiness, checked in order once every container is started.
    pub ready: Vec<WaitFor>,
    /// The table `pg_prewarm` loads when `postgres.prewarm` is on (the database's container).
    pub prewarm_table: Option<&'static str>,
}

impl ContainerDecl {
    /// `role`'s container, with its declared memory.
    pub(super) fn new(role: Role) -> ContainerDecl {
        ContainerDecl {
            role,
            memory_mib: role.memory_mib(),
            env: Vec::new(),
            cmd: None,
            files: Vec::new(),
            shared_volume: false,
            code_volumes: Vec::new(),
            publish: None,
            after_ready: None,
            ready: Vec::new(),
            prewarm_table: None,
        }
    }
}

/// A volume shared by a lab's containers (the PHP lab's unix socket directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VolumeDecl {
    /// Appended to the stack's prefix: `perflab-<run id>-<suffix>`.
    pub suffix: &'static str,
    /// The role label of the volume.
    pub label: &'static str,
    /// Where it is mounted.
    pub target: &'static str,
}
