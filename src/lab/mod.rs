//! What a lab is: the registry of labs (`labs!` below: `Lab`, `StackSettings`' sections), and
//! one file per lab (`php.rs`, `node.rs`, `demo.rs`) with its `stack.<lab>:` settings and its
//! descriptor, after testcontainers' `Image`: its endpoints and settings keys, its
//! containers (role, image, env, files, volume, published port, memory; the CPU slot comes
//! from the role), readiness as data, smoke checks, warm-up, sampler sources, the logs to
//! collect, the defaults of `perflab up`, and the quantities it offers to claims. `stack`,
//! `images`, `sample`, `verify`, `cli` and `tools` read these instead of matching on the lab.
//! Pure data: no I/O here (the stack interprets it).
mod container;
mod demo;
mod fpm;
mod id;
pub mod metrics;
mod node;
mod pgbouncer;
mod php;
mod php_checks;
mod postgres;
pub mod role;
mod settings;
pub(crate) mod source;
mod storefront;
pub(crate) mod templates;
#[cfg(test)]
mod toy;

pub(crate) use container::{ContainerDecl, FileDecl, Publish, StartContext, VolumeDecl, WaitFor};
pub use fpm::{Listen, Pm};
pub use pgbouncer::{Auth, DbVia};
pub use postgres::PostgresSettings;
pub use role::{Role, RoleDecl, Slot};
use settings::Section;
pub(crate) use settings::{Issue, Limit};
pub(crate) use source::SourceDecl;

use serde::{Deserialize, Serialize};

