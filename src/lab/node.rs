//! The Node lab (lab-spec §4): PostgreSQL and the Express app (one process or `node:cluster`
//! workers, each with its own pg pool), which writes a metrics line every 2 seconds.
use super::metrics::NODE_METRICS_FIELDS;
use super::settings::{Bound, Issue, MAX_BURN_US, Section, is_true, is_zero, positive, yes};
use super::*;
use serde::{Deserialize, Serialize};

/// Where `/cpu` runs its pbkdf2 (article 5.2.4, point 5: "how to fix").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMode {
    /// `crypto.pbkdf2Sync` on the event loop: the article's 2a, the loop blocked ~5.5 ms.
    #[default]
    Sync,
    /// `crypto.pbkdf2` on libuv's thread pool (`uv_threadpool_size` threads).
    Async,
    /// `pbkdf2Sync` in a pool of `worker_threads` threads fed from one queue.
    Workers,
}

impl CpuMode {
    fn as_str(self) -> &'static str {
        match self {
            CpuMode::Sync => "sync",
            CpuMode::Async => "async",
            CpuMode::Workers => "workers",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSettings {
    /// 1 = a single process; N > 1 = `node:cluster` with N workers, each with its own pool.
    #[serde(default = "one")]
    pub processes: u32,
    /// pg `Pool({max})` per process.
    #[serde(default = "default_pool_max")]
    pub pool_max: u32,
    /// `PG_CONN_TIMEOUT_MS` (pg `connectionTimeoutMillis`).
    #[serde(default = "default_pg_conn_timeout_ms")]
    pub pg_conn_timeout_ms: u32,
    /// Injected CPU work: µs of CPU burnt per request in the Express handler (0 = none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub burn_us: u32,
    /// Injected latency: µs every answer waits on a timer before it is sent, the event loop
    /// free meanwhile, so no CPU is spent (0 = none). Node's timers count whole milliseconds:
    /// a multiple of 1000, at most [`MAX_WAIT_US`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wait_us: u32,
    /// Serve the app's code and PostgreSQL's cluster from volumes filled at stack start (true,
    /// the default), or through the image's storage driver (false), as `stack.php.code_volumes`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub code_volumes: bool,
    /// Where `/cpu`'s pbkdf2 runs: `sync` (the default, the article's 2a), `async`, `workers`.
    #[serde(default, skip_serializing_if = "is_sync")]
    pub cpu_mode: CpuMode,
    /// `UV_THREADPOOL_SIZE`: libuv's thread pool, which runs `async`'s pbkdf2 (Node's default 4).
    #[serde(default = "four", skip_serializing_if = "is_four")]
    pub uv_threadpool_size: u32,
    /// The `worker_threads` pool of `cpu_mode: workers` (threads, each one job at a time).
    #[serde(default = "four", skip_serializing_if = "is_four")]
    pub worker_threads: u32,
}

impl Section for NodeSettings {
    #[rustfmt::skip]
    const BOUNDS: &'static [Bound<Self>] = &[
        Bound { key: "processes", max: 256.0, unit: "processes", what: "node:cluster workers", get: |n| n.processes.into() },
        Bound { key: "pool_max", max: 1_000.0, unit: "connections", what: "the pg pool of each process", get: |n| n.pool_max.into() },
        Bound { key: "pg_conn_timeout_ms", max: 3_600_000.0, unit: "ms", what: "pg's connectionTimeoutMillis (an hour)", get: |n| n.pg_conn_timeout_ms.into() },
        Bound { key: "burn_us", max: MAX_BURN_US, unit: "µs", what: "CPU burnt per request (1 s)", get: |n| n.burn_us.into() },
        Bound { key: "wait_us", max: MAX_WAIT_US as f64, unit: "µs", what: "waiting per answer without CPU (10 s; a multiple of 1000)", get: |n| n.wait_us.into() },
        Bound { key: "uv_threadpool_size", max: 1_024.0, unit: "threads", what: "libuv's thread pool (libuv's own ceiling)", get: |n| n.uv_threadpool_size.into() },
        Bound { key: "worker_threads", max: 64.0, unit: "threads", what: "the worker_threads pool (each its own V8 heap, tens of MB)", get: |n| n.worker_threads.into() },
    ];

    fn check(&self, _stack: &StackSettings) -> Vec<Issue> {
        let mut issues = positive(
            "node",
            &[
                ("processes", self.processes),
                ("pool_max", self.pool_max),
                ("pg_conn_timeout_ms", self.pg_conn_timeout_ms),
                ("uv_threadpool_size", self.uv_threadpool_size),
                ("worker_threads", self.worker_threads),
            ],
        );
        issues.extend(self.unused_pool());
        // past its bound the bound's own error names it
        if !self.wait_us.is_multiple_of(1000) && self.wait_us <= MAX_WAIT_US {
            let ms = self.wait_us / 1000;
            let mut i = Issue::error(
                "stack.node.wait_us",
                format!("{} is not a whole number of milliseconds", self.wait_us),
            );
            i.help = Some(format!(
                "Node's timers count whole milliseconds: give a multiple of 1000 µs, e.g. {} or {}",
                ms * 1000,
                (ms + 1) * 1000
            ));
            issues.push(i);
        }
        issues
    }
}

impl NodeSettings {
    /// A warning for a pool size set away from its default that `cpu_mode` does not use.
    fn unused_pool(&self) -> Vec<Issue> {
        let unused = [
            (
                "uv_threadpool_size",
                self.uv_threadpool_size,
                CpuMode::Async,
            ),
            ("worker_threads", self.worker_threads, CpuMode::Workers),
        ];
        let mode = self.cpu_mode;
        unused
            .into_iter()
            .filter(|(_, v, uses)| *v != 4 && *v != 0 && mode != *uses)
            .map(|(key, v, uses)| {
                Issue::warning(
                    format!("stack.node.{key}"),
                    format!(
                        "{key} {v} has no effect on /cpu under cpu_mode {}",
                        mode.as_str()
                    ),
                )
                .help(format!(
                    "set stack.node.cpu_mode to {}, or remove {key}",
                    uses.as_str()
                ))
            })
            .collect()
    }
}

/// Largest `stack.node.wait_us`: 10 s of waiting per answer, twice the catalog's usual client
/// timeout (5 s), past which every request times out and nothing is measured.
pub(crate) const MAX_WAIT_US: u32 = 10_000_000;

fn one() -> u32 {
    1
}
fn four() -> u32 {
    4
}
fn is_four(v: &u32) -> bool {
    *v == 4
}
fn is_sync(m: &CpuMode) -> bool {
    *m == CpuMode::Sync
}
fn default_pool_max() -> u32 {
    10
}
fn default_pg_conn_timeout_ms() -> u32 {
    3000
}

pub(crate) struct Node;

/// The Express app (its column `app`, its container `app`).
pub(crate) const APP: Role = Role::declare(&RoleDecl {
    name: "app",
    log_name: "app",
    image: "node-app",
    slot: Slot::App,
    memory_mib: 1024,
    process: "node",
});

const INFO: LabInfo = LabInfo {
    endpoints: &["/cpu", "/db", "/dbsleep"],
    settings_keys: &[
        "processes",
        "pool_max",
        "pg_conn_timeout_ms",
        "burn_us",
        "wait_us",
        "code_volumes",
        "cpu_mode",
        "uv_threadpool_size",
        "worker_threads",
    ],
    roles: &[Role::PG, APP],
    volume: None,
    sources: &[
        postgres::PG_SOURCE,
        // the app's 2-second metrics lines, cut from its output (`lab::metrics`)
        SourceDecl {
            name: super::metrics::SOURCE,
            offered_by: APP,
            read: source::Read::OutputLines,
            every_ms: 2000,
        },
    ],
    assets: &[Asset {
        image: APP,
        dir: "labs/node",
        prefix: "node/",
    }],
    quantities: &[
        ("pool_max", "pg Pool max per process"),
        ("processes", "Node processes (cluster workers)"),
        ("pg_conn_timeout_ms", "PG_CONN_TIMEOUT_MS"),
        (
            "uv_threadpool_size",
            "UV_THREADPOOL_SIZE (libuv's pool, async /cpu)",
        ),
        ("worker_threads", "worker_threads pool of cpu_mode workers"),
    ],
    cpu_per_request_endpoints: &["/cpu", "/db", "/dbsleep"],
    cpu_per_request_caveat: None,
};

/// The article's CPU per request on the node lab: measured under load, not sequentially.
const ARTICLE_CPU: [ArticleCpuFigure; 3] = [
    ArticleCpuFigure {
        endpoint: "/cpu",
        what: super::APP_BOX_FIGURE,
        low_ms: 5.45,
        high_ms: 5.45,
        note: "under load, 1 process (exp 2b), from the app's own counters; not sequential",
    },
    ArticleCpuFigure {
        endpoint: "/db",
        what: super::APP_BOX_FIGURE,
        low_ms: 1.68,
        high_ms: 1.74,
        note: "under load at 150 rps (exp 1a), the app's cpu_ms_per_req; not sequential",
    },
    ArticleCpuFigure {
        endpoint: "/db",
        what: "pg",
        low_ms: 2.9,
        high_ms: 3.3,
        note: "pg CPU per query at 100 rps (exp 1a); not sequential",
    },
];

fn settings(stack: &StackSettings) -> Result<&NodeSettings, String> {
    own_section(stack.node.as_ref(), Lab::Node)
}

fn app(n: &NodeSettings, ctx: &StartContext) -> ContainerDecl {
    let mut c = ContainerDecl::new(APP);
    if n.code_volumes {
        c.code_volumes = vec!["/srv/node"];
    }
    c.publish = Some(Publish::Entry(APP_PORT));
    c.cmd = Some(vec!["node".into(), "/srv/node/server.js".into()]);
    c.env = env(&[
        ("PORT", APP_PORT.to_string()),
        ("PGHOST", Role::PG.log_name().into()),
        ("PGPORT", "5432".into()),
        ("PGUSER", "lab".into()),
        ("PGPASSWORD", ctx.password.clone()),
        ("PGDATABASE", "lab".into()),
        ("PROCESSES", n.processes.to_string()),
        ("POOL_MAX", n.pool_max.to_string()),
        ("PG_CONN_TIMEOUT_MS", n.pg_conn_timeout_ms.to_string()),
        ("BURN_US", n.burn_us.to_string()),
        ("WAIT_US", n.wait_us.to_string()),
        ("CPU_MODE", n.cpu_mode.as_str().into()),
        ("UV_THREADPOOL_SIZE", n.uv_threadpool_size.to_string()),
        ("WORKER_THREADS", n.worker_threads.to_string()),
    ]);
    // The app pre-opens its pool at boot: PostgreSQL must answer first.
    c.after_ready = Some(Role::PG);
    c.ready = vec![
        WaitFor::LogLine {
            prefix: METRICS_PREFIX,
        },
        WaitFor::Http {
            path: "/cpu",
            status: 200,
            body: "\"key\"",
        },
    ];
    c
}

impl LabDescriptor for Node {
    fn info(&self) -> &'static LabInfo {
        &INFO
    }

