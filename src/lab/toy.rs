//! The toy lab of the unit tests (`#[cfg(test)]` in the registry): a one-container app that
//! answers `GET /hello` after `delay_ms`, run from the node-app image with its script copied in.
//! It is the proof that a lab is this file, one registry row, its assets
//! (`tests/fixtures/toy-lab/server.js`) and its YAML (`tests/fixtures/toy-lab/toy-hello.yaml`):
//! the tests below take it through the catalog, `--set`, the plan, the stack's declarations
//! and the claims' quantities without any other file naming it.
use super::settings::{Bound, Issue, Section};
use super::*;
use serde::{Deserialize, Serialize};

/// `stack.toy:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToySettings {
    /// How long the app waits before it answers (ms).
    pub delay_ms: u32,
}

impl Section for ToySettings {
    const BOUNDS: &'static [Bound<Self>] = &[Bound {
        key: "delay_ms",
        max: 60_000.0,
        unit: "ms",
        what: "the toy app's wait before it answers (a minute)",
        get: |t| t.delay_ms.into(),
    }];

    fn check(&self, _stack: &StackSettings) -> Vec<Issue> {
        Vec::new()
    }
}

pub(crate) struct Toy;

/// The toy's one container: a role no enum lists, declared here with its own name, container
/// name, slot and memory (it runs the node-app image).
pub(crate) const TOY: Role = Role::declare(&RoleDecl {
    name: "toy",
    log_name: "toy-app",
    image: "node-app",
    slot: Slot::App,
    memory_mib: 128,
    process: "toy",
});

const INFO: LabInfo = LabInfo {
    endpoints: &["/hello"],
    settings_keys: &["delay_ms"],
    roles: &[TOY],
    volume: None,
    sources: &[],
    assets: &[],
    quantities: &[],
    cpu_per_request_endpoints: &[],
    cpu_per_request_caveat: None,
};

const SERVER: &str = include_str!("../../tests/fixtures/toy-lab/server.js");