/// The registry of labs, one row each after its doc: `Variant: module, SettingsType,
/// Descriptor;`, the module declared above. The module's name is the lab's name (`lab: php` in
/// YAML, `stack.php:`, `--lab php`) and its file (`src/lab/php.rs`) holds the descriptor and
/// the settings type. Everything that lists the labs derives from this table: `Lab` and
/// `Lab::ALL`, `descriptor`, the sections of `StackSettings` and `StackSettings::has`. Adding a
/// lab is its file, its `mod` line and one row here (a row may carry a `#[cfg(..)]`: the toy lab
/// of the unit tests, `#[cfg(test)]`, is one).
macro_rules! labs {
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $v:ident: $m:ident, $settings:ident, $desc:ident;
    )+) => {
        $( $(#[cfg($cfg)])? pub use $m::$settings; )+

        /// Which lab an experiment runs on (serialized as its module's name, which a test
        /// checks).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(rename_all = "lowercase")]
        pub enum Lab {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? $v, )+
        }

        impl Lab {
            /// Every lab, in the registry's order (the order of reports and listings).
            pub(crate) const ALL: [Lab; {
                let all: &[Lab] = &[$( $(#[cfg($cfg)])? Lab::$v, )+];
                all.len()
            }] = [$( $(#[cfg($cfg)])? Lab::$v, )+];

            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $( $(#[cfg($cfg)])? Lab::$v => stringify!($m), )+
                }
            }
        }

        /// The descriptor of `lab`.
        pub(crate) fn descriptor(lab: Lab) -> &'static dyn LabDescriptor {
            match lab {
                $( $(#[cfg($cfg)])? Lab::$v => &$m::$desc, )+
            }
        }

        /// Container-side settings: PostgreSQL's and one optional section per lab, of which
        /// only the experiment's own lab's is used.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct StackSettings {
            #[serde(default)]
            pub postgres: PostgresSettings,
            $(
                $(#[cfg($cfg)])?
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $m: Option<$settings>,
            )+
        }

        impl StackSettings {
            /// `lab`'s section is there (`stack.<lab>:`).
            pub(crate) fn has(&self, lab: Lab) -> bool {
                match lab {
                    $( $(#[cfg($cfg)])? Lab::$v => self.$m.is_some(), )+
                }
            }

            /// Every bounded number of `stack:` as its section's type declares it
            /// (`settings::Section::BOUNDS`): PostgreSQL's, then each lab's in the registry's
            /// order, with its value when the section is there.
            pub(crate) fn bounded(&self) -> Vec<(Limit, Option<f64>)> {
                let mut out: Vec<(Limit, Option<f64>)> =
                    settings::bounded("postgres", Some(&self.postgres)).collect();
                $(
                    $(#[cfg($cfg)])?
                    out.extend(settings::bounded(stringify!($m), self.$m.as_ref()));
                )+
                out
            }

            /// The checks of the sections that are there (`settings::Section::check`), in the
            /// same order.
            pub(crate) fn issues(&self) -> Vec<Issue> {
                let mut out = self.postgres.check(self);
                $(
                    $(#[cfg($cfg)])?
                    if let Some(s) = &self.$m {
                        out.extend(s.check(self));
                    }
                )+
                out
            }
        }
    };
}

labs! {
    /// nginx + php-fpm + Laravel + PostgreSQL (lab-spec §3).
    Php: php, PhpSettings, Php;
    /// Express + PostgreSQL (lab-spec §4).
    Node: node, NodeSettings, Node;
    /// The tiny capacity server of seed 002 (16 workers x 40 ms), for seconds-long runs.
    Demo: demo, DemoSettings, Demo;
    /// A storefront front over a backend API, each bug of seed 004 a setting (issue 44).
    Storefront: storefront, StorefrontSettings, Storefront;
    /// A one-container toy app (unit tests only: `src/lab/toy.rs`).
    #[cfg(test)]
    Toy: toy, ToySettings, Toy;
}

/// Which k6 script drives the load (lab-spec §3 `stepped.js`, §4 `breakpoint.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Script {
    /// Jump to each rate, hold; requests tagged `stage:rNNNN`.
    Stepped,
    /// Warm-up scenario, then ramp + hold per step; hold requests tagged `step:NN_rpsX|NN_vusX`.
    Breakpoint,
}

/// One smoke check, run in order against a started stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SmokeCheck {
    /// `GET path` `n` times: every answer 200 with a JSON object holding `keys`.
    Endpoint {
        path: &'static str,
        keys: &'static [&'static str],
        n: usize,
    },
    /// `GET path` answers 200 with a positive number (as a string) in `field`.
    Positive {
        name: &'static str,
        path: &'static str,
        field: &'static str,
    },
    /// `pg_stat_database.xact_commit` moved by `requests` since the smoke began.
    XactDelta { requests: i64 },
    /// `factor x workers` concurrent `GET path` while the php-fpm status page must show every
    /// worker busy and still answer; every request answers 200.
    StatusUnderBurst {
        path: &'static str,
        factor: usize,
        workers: usize,
    },
    /// The lab role holds `expect` PostgreSQL backends; the detail is
    /// `"<n> lab backends<detail>"`.
    Backends {
        name: &'static str,
        expect: i64,
        detail: String,
    },
    /// A new metrics line on the app's stdout with these fields.
    MetricsLine { fields: &'static [&'static str] },
}

/// The warm-up's requests: `requests` on the experiment's endpoint, `concurrency` in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WarmupLoad {
    pub requests: u32,
    pub concurrency: u32,
}

/// A file copied out of a container after a run, under the run's `logs/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CollectFile {
    pub role: Role,
    pub path: &'static str,
    /// Relative to `logs/`, e.g. `laravel.log`, `access/fpm.log`.
    pub dest: &'static str,
    /// A run fails when a required file cannot be read; others are skipped.
    pub required: bool,
}

/// Where a lab's sources go into an image's build context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asset {
    pub image: Role,
    /// Relative to the repository root, e.g. `labs/php/app`.
    pub dir: &'static str,
    /// Prefix inside the build context, e.g. `app/`.
    pub prefix: &'static str,
}

/// The stand-alone experiment of `perflab up <lab>` / `perflab smoke <lab>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LabDefaults {
    pub stack: StackSettings,
    pub endpoint: &'static str,
    pub script: Script,
}

/// A CPU-per-request figure of the article (ms), which `cpu-per-request` compares its own with:
/// `what` is a sampler column or `wall`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ArticleCpuFigure {
    pub endpoint: &'static str,
    pub what: &'static str,
    pub low_ms: f64,
    pub high_ms: f64,
    pub note: &'static str,
}

/// An `ArticleCpuFigure`'s `what` for the app box's CPU per successful response under load
/// (fpm + nginx, or the Node app): what a report's `ms_cpu_per_ok` reads.
pub(crate) const APP_BOX_FIGURE: &str = "app box";

/// A config quantity a lab offers to claims: (name, help).
pub(crate) type QuantityDecl = (&'static str, &'static str);

/// The fixed facts of a lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabInfo {
    /// The HTTP endpoints its app serves (an experiment's `load.endpoint` must be one).
    pub endpoints: &'static [&'static str],
    /// The keys of its `stack.<lab>:` section (the fields of its settings struct; a test keeps
    /// them in sync).
    pub settings_keys: &'static [&'static str],
    /// The roles of its stack, in start order: `Role::PG` and the lab's own, declared in its
    /// file (`Role::declare`).
    pub roles: &'static [Role],
    /// A volume its containers share.
    pub volume: Option<VolumeDecl>,
    /// What its containers offer the samplers (`source`: php-fpm's status page, nginx's
    /// `stub_status`, PostgreSQL's activity, each read by the one generic sampler; the node
    /// app's metrics lines, cut from its output at collection).
    pub sources: &'static [SourceDecl],
    /// Its sources in the images' build contexts.
    pub assets: &'static [Asset],
    /// The config quantities of its stack section (`LabDescriptor::quantity`).
    pub quantities: &'static [QuantityDecl],
    /// The endpoints `cpu-per-request` measures (none: it does not measure this lab).
    pub cpu_per_request_endpoints: &'static [&'static str],
    /// A caveat `cpu-per-request` records for this lab.
    pub cpu_per_request_caveat: Option<&'static str>,
}