    fn article_cpu_figures(&self) -> &'static [ArticleCpuFigure] {
        &ARTICLE_CPU
    }

    fn version_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("pg.postgres", "postgres"),
            ("node-app.node", "node"),
            ("node-app.express", "express"),
            ("node-app.pg", "node-pg"),
        ]
    }

    fn burn_us(&self, stack: &StackSettings) -> Option<u32> {
        stack.node.as_ref().map(|s| s.burn_us)
    }

    fn wait_us(&self, stack: &StackSettings) -> Option<u32> {
        stack.node.as_ref().map(|s| s.wait_us)
    }

    fn containers(
        &self,
        stack: &StackSettings,
        ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String> {
        let n = settings(stack)?;
        Ok(vec![
            postgres(stack, ctx, n.code_volumes, "orders"),
            app(n, ctx),
        ])
    }

    fn smoke(&self, stack: &StackSettings) -> Result<Vec<SmokeCheck>, String> {
        let n = settings(stack).map_err(|_| "node experiment without stack.node".to_string())?;
        Ok(vec![
            SmokeCheck::Endpoint {
                path: "/cpu",
                keys: &["key"],
                n: 5,
            },
            SmokeCheck::Endpoint {
                path: "/db",
                keys: &["customer", "n", "total", "last"],
                n: 20,
            },
            SmokeCheck::Endpoint {
                path: "/dbsleep",
                keys: &["slept_ms"],
                n: 5,
            },
            SmokeCheck::Positive {
                name: "/db aggregates a customer's orders",
                path: "/db",
                field: "n",
            },
            SmokeCheck::XactDelta { requests: 26 },
            SmokeCheck::Backends {
                name: "pool pre-opened: pool_max x processes backends",
                expect: (n.pool_max * n.processes.max(1)) as i64,
                detail: format!(", expected {}", n.pool_max * n.processes.max(1)),
            },
            SmokeCheck::MetricsLine {
                fields: &NODE_METRICS_FIELDS,
            },
        ])
    }

    fn summary(&self, stack: &StackSettings) -> Option<String> {
        let n = stack.node.as_ref()?;
        let procs = if n.processes == 1 {
            "1 process".to_string()
        } else {
            format!("node:cluster {} workers", n.processes)
        };
        let cpu = match n.cpu_mode {
            CpuMode::Sync => String::new(),
            CpuMode::Async => format!(
                ", /cpu async on libuv's pool (UV_THREADPOOL_SIZE {})",
                n.uv_threadpool_size
            ),
            CpuMode::Workers => format!(", /cpu on {} worker_threads", n.worker_threads),
        };
        Some(format!(
            "{procs}, pg pool max {} per process, PG_CONN_TIMEOUT_MS {}{cpu}{}{}",
            n.pool_max,
            n.pg_conn_timeout_ms,
            burn_note(n.burn_us),
            wait_note(n.wait_us)
        ))
    }

    fn defaults(&self) -> LabDefaults {
        LabDefaults {
            stack: StackSettings {
                node: Some(NodeSettings {
                    processes: 1,
                    pool_max: 10,
                    pg_conn_timeout_ms: 3000,
                    burn_us: 0,
                    wait_us: 0,
                    code_volumes: true,
                    cpu_mode: CpuMode::Sync,
                    uv_threadpool_size: 4,
                    worker_threads: 4,
                }),
                ..Default::default()
            },
            endpoint: "/db",
            script: Script::Breakpoint,
        }
    }

    fn quantity(&self, stack: &StackSettings, name: &str) -> Result<f64, String> {
        let n = section(stack.node.as_ref(), Lab::Node)?;
        Ok(match name {
            "pool_max" => n.pool_max as f64,
            "processes" => n.processes as f64,
            "pg_conn_timeout_ms" => n.pg_conn_timeout_ms as f64,
            "uv_threadpool_size" => n.uv_threadpool_size as f64,
            "worker_threads" => n.worker_threads as f64,
            _ => return Err(format!("`{name}` is not a quantity of the node lab")),
        })
    }

    fn slots(&self, stack: &StackSettings) -> Result<f64, String> {
        let n = section(stack.node.as_ref(), Lab::Node)?;
        Ok((n.pool_max * n.processes) as f64)
    }

    fn connections_per_node(&self, stack: &StackSettings) -> Option<u32> {
        stack.node.as_ref().map(|n| n.pool_max * n.processes)
    }
}
