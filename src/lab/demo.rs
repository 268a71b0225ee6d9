//! The demo lab: the tiny capacity server of seed 002 (`WORKERS` x `SERVICE_MS`), no database,
//! for seconds-long runs; it runs from the node-app image and writes a metrics line every 2 s.
use super::metrics::DEMO_METRICS_FIELDS;
use super::settings::{Bound, Issue, Section};
use super::*;
use serde::{Deserialize, Serialize};

/// The seed-002 capacity server: `workers` concurrent slots, each request holds one for `service_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoSettings {
    #[serde(default = "default_demo_workers")]
    pub workers: u32,
    #[serde(default = "default_demo_service_ms")]
    pub service_ms: u32,
}

impl Section for DemoSettings {
    #[rustfmt::skip]
    const BOUNDS: &'static [Bound<Self>] = &[
        Bound { key: "workers", max: 1_000.0, unit: "workers", what: "the demo server's concurrent slots", get: |d| d.workers.into() },
        Bound { key: "service_ms", max: 60_000.0, unit: "ms", what: "the time a request holds a slot (a minute)", get: |d| d.service_ms.into() },
    ];

    fn check(&self, _stack: &StackSettings) -> Vec<Issue> {
        if self.workers == 0 || self.service_ms == 0 {
            return vec![Issue::error(
                "stack.demo",
                "workers and service_ms must be > 0",
            )];
        }
        Vec::new()
    }
}

fn default_demo_workers() -> u32 {
    16
}
fn default_demo_service_ms() -> u32 {
    40
}

pub(crate) struct Demo;

/// The capacity server (its column `demo`, its container `app`), run from the node-app image.
pub(crate) const DEMO: Role = Role::declare(&RoleDecl {
    name: "demo",
    log_name: "app",
    image: "node-app",
    slot: Slot::App,
    memory_mib: 256,
    process: "demo",
});

const INFO: LabInfo = LabInfo {
    endpoints: &["/work"],
    settings_keys: &["workers", "service_ms"],
    roles: &[DEMO],
    volume: None,
    sources: &[
        // the server's 2-second metrics lines, cut from its output (`lab::metrics`)
        SourceDecl {
            name: super::metrics::SOURCE,
            offered_by: DEMO,
            read: source::Read::OutputLines,
            every_ms: 2000,
        },
    ],
    assets: &[Asset {
        image: DEMO,
        dir: "labs/demo",
        prefix: "demo/",
    }],
    quantities: &[
        ("workers", "demo server workers"),
        ("service_ms", "demo server service time (ms)"),
    ],
    cpu_per_request_endpoints: &[],
    cpu_per_request_caveat: None,
};

impl LabDescriptor for Demo {
    fn info(&self) -> &'static LabInfo {
        &INFO
    }

    fn containers(
        &self,
        stack: &StackSettings,
        _ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String> {
        let d = own_section(stack.demo.as_ref(), Lab::Demo)?;
        let mut c = ContainerDecl::new(DEMO);
        c.publish = Some(Publish::Entry(APP_PORT));
        c.cmd = Some(vec!["node".into(), "/srv/demo/server.js".into()]);
        c.env = env(&[
            ("PORT", APP_PORT.to_string()),
            ("WORKERS", d.workers.to_string()),
            ("SERVICE_MS", d.service_ms.to_string()),
        ]);
        c.ready = vec![
            WaitFor::LogLine {
                prefix: METRICS_PREFIX,
            },
            WaitFor::Http {
                path: "/work",
                status: 200,
                body: "\"ok\":true",
            },
        ];
        Ok(vec![c])
    }

    fn smoke(&self, _stack: &StackSettings) -> Result<Vec<SmokeCheck>, String> {
        Ok(vec![
            SmokeCheck::Endpoint {
                path: "/work",
                keys: &["ok"],
                n: 20,
            },
            SmokeCheck::MetricsLine {
                fields: &DEMO_METRICS_FIELDS,
            },
        ])
    }

    fn summary(&self, stack: &StackSettings) -> Option<String> {
        let d = stack.demo.as_ref()?;
        Some(format!(
            "{} workers x {} ms (~{} rps)",
            d.workers,
            d.service_ms,
            d.workers * 1000 / d.service_ms.max(1)
        ))
    }

    fn defaults(&self) -> LabDefaults {
        LabDefaults {
            stack: StackSettings {
                demo: Some(DemoSettings {
                    workers: 16,
                    service_ms: 40,
                }),
                ..Default::default()
            },
            endpoint: "/work",
            script: Script::Stepped,
        }
    }

    fn quantity(&self, stack: &StackSettings, name: &str) -> Result<f64, String> {
        let d = section(stack.demo.as_ref(), Lab::Demo)?;
        Ok(match name {
            "workers" => d.workers as f64,
            "service_ms" => d.service_ms as f64,
            _ => return Err(format!("`{name}` is not a quantity of the demo lab")),
        })
    }

    fn slots(&self, stack: &StackSettings) -> Result<f64, String> {
        self.quantity(stack, "workers")
    }
}