impl LabInfo {
    /// The lab has a PostgreSQL.
    pub(crate) fn uses_pg(&self) -> bool {
        self.roles.contains(&Role::PG)
    }
    /// Its source cut from a container's output (`Read::OutputLines`), if it has one.
    pub(crate) fn output_source(&self) -> Option<&'static SourceDecl> {
        self.sources
            .iter()
            .find(|s| s.read == source::Read::OutputLines)
    }
    /// The version matrix's name of the process behind sampler column `column`: its role's
    /// declared `process` (the node lab's `app` is `node`).
    pub(crate) fn process_name<'a>(&self, column: &'a str) -> &'a str {
        let role = self.roles.iter().find(|r| r.column() == column);
        role.map_or(column, |r| r.process())
    }
}

/// Everything perflab knows about one lab: its fixed facts (`info`) and what depends on an
/// experiment's settings.
pub(crate) trait LabDescriptor: Sync {
    fn info(&self) -> &'static LabInfo;
    /// The lab's containers for `stack`, in start order. Errors name a missing stack section.
    fn containers(
        &self,
        stack: &StackSettings,
        ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String>;
    /// The files to copy out after a run (besides every container's output).
    fn collect(&self, _stack: &StackSettings) -> Vec<CollectFile> {
        Vec::new()
    }
    /// The smoke checks of `perflab smoke`, in order.
    fn smoke(&self, stack: &StackSettings) -> Result<Vec<SmokeCheck>, String>;
    fn warmup(&self, _stack: &StackSettings) -> WarmupLoad {
        WarmupLoad {
            requests: 0,
            concurrency: 1,
        }
    }
    /// The CPU work injected per request (`stack.<lab>.burn_us`), for a lab that has the knob.
    /// Whether a run of these settings reads the declared source `name` (all of them, unless a
    /// lab keeps a costly one for the experiments that ask for it).
    fn samples(&self, _name: &str, _stack: &StackSettings) -> bool {
        true
    }
    fn burn_us(&self, _stack: &StackSettings) -> Option<u32> {
        None
    }
    /// The waiting injected per answer without CPU (`stack.<lab>.wait_us`), for a lab that has
    /// the knob.
    fn wait_us(&self, _stack: &StackSettings) -> Option<u32> {
        None
    }
    fn defaults(&self) -> LabDefaults;
    /// Its stack section in one line (`perflab show`), when `stack` has one.
    fn summary(&self, stack: &StackSettings) -> Option<String>;
    /// The value of one of `info().quantities` (`Err` when the stack has no section of this lab).
    fn quantity(&self, stack: &StackSettings, name: &str) -> Result<f64, String>;
    /// The app's concurrency slots: max_children, pool_max x processes, demo workers.
    fn slots(&self, stack: &StackSettings) -> Result<f64, String>;
    /// PostgreSQL connections one app node holds (capacity planning), when it holds any.
    fn connections_per_node(&self, _stack: &StackSettings) -> Option<u32> {
        None
    }
    /// The article's CPU per request on this lab (none: nothing to compare with).
    fn article_cpu_figures(&self) -> &'static [ArticleCpuFigure] {
        &[]
    }
    /// The components worth a version column for this lab's runs, in order: (manifest key,
    /// column); k6's follows them.
    fn version_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[("pg.postgres", "postgres")]
    }
}

