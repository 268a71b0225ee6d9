//! CLI commands for the lab area: `build`, `up`, `down`, `cleanup`, `smoke`.
use crate::docker::{self, Docker};
use crate::error::InvalidInput;
use crate::experiment::{Experiment, Lab};
use crate::images::{self, BuildProgress, ImageSet, Suite};
use crate::stack::{self, LabStack, Pinning, StartOptions, defaults};
use anyhow::{Context, Result};
use clap::Args;
use std::io::IsTerminal;
use std::process::ExitCode;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn parse_lab(s: &str) -> std::result::Result<Lab, InvalidInput> {
    match s {
        "php" => Ok(Lab::Php),
        "node" => Ok(Lab::Node),
        "demo" => Ok(Lab::Demo),
        _ => Err(InvalidInput(format!(
            "unknown lab `{s}`: use php, node or demo"
        ))),
    }
}

/// Progress printer for image builds: one line per step on a terminal, plain lines otherwise.
pub fn build_progress(quiet: bool) -> impl FnMut(BuildProgress) + Send {
    let tty = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    move |p| {
        if quiet {
            return;
        }
        match p {
            BuildProgress::UpToDate { .. } => {}
            BuildProgress::Building { role, tag, log } => {
                crate::say!(
                    "building {:<9} {tag} (log: {})",
                    role.as_str(),
                    log.display()
                )
            }
            BuildProgress::Step { role, step } => {
                let step: String = step.chars().take(100).collect();
                if tty {
                    eprint!("\r\x1b[2K  {:<9} {step}", role.as_str());
                } else {
                    crate::say!("  {:<9} {step}", role.as_str());
                }
            }
            BuildProgress::Built { role, seconds, .. } => {
                if tty {
                    eprint!("\r\x1b[2K");
                }
                crate::say!("built    {:<9} in {seconds:.1} s", role.as_str())
            }
        }
    }
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Debian suite: trixie (default), forky, bookworm.
    #[arg(long, default_value = "trixie")]
    pub suite: String,
    /// Print the image set (tags, ids, sizes, versions) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[arg(from_global)]
    pub quiet: bool,
}

