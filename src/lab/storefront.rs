//! The storefront lab (issue 44, seed 004's drop-day outage): an Express front that renders
//! pages by calling a backend API (Express over PostgreSQL), both run from the node-app image
//! with their scripts copied in (`labs/storefront/`). Each bug of the seed is a setting of
//! `stack.storefront:` (the cache's TTL, single-flight, cached failures, the outbound agent,
//! synchronous logging, the front's timeout), so an experiment turns one on or off. The front's
//! `/status` (its counters and the backend's) is the `front` source.
use super::settings::{Bound, Issue, MAX_BURN_US, Section, positive, yes};
use super::*;
use serde::{Deserialize, Serialize};

/// `stack.storefront:`. The defaults are the seed's fixed storefront, but for the cache's TTL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorefrontSettings {
    /// TTL of the front's per-process cache of the API's answers (ms; seed: landing 5 s).
    #[serde(default = "default_cache_ttl_ms")]
    pub cache_ttl_ms: u32,
    /// Concurrent misses of one key share one backend call (the seed's fix).
    #[serde(default)]
    pub single_flight: bool,
    /// A failed backend call is cached as null for `failure_ttl_ms` and its page is a 404 (the
    /// seed's sticky "not found"); false: the failure is thrown and never cached.
    #[serde(default)]
    pub cache_failures: bool,
    /// How long a cached failure stays (ms; seed: 60 s on the landing page).
    #[serde(default = "default_failure_ttl_ms")]
    pub failure_ttl_ms: u32,
    /// The outbound agent keeps connections alive (false: one TCP connection per call).
    #[serde(default = "yes")]
    pub keep_alive: bool,
    /// The outbound agent's `maxSockets` (0 = Infinity, the seed's global agent).
    #[serde(default = "default_max_sockets")]
    pub max_sockets: u32,
    /// Every backend answer written to stdout synchronously (the seed's leftover debug line).
    #[serde(default)]
    pub sync_log: bool,
    /// The front's timeout to the backend, its agent's queue included (ms; seed: 15 s).
    #[serde(default = "default_backend_timeout_ms")]
    pub backend_timeout_ms: u32,
    /// Load shedding at the door: pages in flight past which the front answers 429 (0 = none).
    #[serde(default)]
    pub max_inflight: u32,
    /// CPU the backend spends per call (µs), its serialisation and business logic.
    #[serde(default = "default_backend_burn_us")]
    pub backend_burn_us: u32,
    /// The backend's pg pool.
    #[serde(default = "default_pool_max")]
    pub backend_pool_max: u32,
}

impl Section for StorefrontSettings {
    #[rustfmt::skip]
    const BOUNDS: &'static [Bound<Self>] = &[
        Bound { key: "cache_ttl_ms", max: 3_600_000.0, unit: "ms", what: "the front's cache TTL (an hour)", get: |s| s.cache_ttl_ms.into() },
        Bound { key: "failure_ttl_ms", max: 3_600_000.0, unit: "ms", what: "how long a cached failure stays (an hour)", get: |s| s.failure_ttl_ms.into() },
        Bound { key: "max_sockets", max: 65_536.0, unit: "sockets", what: "the outbound agent's maxSockets (0 = Infinity)", get: |s| s.max_sockets.into() },
        Bound { key: "backend_timeout_ms", max: 600_000.0, unit: "ms", what: "the front's timeout to the backend (10 minutes)", get: |s| s.backend_timeout_ms.into() },
        Bound { key: "max_inflight", max: 100_000.0, unit: "pages", what: "pages in flight before the front sheds with 429 (0 = none)", get: |s| s.max_inflight.into() },
        Bound { key: "backend_burn_us", max: MAX_BURN_US, unit: "µs", what: "CPU the backend spends per call (1 s)", get: |s| s.backend_burn_us.into() },
        Bound { key: "backend_pool_max", max: 1_000.0, unit: "connections", what: "the backend's pg pool", get: |s| s.backend_pool_max.into() },
    ];

    fn check(&self, _stack: &StackSettings) -> Vec<Issue> {
        let mut issues = positive(
            "storefront",
            &[
                ("cache_ttl_ms", self.cache_ttl_ms),
                ("backend_timeout_ms", self.backend_timeout_ms),
                ("backend_pool_max", self.backend_pool_max),
            ],
        );
        if !self.cache_failures && self.failure_ttl_ms != default_failure_ttl_ms() {
            issues.push(
                Issue::warning(
                    "stack.storefront.failure_ttl_ms",
                    format!(
                        "failure_ttl_ms {} has no effect: failures are not cached",
                        self.failure_ttl_ms
                    ),
                )
                .help("set stack.storefront.cache_failures: true, or remove failure_ttl_ms"),
            );
        }
        if self.cache_failures && self.failure_ttl_ms == 0 {
            issues.push(
                Issue::error(
                    "stack.storefront.failure_ttl_ms",
                    "must be > 0 when failures are cached",
                )
                .help("give the seed's 60000, or set cache_failures: false"),
            );
        }
        issues
    }
}