/// Every sampler source the labs declare (`source`), each name once, in `Lab::ALL`'s order:
/// the files a run directory may hold, the counts a manifest may carry.
pub(crate) fn sources() -> Vec<&'static SourceDecl> {
    let mut v: Vec<&'static SourceDecl> = Vec::new();
    for lab in Lab::ALL {
        for s in descriptor(lab).info().sources {
            if !v.iter().any(|x| x.name == s.name) {
                v.push(s);
            }
        }
    }
    v
}

/// Every role: the infrastructure's base image and PostgreSQL, each lab's declared roles in
/// `Lab::ALL`'s order (each once), k6 last. The order of maps keyed by role (a manifest's
/// images, a stack's containers) and of the report's CPU columns within a slot; what a
/// recorded role name (`cgroup.jsonl`, a manifest's keys) is read back against.
pub(crate) fn roles() -> &'static [Role] {
    static ROLES: std::sync::OnceLock<Vec<Role>> = std::sync::OnceLock::new();
    ROLES.get_or_init(|| {
        let mut v = vec![Role::BASE, Role::PG];
        let declared = Lab::ALL.iter().flat_map(|l| descriptor(*l).info().roles);
        for r in declared.chain(&[Role::K6]) {
            if !v.contains(r) {
                v.push(*r);
            }
        }
        v
    })
}

/// Where the image keeps PostgreSQL's cluster (`images/pg/init.sh`).
const PGDATA: &str = "/var/lib/postgresql/lab";