pub fn build(args: BuildArgs) -> Result<ExitCode> {
    let suite: Suite = args.suite.parse()?;
    runtime()?.block_on(async {
        let docker = Docker::connect().await?;
        let t0 = std::time::Instant::now();
        let mut progress = build_progress(args.quiet);
        let set = images::ensure_built(&docker, suite, &mut progress).await?;
        if args.json {
            crate::out!("{}", serde_json::to_string_pretty(&set)?);
        } else {
            print_images(&set);
            if !args.quiet {
                crate::say!(
                    "images for {suite} ready in {:.1} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn print_images(set: &ImageSet) {
    crate::out!("{:<9} {:<40} {:>9}  versions", "role", "tag", "size");
    for img in set.images.values() {
        let v: Vec<String> = img
            .versions
            .iter()
            .filter(|(k, _)| !k.starts_with("dpkg:") && *k != "source")
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        crate::out!(
            "{:<9} {:<40} {:>6} MB  {}",
            img.role.as_str(),
            img.tag,
            img.size_bytes / 1_000_000,
            v.join(", ")
        );
    }
}

/// Options shared by `up` and `smoke`.
#[derive(Debug, Args)]
pub struct StackArgs {
    /// A lab (php, node, demo: the article's default settings) or a catalog experiment id
    /// (exp3-n5, 1c, ...: that experiment's stack settings).
    #[arg(value_name = "LAB|EXPERIMENT")]
    pub lab: String,
    /// Debian suite of the images: trixie (default), forky, bookworm.
    #[arg(long, default_value = "trixie")]
    pub suite: String,
    /// Take the stack settings from this experiment file (its lab must match LAB).
    #[arg(long, value_name = "FILE")]
    pub experiment: Option<std::path::PathBuf>,
    /// Override a setting (repeatable), as `perflab run` takes it: `max_children=5`,
    /// `stack.php.listen=unix`, `php.max_children=5`, `node.processes=2`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// CPU pinning, e.g. `loadgen=0,db=1,app=2-3` [default: from the host's online CPUs].
    #[arg(long, value_name = "ROLE=CPUS,...")]
    pub cpus: Option<String>,
    /// Allow the app's CPUs to overlap the load generator's or the database's.
    #[arg(long)]
    pub force_cpus: bool,
    #[command(flatten)]
    pub catalog: super::catalog::CatalogArg,
}

impl StackArgs {
    /// The experiment whose stack to start: a lab's defaults, a catalog entry, or a file.
    fn base_experiment(&self) -> Result<Experiment> {
        let lab = parse_lab(&self.lab);
        if let Some(path) = &self.experiment {
            let lab = lab?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| InvalidInput(format!("cannot read {}: {e}", path.display())))?;
            let exp: Experiment = serde_yaml::from_str(&text)
                .map_err(|e| InvalidInput(format!("{}: {e}", path.display())))?;
            if exp.lab != lab {
                return Err(InvalidInput(format!(
                    "{} is an experiment of the {} lab, not {}",
                    path.display(),
                    exp.lab.as_str(),
                    lab.as_str()
                ))
                .into());
            }
            return Ok(exp);
        }
        if let Ok(lab) = lab {
            return Ok(defaults::lab_experiment(lab));
        }
        let catalog = self.catalog.load()?;
        let entry = catalog.lookup(&self.lab).map_err(|e| {
            InvalidInput(format!(
                "`{}` is neither a lab (php, node, demo) nor an experiment: {}",
                self.lab, e.0
            ))
        })?;
        match &entry.entry {
            crate::experiment::CatalogEntry::Experiment(e) => Ok(e.clone()),
            crate::experiment::CatalogEntry::Group(g) => Err(InvalidInput(format!(
                "`{}` is a group ({}); give one experiment or a lab",
                g.id,
                g.members.join(", ")
            ))
            .into()),
        }
    }

    fn resolve(&self) -> Result<(Experiment, Pinning, Suite)> {
        let base = self.base_experiment()?;
        let (exp, _) = crate::experiment::overrides::apply(&base, &self.set)
            .map_err(|d| anyhow::Error::new(crate::experiment::invalid(&d)))?;
        let online = crate::plan::layout::online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
        let layout = crate::host::resolve_layout(&online, self.cpus.as_deref(), self.force_cpus)?;
        Ok((exp, Pinning::from(&layout), self.suite.parse()?))
    }
}

#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// Also publish the entry point on this fixed port (bound to 127.0.0.1 only).
    #[arg(long, value_name = "PORT")]
    pub publish: Option<u16>,
    #[arg(from_global)]
    pub quiet: bool,
}

pub fn up(args: UpArgs) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    runtime()?.block_on(async {
        let docker = Docker::connect().await?;
        let mut progress = build_progress(args.quiet);
        let set = images::ensure_built(&docker, suite, &mut progress).await?;
        let run_id = format!("up-{}-{}", exp.lab.as_str(), stack::random_token(6));
        let opts = StartOptions {
            publish_entry: args.publish,
            ..Default::default()
        };
        let s = LabStack::start(&docker, &exp, &pinning, &run_id, &set, &opts).await?;
        print_stack(&s);
        Ok(ExitCode::SUCCESS)
    })
}

fn print_stack(s: &LabStack) {
    crate::out!(
        "{} lab is up (run id {}, ready in {:.1} s)",
        s.lab.as_str(),
        s.run_id,
        s.start_seconds
    );
    crate::out!("  entry point:   {}", s.entry_url);
    if let Some(u) = &s.fpm_status_url {
        crate::out!("  fpm status:    {u}");
    }
    if let Some(pg) = &s.pg {
        crate::out!(
            "  PostgreSQL:    PGPASSWORD={} psql -h {} -p {} -U {} {}",
            pg.password,
            pg.host,
            pg.port,
            pg.user,
            pg.dbname
        );
    }
    crate::out!(
        "  pinning:       loadgen {} | db {} | app {}",
        s.pinning.loadgen,
        s.pinning.db,
        s.pinning.app
    );
    for c in s.containers.values() {
        crate::out!(
            "  {:<8} {} (cpus {}, {} MiB)",
            c.role.as_str(),
            c.name,
            c.cpuset,
            c.memory_bytes >> 20
        );
    }
    crate::out!("stop it with: perflab down {}", s.run_id);
}

#[derive(Debug, Args)]
pub struct DownArgs {
    /// Run id printed by `perflab up` (default: every stack started by `up`).
    pub run_id: Option<String>,
}

pub fn down(args: DownArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let docker = Docker::connect().await?;
        let objs = docker.list_labelled(&[]).await?;
        let mut runs: Vec<String> = objs
            .iter()
            .filter_map(|o| o.labels.get(docker::LABEL_RUN).cloned())
            .filter(|r| match &args.run_id {
                Some(id) => r == id,
                None => r.starts_with("up-"),
            })
            .collect();
        runs.sort();
        runs.dedup();
        if runs.is_empty() {
            match &args.run_id {
                Some(id) => {
                    return Err(InvalidInput(format!(
                        "no stack with run id `{id}`; `perflab cleanup` removes every perflab object"
                    ))
                    .into());
                }
                None => crate::say!("no stack started by `perflab up` is running"),
            }
        }
        for r in runs {
            let removed = docker.remove_labelled(&[format!("{}={r}", docker::LABEL_RUN)]).await?;
            crate::say!("removed {r} ({} objects)", removed.len());
        }
        Ok(ExitCode::SUCCESS)
    })
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// List what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only the objects of this run id (default: every object carrying the perflab label).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

pub fn cleanup(args: CleanupArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let docker = Docker::connect().await?;
        let filter: Vec<String> = args
            .run
            .iter()
            .map(|r| format!("{}={r}", docker::LABEL_RUN))
            .collect();
        let objs = if args.dry_run {
            docker.list_labelled(&filter).await?
        } else {
            docker.remove_labelled(&filter).await?
        };
        for o in &objs {
            crate::out!(
                "{} {:?} {} ({})",
                if args.dry_run {
                    "would remove"
                } else {
                    "removed"
                },
                o.kind,
                o.name,
                o.labels
                    .get(docker::LABEL_RUN)
                    .map(String::as_str)
                    .unwrap_or("-")
            );
        }
        crate::say!(
            "{} perflab objects {}",
            objs.len(),
            if args.dry_run { "found" } else { "removed" }
        );
        Ok(ExitCode::SUCCESS)
    })
}