fn default_cache_ttl_ms() -> u32 {
    5_000
}
fn default_failure_ttl_ms() -> u32 {
    60_000
}
fn default_max_sockets() -> u32 {
    64
}
fn default_backend_timeout_ms() -> u32 {
    15_000
}
fn default_backend_burn_us() -> u32 {
    2_000
}
fn default_pool_max() -> u32 {
    10
}

impl Default for StorefrontSettings {
    fn default() -> Self {
        StorefrontSettings {
            cache_ttl_ms: default_cache_ttl_ms(),
            single_flight: false,
            cache_failures: false,
            failure_ttl_ms: default_failure_ttl_ms(),
            keep_alive: true,
            max_sockets: default_max_sockets(),
            sync_log: false,
            backend_timeout_ms: default_backend_timeout_ms(),
            max_inflight: 0,
            backend_burn_us: default_backend_burn_us(),
            backend_pool_max: default_pool_max(),
        }
    }
}

pub(crate) struct Storefront;

/// The backend API (its column `api`, its container `api`): the container a CPU cut throttles.
pub(crate) const API: Role = Role::declare(&RoleDecl {
    name: "api",
    log_name: "api",
    image: "node-app",
    slot: Slot::App,
    memory_mib: 512,
    process: "node",
});

/// The front (its column `front`, its container `front`): the entry point.
pub(crate) const FRONT: Role = Role::declare(&RoleDecl {
    name: "front",
    log_name: "front",
    image: "node-app",
    slot: Slot::App,
    memory_mib: 512,
    process: "node",
});

/// The backend's port on the lab network.
const API_PORT: u16 = 3001;
const FRONT_JS: &str = include_str!("../../labs/storefront/front.js");
const API_JS: &str = include_str!("../../labs/storefront/api.js");

/// The front's counters and the backend's, every 2 s (`samples/front.jsonl`; a reading waits
/// up to 1.5 s: a front whose event loop the storm keeps busy still answers most of them).
pub(crate) const FRONT_SOURCE: SourceDecl = SourceDecl {
    name: "front",
    offered_by: FRONT,
    read: source::Read::HttpJson { path: "/status" },
    every_ms: 2000,
};

const INFO: LabInfo = LabInfo {
    endpoints: &["/home", "/landing", "/gacha", "/raffle", "/catalog"],
    settings_keys: &[
        "cache_ttl_ms",
        "single_flight",
        "cache_failures",
        "failure_ttl_ms",
        "keep_alive",
        "max_sockets",
        "sync_log",
        "backend_timeout_ms",
        "max_inflight",
        "backend_burn_us",
        "backend_pool_max",
    ],
    roles: &[Role::PG, API, FRONT],
    volume: None,
    sources: &[postgres::PG_SOURCE, FRONT_SOURCE],
    assets: &[],
    quantities: &[
        ("cache_ttl_ms", "the front's cache TTL (ms)"),
        (
            "single_flight",
            "1 when concurrent misses share one backend call",
        ),
        (
            "cache_failures",
            "1 when failed backend calls are cached as null",
        ),
        (
            "max_sockets",
            "the front's outbound maxSockets (0 = Infinity)",
        ),
        (
            "keep_alive",
            "1 when the front's outbound agent keeps connections alive",
        ),
        (
            "backend_timeout_ms",
            "the front's timeout to the backend (ms)",
        ),
        (
            "max_inflight",
            "pages in flight before the front sheds (0 = none)",
        ),
    ],
    cpu_per_request_endpoints: &[],
    cpu_per_request_caveat: None,
};

fn script(path: &str, contents: &str) -> FileDecl {
    FileDecl {
        path: path.into(),
        contents: contents.as_bytes().to_vec(),
        mode: 0o644,
    }
}

fn flag(b: bool) -> String {
    u8::from(b).to_string()
}

fn api(s: &StorefrontSettings, ctx: &StartContext) -> ContainerDecl {
    let mut c = ContainerDecl::new(API);
    c.files = vec![script("/srv/storefront/api.js", API_JS)];
    c.cmd = Some(vec!["node".into(), "/srv/storefront/api.js".into()]);
    c.env = env(&[
        ("PORT", API_PORT.to_string()),
        ("PGHOST", Role::PG.log_name().into()),
        ("PGPORT", "5432".into()),
        ("PGUSER", "lab".into()),
        ("PGPASSWORD", ctx.password.clone()),
        ("PGDATABASE", "lab".into()),
        ("POOL_MAX", s.backend_pool_max.to_string()),
        ("BURN_US", s.backend_burn_us.to_string()),
    ]);
    c.after_ready = Some(Role::PG);
    c.ready = vec![WaitFor::LogLine {
        prefix: "storefront api ready",
    }];
    c
}