/// The PostgreSQL container of the php and node labs; `code_volumes` is the lab's own setting,
/// `prewarm_table` its big table (`postgres.prewarm`).
fn postgres(
    stack: &StackSettings,
    ctx: &StartContext,
    code_volumes: bool,
    prewarm_table: &'static str,
) -> ContainerDecl {
    let mut c = ContainerDecl::new(Role::PG);
    c.prewarm_table = Some(prewarm_table);
    // The cluster from a volume filled from the image, like the app's code: through the
    // storage driver every file PostgreSQL opens or writes (each new backend's relation files,
    // the WAL) is a round trip to a FUSE daemon outside the database's cgroup. The lab's own
    // `code_volumes` switch turns both off, to measure the old layout.
    if code_volumes {
        c.code_volumes = vec![PGDATA];
    }
    c.env = vec![
        // The app role's SCRAM verifier, not its password: PostgreSQL stores it as given, and
        // PgBouncer's userlist.txt holds the same one (its SCRAM pass-through needs them equal).
        (
            "PG_PASSWORD".into(),
            pgbouncer::scram_verifier(&ctx.password),
        ),
        ("PG_MONITOR_PASSWORD".into(), ctx.monitor_password.clone()),
        (
            "PG_MAX_CONNECTIONS".into(),
            stack.postgres.max_connections.to_string(),
        ),
    ];
    c.publish = Some(Publish::Database(5432));
    c.ready = vec![WaitFor::Sql];
    // Another host method than the image's scram-sha-256: its own pg_hba.conf.
    if !stack.postgres.auth.is_scram() {
        let hba = "/etc/perflab/pg_hba.conf";
        c.files = vec![FileDecl {
            path: hba.into(),
            contents: pgbouncer::pg_hba(stack.postgres.auth).into_bytes(),
            mode: 0o644,
        }];
        c.cmd = Some(vec!["-c".into(), format!("hba_file={hba}")]);
    }
    c
}

/// The section of the lab's stack settings, or the error naming it.
fn section<T>(s: Option<&T>, lab: Lab) -> Result<&T, String> {
    s.ok_or_else(|| format!("the run has no {lab} stack"))
}

/// The settings section of `exp`'s own lab, or why it is missing.
fn own_section<T>(s: Option<&T>, lab: Lab) -> Result<&T, String> {
    s.ok_or_else(|| format!("experiment has lab: {lab} but no stack.{lab} section"))
}

/// The summary's note of an injected CPU burn (`stack.<lab>.burn_us`), empty when 0.
fn burn_note(us: u32) -> String {
    if us == 0 {
        String::new()
    } else {
        format!(", INJECTED burn {us} µs CPU per request")
    }
}

/// The summary's note of an injected wait (`stack.<lab>.wait_us`), empty when 0.
fn wait_note(us: u32) -> String {
    if us == 0 {
        String::new()
    } else {
        format!(", INJECTED wait {us} µs per answer (no CPU)")
    }
}