impl LabDescriptor for Toy {
    fn info(&self) -> &'static LabInfo {
        &INFO
    }

    fn containers(
        &self,
        stack: &StackSettings,
        _ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String> {
        let t = own_section(stack.toy.as_ref(), Lab::Toy)?;
        let mut c = ContainerDecl::new(TOY);
        c.publish = Some(Publish::Entry(APP_PORT));
        c.files = vec![FileDecl {
            path: "/srv/toy/server.js".into(),
            contents: SERVER.as_bytes().to_vec(),
            mode: 0o644,
        }];
        c.cmd = Some(vec!["node".into(), "/srv/toy/server.js".into()]);
        c.env = env(&[
            ("PORT", APP_PORT.to_string()),
            ("DELAY_MS", t.delay_ms.to_string()),
        ]);
        c.ready = vec![WaitFor::LogLine {
            prefix: "toy ready",
        }];
        Ok(vec![c])
    }

    fn smoke(&self, _stack: &StackSettings) -> Result<Vec<SmokeCheck>, String> {
        Ok(vec![SmokeCheck::Endpoint {
            path: "/hello",
            keys: &["ok"],
            n: 5,
        }])
    }

    fn defaults(&self) -> LabDefaults {
        LabDefaults {
            stack: StackSettings {
                toy: Some(ToySettings { delay_ms: 5 }),
                ..Default::default()
            },
            endpoint: "/hello",
            script: Script::Stepped,
        }
    }

    fn summary(&self, stack: &StackSettings) -> Option<String> {
        let t = stack.toy.as_ref()?;
        Some(format!("answers after {} ms", t.delay_ms))
    }

    fn quantity(&self, _stack: &StackSettings, name: &str) -> Result<f64, String> {
        Err(format!("`{name}` is not a quantity of the toy lab"))
    }

    fn slots(&self, stack: &StackSettings) -> Result<f64, String> {
        section(stack.toy.as_ref(), Lab::Toy)?;
        Ok(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{CatalogEntry, Experiment, catalog, diag, overrides};
    use std::path::Path;

    const YAML: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/toy-lab/toy-hello.yaml"
    );

    /// The toy's experiment file through the catalog's parser and validation.
    fn toy_hello() -> Experiment {
        let src = std::fs::read_to_string(YAML).unwrap();
        let (entry, diags) = catalog::parse_entry(
            Path::new(YAML),
            &src,
            &crate::verify::quantities::Quantities,
        )
        .unwrap_or_else(|d| panic!("{}", diag::render(&d)));
        assert!(
            !diags.iter().any(|d| d.is_error()),
            "{}",
            diag::render(&diags)
        );
        match entry {
            CatalogEntry::Experiment(e) => e,
            CatalogEntry::Group(g) => panic!("{} is a group", g.id),
        }
    }

    #[test]
    fn the_toy_lab_is_named_listed_and_parsed_from_its_row() {
        let e = toy_hello();
        assert_eq!(e.lab, Lab::Toy);
        assert_eq!(Lab::from_name("toy"), Some(Lab::Toy));
        assert_eq!(Lab::ALL.last(), Some(&Lab::Toy), "the registry's order");
        for lab in Lab::ALL {
            let yaml = serde_yaml::to_string(&lab).unwrap();
            assert_eq!(yaml.trim(), lab.as_str(), "YAML name = module name");
        }
        let found: Vec<Lab> = e.stack.sections().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(found, [Lab::Toy]);
        assert_eq!(e.stack.slots(), Some(1));
        assert!(e.stack.injected().is_empty(), "no burn_us knob");
        assert_eq!(
            descriptor(Lab::Toy).summary(&e.stack).as_deref(),
            Some("answers after 5 ms")
        );
    }

    #[test]
    fn the_toy_lab_is_validated_set_and_planned_like_the_others() {
        let e = toy_hello();
        // `--set` knows its section and its short keys, and no other lab's
        let (set, _) = overrides::apply(&e, &["delay_ms=9".into()]).unwrap();
        assert_eq!(set.stack.toy.as_ref().unwrap().delay_ms, 9);
        assert_eq!(
            crate::experiment::keys::resolve_key(Lab::Toy, "delay_ms").unwrap(),
            "stack.toy.delay_ms"
        );
        assert!(crate::experiment::keys::resolve_key(Lab::Toy, "max_children").is_err());
        // its endpoint is checked against the descriptor's
        let src = std::fs::read_to_string(YAML).unwrap();
        let bad = src.replace("endpoint: /hello", "endpoint: /api/db");
        let diags = match catalog::parse_entry(
            Path::new(YAML),
            &bad,
            &crate::verify::quantities::Quantities,
        ) {
            Ok((_, d)) | Err(d) => d,
        };
        assert!(
            diags
                .iter()
                .any(|d| d.is_error() && d.message.contains("not an endpoint of the toy lab")),
            "{}",
            diag::render(&diags)
        );
        // and another lab's section in a toy experiment is refused
        let other = src.replace("stack:\n", "stack:\n  demo:\n    workers: 4\n");
        let diags = match catalog::parse_entry(
            Path::new(YAML),
            &other,
            &crate::verify::quantities::Quantities,
        ) {
            Ok((_, d)) | Err(d) => d,
        };
        assert!(
            diags.iter().any(|d| d.is_error()),
            "stack.demo in a toy run"
        );
        let plan = crate::plan::build(&e, crate::plan::PlanOptions { quick: true });
        assert_eq!(plan.lab, Lab::Toy);
        assert_eq!(plan.steps.len(), 2);
    }

    #[test]
    fn the_toy_lab_declares_its_container_with_its_asset() {
        let e = toy_hello();
        let ctx = StartContext {
            password: "pw".into(),
            monitor_password: "mpw".into(),
            app_cpus: 1,
            nofile: 1024,
            sampler_addr: "172.30.0.1".into(),
        };
        let c = descriptor(Lab::Toy).containers(&e.stack, &ctx).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].role.slot(), Slot::App);
        assert_eq!(c[0].files[0].contents, SERVER.as_bytes());
        assert!(c[0].env.contains(&("DELAY_MS".into(), "5".into())));
        assert!(!Lab::Toy.uses_postgres());
    }

    /// The toy's role is declared in this file only (`TOY`), as PgBouncer beside PostgreSQL
    /// would be: its name, container name, slot and memory reach the stack's container, its
    /// labels, the cgroup lines, the report's CPU columns and the claims' names.
    #[test]
    fn the_toy_role_flows_from_its_declaration_alone() {
        use crate::analyze::samples::{Pinning, Samples, SaturationRules, Span, window};
        // named, read back by name, listed once among every lab's roles
        assert_eq!(Role::named("toy"), Some(TOY));
        let json = serde_json::to_string(&TOY).unwrap();
        assert_eq!(serde_json::from_str::<Role>(&json).unwrap(), TOY);
        assert_eq!(crate::lab::roles().iter().filter(|r| **r == TOY).count(), 1);
        // the stack's container: name, alias, label, memory, cpuset, image
        let e = toy_hello();
        let c = &descriptor(Lab::Toy).containers(&e.stack, &ctx()).unwrap()[0];
        let pinning = crate::stack::Pinning {
            loadgen: "0".into(),
            db: "1".into(),
            app: "2-3".into(),
        };
        let opts = crate::stack::StartOptions::default();
        let stack = crate::stack::LabStack::new("r1", Lab::Toy, &pinning, &opts);
        let images = crate::images::ImageSet {
            suite: crate::images::Suite::Trixie,
            images: Role::images().into_iter().map(|r| (r, image(r))).collect(),
        };
        let spec = stack.spec(c, &images, &opts);
        assert_eq!(spec.name, "perflab-r1-toy-app");
        assert_eq!(spec.aliases, ["toy-app"]);
        assert_eq!(spec.labels[crate::docker::LABEL_ROLE], "toy-app");
        assert_eq!(spec.memory_bytes, Some(128 * 1024 * 1024));
        assert_eq!(spec.cpuset.as_deref(), Some("2-3"), "the app slot");
        assert_eq!(spec.image, "perflab/node-app:test");
        // a cgroup line of its container, read back: its CPU column, in the app box
        let line = r#"{"t":0,"role":"toy","container":"perflab-r1-toy-app","cpu_cores":0.5,"mem_bytes":0,"throttled_ms":0.0}"#;
        let mut s = Samples::default();
        for t in 0..10 {
            let mut cg: crate::analyze::samples::CgroupSample = serde_json::from_str(line).unwrap();
            cg.t = t * 1000;
            s.cgroup.push(cg);
        }
        let pins = Pinning::default();
        let w = window(
            &s,
            Span::step(0, 10_000),
            Some(2.0),
            &pins,
            &SaturationRules::default(),
        );
        assert!((w.cpu_pct["toy"] - 50.0).abs() < 1e-9, "{:?}", w.cpu_pct);
        assert_eq!(w.app_cores(), Some(0.5));
        let cols = ["k6", "toy", "pg"].map(String::from);
        assert_eq!(
            crate::report::content::order_roles(&cols),
            ["toy", "pg", "k6"]
        );
        // the claims' name
        assert!(crate::verify::quantities::lookup("cpu.toy").is_some());
        use crate::claim::quantities::Names;
        let names = crate::verify::quantities::Quantities.names();
        assert!(names.contains(&"cpu.toy".to_string()));
    }

    fn ctx() -> StartContext {
        StartContext {
            password: "pw".into(),
            monitor_password: "mpw".into(),
            app_cpus: 2,
            nofile: 1024,
            sampler_addr: "172.30.0.1".into(),
        }
    }

    fn image(role: Role) -> crate::images::RoleImage {
        crate::images::RoleImage {
            role,
            tag: format!("perflab/{}:test", role.image_name()),
            id: "sha256:0".into(),
            size_bytes: 0,
            versions: Default::default(),
        }
    }
}