#[derive(Debug, Args)]
pub struct SmokeArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// Leave the stack running afterwards (remove it with `perflab down <run id>`).
    #[arg(long)]
    pub keep: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[arg(from_global)]
    pub quiet: bool,
}

pub fn smoke(args: SmokeArgs) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    runtime()?.block_on(async {
        let docker = Docker::connect().await?;
        let mut progress = build_progress(args.quiet);
        let set = images::ensure_built(&docker, suite, &mut progress).await?;
        let prefix = if args.keep { "up" } else { "smoke" };
        let run_id = format!("{prefix}-{}-{}", exp.lab.as_str(), stack::random_token(6));
        let s = LabStack::start(
            &docker,
            &exp,
            &pinning,
            &run_id,
            &set,
            &StartOptions::default(),
        )
        .await?;
        if !args.quiet {
            crate::say!(
                "{} stack ready in {:.1} s; smoking",
                exp.lab.as_str(),
                s.start_seconds
            );
        }
        let report = stack::smoke::run(&docker, &s, &exp).await;
        if !args.keep {
            s.teardown(&docker).await?;
        }
        let report = report?;
        if args.json {
            crate::out!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            for c in &report.checks {
                crate::out!(
                    "{} {:<50} {}",
                    if c.ok { "ok  " } else { "FAIL" },
                    c.name,
                    c.detail
                );
            }
        }
        if args.keep {
            print_stack(&s);
        }
        if report.passed() {
            crate::say!(
                "{} smoke passed ({suite}, {:.1} s)",
                exp.lab.as_str(),
                report.seconds
            );
            Ok(ExitCode::SUCCESS)
        } else {
            crate::say!(
                "{} smoke FAILED: {} check(s)",
                exp.lab.as_str(),
                report.failures().len()
            );
            Ok(ExitCode::from(crate::error::EXIT_FAILURE))
        }
    })
}