fn env(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// In-network port of the node/demo app.
pub(crate) const APP_PORT: u16 = 3000;

/// The 2-second metrics line of the node and demo apps starts so.
pub(crate) const METRICS_PREFIX: &str = "{\"t\":";

#[cfg(test)]
mod tests {
    use super::*;

    pub(in crate::lab) fn ctx() -> StartContext {
        StartContext {
            password: "pw".into(),
            monitor_password: "mpw".into(),
            app_cpus: 2,
            nofile: 4096,
            sampler_addr: "172.30.0.1".into(),
        }
    }

    #[test]
    fn every_lab_declares_its_roles_in_start_order() {
        for lab in Lab::ALL {
            let d = descriptor(lab);
            let exp = crate::stack::defaults::lab_experiment(lab);
            let c = d.containers(&exp.stack, &ctx()).unwrap();
            // in the declared order; a role may be left out by a setting (PgBouncer)
            let mut declared = d.info().roles.iter();
            let in_order = c.iter().all(|c| declared.any(|r| *r == c.role));
            assert!(in_order, "{lab}: containers in info().roles' order");
            let entries = c
                .iter()
                .filter(|c| matches!(c.publish, Some(Publish::Entry(_))))
                .count();
            assert_eq!(entries, 1, "{lab}: one entry point");
            assert!(c.iter().all(|c| !c.ready.is_empty()), "{lab}");
            assert!(c.iter().all(|c| c.role.image() != Role::BASE));
            assert!(!d.smoke(&exp.stack).unwrap().is_empty());
            let mut other = exp.clone();
            other.stack = Default::default();
            let err = d.containers(&other.stack, &ctx()).unwrap_err();
            assert_eq!(
                err,
                format!("experiment has lab: {lab} but no stack.{lab} section")
            );
        }
        let node = crate::stack::defaults::lab_experiment(Lab::Node);
        let c = descriptor(Lab::Node)
            .containers(&node.stack, &ctx())
            .unwrap();
        assert_eq!(c[1].after_ready, Some(Role::PG), "the pool opens at boot");
        assert_eq!(
            c[0].prewarm_table,
            Some("orders"),
            "postgres.prewarm's table"
        );
        let php = crate::stack::defaults::lab_experiment(Lab::Php);
        let c = descriptor(Lab::Php).containers(&php.stack, &ctx()).unwrap();
        assert!(c[1].env.contains(&("DB_PASSWORD".into(), "pw".into())));
        assert_eq!(c[0].prewarm_table, Some("products"));
        assert!(
            c[0].env
                .contains(&("PG_MONITOR_PASSWORD".into(), "mpw".into()))
        );
        assert!(c.iter().skip(1).all(|c| c.shared_volume));
    }

    /// `stack.node.wait_us` reaches the app as `WAIT_US` (0 by default), and the summary marks
    /// it injected.
    #[test]
    fn the_node_wait_reaches_the_app() {
        let mut node = crate::stack::defaults::lab_experiment(Lab::Node);
        let d = descriptor(Lab::Node);
        let env = |e: &crate::experiment::Experiment| {
            d.containers(&e.stack, &ctx()).unwrap()[1].env.clone()
        };
        assert!(env(&node).contains(&("WAIT_US".into(), "0".into())));
        node.stack.node.as_mut().unwrap().wait_us = 3000;
        assert!(env(&node).contains(&("WAIT_US".into(), "3000".into())));
        let summary = d.summary(&node.stack).unwrap();
        assert!(
            summary.ends_with(", INJECTED wait 3000 µs per answer (no CPU)"),
            "{summary}"
        );
    }

    #[test]
    fn code_volumes_can_be_turned_off_to_measure_the_storage_drivers_cost() {
        for (lab, key, paths) in [
            (Lab::Php, "stack.php.code_volumes", 4),
            (Lab::Node, "stack.node.code_volumes", 2),
        ] {
            let exp = crate::stack::defaults::lab_experiment(lab);
            let vols = |e: &crate::experiment::Experiment| -> usize {
                let c = descriptor(lab).containers(&e.stack, &ctx()).unwrap();
                c.iter().map(|c| c.code_volumes.len()).sum()
            };
            assert_eq!(vols(&exp), paths, "{lab}: volumes by default");
            let (off, _) =
                crate::experiment::overrides::apply(&exp, &[format!("{key}=false")]).unwrap();
            assert_eq!(
                vols(&off),
                0,
                "{lab}: {key}=false serves the image's own files"
            );
            assert_ne!(off, exp, "a side of `compare` can declare it");
        }
    }

    #[test]
    fn quantities_are_read_from_their_own_section() {
        for lab in Lab::ALL {
            let d = descriptor(lab);
            let exp = crate::stack::defaults::lab_experiment(lab);
            for (name, _) in d.info().quantities {
                assert!(d.quantity(&exp.stack, name).is_ok(), "{lab} {name}");
                let err = d.quantity(&Default::default(), name).unwrap_err();
                assert_eq!(err, format!("the run has no {lab} stack"));
            }
            assert!(d.slots(&exp.stack).unwrap() > 0.0);
            let info = d.info();
            assert!(lab.endpoints().contains(&d.defaults().endpoint), "{lab}");
            assert_eq!(info.uses_pg(), lab.uses_postgres(), "{lab}");
            for e in info.cpu_per_request_endpoints {
                assert!(lab.endpoints().contains(e), "{lab} {e}");
            }
            assert!(d.summary(&exp.stack).is_some());
            assert!(d.summary(&Default::default()).is_none());
        }
    }
}