fn front(s: &StorefrontSettings) -> ContainerDecl {
    let mut c = ContainerDecl::new(FRONT);
    c.files = vec![script("/srv/storefront/front.js", FRONT_JS)];
    c.cmd = Some(vec!["node".into(), "/srv/storefront/front.js".into()]);
    c.publish = Some(Publish::Entry(APP_PORT));
    c.env = env(&[
        ("PORT", APP_PORT.to_string()),
        ("API_HOST", API.log_name().into()),
        ("API_PORT", API_PORT.to_string()),
        ("CACHE_TTL_MS", s.cache_ttl_ms.to_string()),
        ("SINGLE_FLIGHT", flag(s.single_flight)),
        ("CACHE_FAILURES", flag(s.cache_failures)),
        ("FAILURE_TTL_MS", s.failure_ttl_ms.to_string()),
        ("KEEP_ALIVE", flag(s.keep_alive)),
        ("MAX_SOCKETS", s.max_sockets.to_string()),
        ("SYNC_LOG", flag(s.sync_log)),
        ("BACKEND_TIMEOUT_MS", s.backend_timeout_ms.to_string()),
        ("MAX_INFLIGHT", s.max_inflight.to_string()),
    ]);
    c.after_ready = Some(API);
    c.ready = vec![
        WaitFor::LogLine {
            prefix: "storefront front ready",
        },
        WaitFor::Http {
            path: "/home",
            status: 200,
            body: "<h1>home</h1>",
        },
    ];
    c
}

fn settings(stack: &StackSettings) -> Result<&StorefrontSettings, String> {
    own_section(stack.storefront.as_ref(), Lab::Storefront)
}

impl LabDescriptor for Storefront {
    fn info(&self) -> &'static LabInfo {
        &INFO
    }

    fn containers(
        &self,
        stack: &StackSettings,
        ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String> {
        let s = settings(stack)?;
        Ok(vec![
            postgres(stack, ctx, true, "products"),
            api(s, ctx),
            front(s),
        ])
    }

    fn smoke(&self, stack: &StackSettings) -> Result<Vec<SmokeCheck>, String> {
        let s = settings(stack)
            .map_err(|_| "storefront experiment without stack.storefront".to_string())?;
        let pool = i64::from(s.backend_pool_max);
        Ok(vec![
            // the front's status holds its counters and, through it, the backend's
            SmokeCheck::Endpoint {
                path: "/status",
                keys: &["front", "backend"],
                n: 3,
            },
            SmokeCheck::Backends {
                name: "the backend's pool pre-opened: backend_pool_max backends",
                expect: pool,
                detail: format!(", expected {pool}"),
            },
        ])
    }

    fn summary(&self, stack: &StackSettings) -> Option<String> {
        let s = stack.storefront.as_ref()?;
        let sockets = match (s.keep_alive, s.max_sockets) {
            (false, 0) => "keep-alive off, unbounded sockets".to_string(),
            (true, 0) => "keep-alive, unbounded sockets".to_string(),
            (k, n) => format!(
                "keep-alive {}, maxSockets {n}",
                if k { "on" } else { "off" }
            ),
        };
        let failures = if s.cache_failures {
            format!("failures cached {} ms", s.failure_ttl_ms)
        } else {
            "failures thrown".to_string()
        };
        Some(format!(
            "cache TTL {} ms, single-flight {}, {failures}, {sockets}, sync log {}, backend timeout {} ms{}, backend {} µs CPU per call",
            s.cache_ttl_ms,
            if s.single_flight { "on" } else { "off" },
            if s.sync_log { "on" } else { "off" },
            s.backend_timeout_ms,
            match s.max_inflight {
                0 => String::new(),
                n => format!(", shed past {n} in flight"),
            },
            s.backend_burn_us
        ))
    }

    fn defaults(&self) -> LabDefaults {
        LabDefaults {
            stack: StackSettings {
                storefront: Some(StorefrontSettings::default()),
                ..Default::default()
            },
            endpoint: "/home",
            script: Script::Stepped,
        }
    }

    fn quantity(&self, stack: &StackSettings, name: &str) -> Result<f64, String> {
        let s = section(stack.storefront.as_ref(), Lab::Storefront)?;
        let b = |v: bool| f64::from(u8::from(v));
        Ok(match name {
            "cache_ttl_ms" => s.cache_ttl_ms.into(),
            "single_flight" => b(s.single_flight),
            "cache_failures" => b(s.cache_failures),
            "max_sockets" => s.max_sockets.into(),
            "keep_alive" => b(s.keep_alive),
            "backend_timeout_ms" => s.backend_timeout_ms.into(),
            "max_inflight" => s.max_inflight.into(),
            _ => return Err(format!("`{name}` is not a quantity of the storefront lab")),
        })
    }

    fn slots(&self, stack: &StackSettings) -> Result<f64, String> {
        let s = section(stack.storefront.as_ref(), Lab::Storefront)?;
        Ok(s.backend_pool_max.into())
    }

    fn connections_per_node(&self, stack: &StackSettings) -> Option<u32> {
        stack.storefront.as_ref().map(|s| s.backend_pool_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::overrides;
    use crate::lab::tests::ctx;

    fn env_of(e: &crate::experiment::Experiment, role: Role) -> Vec<(String, String)> {
        let c = Storefront.containers(&e.stack, &ctx()).unwrap();
        c.into_iter().find(|c| c.role == role).unwrap().env
    }

    /// Each of the seed's bugs is a setting that reaches the front's (or the backend's)
    /// environment through `--set`, and the summary says which are on.
    #[test]
    fn each_bug_is_a_setting_that_reaches_its_container() {
        let exp = crate::stack::defaults::lab_experiment(Lab::Storefront);
        let has = |env: &[(String, String)], k: &str, v: &str| {
            env.contains(&(k.to_string(), v.to_string()))
        };
        let front = env_of(&exp, FRONT);
        for (k, v) in [
            ("SINGLE_FLIGHT", "0"),
            ("CACHE_FAILURES", "0"),
            ("KEEP_ALIVE", "1"),
            ("MAX_SOCKETS", "64"),
            ("SYNC_LOG", "0"),
            ("BACKEND_TIMEOUT_MS", "15000"),
            ("API_HOST", "api"),
        ] {
            assert!(has(&front, k, v), "{k}={v} in {front:?}");
        }
        let sets: Vec<String> = [
            "single_flight=true",
            "cache_failures=true",
            "keep_alive=false",
            "max_sockets=0",
            "sync_log=true",
            "backend_timeout_ms=2000",
            "cache_ttl_ms=60000",
            "backend_burn_us=5000",
        ]
        .iter()
        .map(|s| format!("stack.storefront.{s}"))
        .collect();
        let (seeded, _) = overrides::apply(&exp, &sets).unwrap();
        let front = env_of(&seeded, FRONT);
        for (k, v) in [
            ("SINGLE_FLIGHT", "1"),
            ("CACHE_FAILURES", "1"),
            ("KEEP_ALIVE", "0"),
            ("MAX_SOCKETS", "0"),
            ("SYNC_LOG", "1"),
            ("BACKEND_TIMEOUT_MS", "2000"),
            ("CACHE_TTL_MS", "60000"),
        ] {
            assert!(has(&front, k, v), "{k}={v} in {front:?}");
        }
        assert!(has(&env_of(&seeded, API), "BURN_US", "5000"));
        let summary = Storefront.summary(&seeded.stack).unwrap();
        assert!(
            summary.contains("single-flight on")
                && summary.contains("failures cached 60000 ms")
                && summary.contains("keep-alive off, unbounded sockets")
                && summary.contains("sync log on"),
            "{summary}"
        );
        // the front starts after the backend, the backend after PostgreSQL
        let c = Storefront.containers(&exp.stack, &ctx()).unwrap();
        let roles: Vec<_> = c.iter().map(|c| (c.role, c.after_ready)).collect();
        assert_eq!(
            roles,
            [(Role::PG, None), (API, Some(Role::PG)), (FRONT, Some(API))]
        );
        assert_eq!(FRONT_SOURCE.read.http_path(), Some("/status"));
    }

    #[test]
    fn bounds_and_checks_name_the_field() {
        let exp = crate::stack::defaults::lab_experiment(Lab::Storefront);
        let err = overrides::apply(&exp, &["stack.storefront.backend_timeout_ms=700000".into()])
            .unwrap_err();
        let err = crate::experiment::diag::render(&err);
        assert!(err.contains("stack.storefront.backend_timeout_ms"), "{err}");
        let mut s = StorefrontSettings {
            failure_ttl_ms: 5000,
            ..Default::default()
        };
        let w = s.check(&StackSettings::default());
        assert_eq!(w.len(), 1);
        assert!(w[0].warning && w[0].field == "stack.storefront.failure_ttl_ms");
        s.cache_failures = true;
        s.failure_ttl_ms = 0;
        s.backend_timeout_ms = 0;
        let e: Vec<_> = s
            .check(&StackSettings::default())
            .into_iter()
            .map(|i| i.field)
            .collect();
        assert_eq!(
            e,
            [
                "stack.storefront.backend_timeout_ms",
                "stack.storefront.failure_ttl_ms"
            ]
        );
    }
}
