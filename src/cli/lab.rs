//! CLI commands for the lab area: `build`, `up`, `down`, `cleanup`, `smoke`: their flags,
//! and what they print. The stack's life (the host lock, Ctrl-C, what is removed) is
//! `run::lifecycle`'s.
use crate::docker::Docker;
use crate::experiment::Experiment;
use crate::images::{self, ImageSet, Suite, build_progress};
use crate::run::lifecycle::{self, StackRequest, interrupted_or};
use crate::run::outline::duration;
use crate::session::signals::Interrupt;
use crate::stack::{self, LabStack, Pinning};
use anyhow::{Context, Result};
use clap::Args;
use std::process::ExitCode;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Debian suite, or `all` (every suite, one after the other: prepare a workshop host
    /// before the participants arrive).
    #[arg(long, default_value = "trixie", value_parser = super::suite::values(true))]
    pub suite: String,
    /// Print the image set (tags, ids, sizes, versions) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[arg(from_global)]
    pub quiet: bool,
}

pub(crate) fn build(args: BuildArgs) -> Result<ExitCode> {
    let suites: Vec<Suite> = match args.suite.as_str() {
        "all" => Suite::ALL.to_vec(),
        s => vec![s.parse()?],
    };
    let mut sets = Vec::new();
    for suite in suites {
        match build_suite(&args, suite)? {
            Ok(set) => sets.push(set),
            Err(code) => return Ok(code),
        }
    }
    if args.json {
        match sets.as_slice() {
            [one] => crate::out!("{}", serde_json::to_string_pretty(one)?),
            all => crate::out!("{}", serde_json::to_string_pretty(all)?),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Build (or find) one suite's images; `Err(code)` when interrupted.
fn build_suite(args: &BuildArgs, suite: Suite) -> Result<std::result::Result<ImageSet, ExitCode>> {
    runtime()?.block_on(async {
        let interrupt = Interrupt::install_with("stopping the build, removing its containers")?;
        let docker = Docker::connect().await?;
        if !args.quiet
            && let Ok(missing) = images::missing(&docker, suite).await
            && let Some(p) = crate::run::outline::images_estimate(suite.as_str(), missing.len())
        {
            crate::say!(
                "{}: {}, about {} ({})",
                p.what,
                p.detail,
                duration(p.seconds),
                p.source
            );
        }
        let t0 = std::time::Instant::now();
        let mut progress = build_progress(args.quiet);
        let set = match images::ensure_built_until(&docker, suite, &mut progress, &interrupt).await
        {
            Ok(set) => set,
            Err(e) => return interrupted_or(e, &interrupt).map(Err),
        };
        if !args.json {
            print_images(&set);
            if !args.quiet {
                crate::say!(
                    "images for {suite} ready in {:.1} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        Ok(Ok(set))
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
            img.role.image_name(),
            img.tag,
            img.size_bytes / 1_000_000,
            v.join(", ")
        );
    }
}

/// Options shared by `up` and `smoke`.
#[derive(Debug, Args)]
pub struct StackArgs {
    /// A lab (the registry's: the article's default settings) or a catalog experiment id
    #[arg(value_name = "LAB|EXPERIMENT", help = format!(
        "A lab ({}: the article's default settings) or a catalog experiment id (exp3-n5, 1c, ...: \
         that experiment's stack settings)",
        crate::lab::Lab::ALL.map(crate::lab::Lab::as_str).join(", ")
    ))]
    pub lab: String,
    /// Debian suite of the images.
    #[arg(long, default_value = "trixie", value_parser = super::suite::values(false))]
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
    fn resolve(&self) -> Result<(Experiment, Pinning, Suite)> {
        let req = StackRequest {
            lab: &self.lab,
            suite: &self.suite,
            file: self.experiment.as_deref(),
            set: &self.set,
            cpus: self.cpus.as_deref(),
            force_cpus: self.force_cpus,
        };
        req.resolve(|| self.catalog.load())
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

pub(crate) fn up(args: UpArgs) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    runtime()?.block_on(async {
        match lifecycle::up(&exp, &pinning, suite, args.publish, args.quiet).await? {
            Ok(s) => print_stack(&s),
            Err(code) => return Ok(code),
        }
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
    for (name, label) in [("fpm", "fpm status:   "), ("nginx", "nginx status: ")] {
        if let Some(u) = s.source_url(name) {
            crate::out!("  {label} {u}");
        }
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
            c.role.log_name(),
            c.name,
            c.cpuset,
            c.memory_bytes >> 20
        );
    }
    crate::out!("stop it with: perflab down {}", s.run_id);
}

#[derive(Debug, Args)]
pub struct DownArgs {
    /// Run id printed by `perflab up` (default: every stack you started with `up`).
    pub run_id: Option<String>,
    /// Also other users' stacks (a shared host: without it `down` touches only yours).
    #[arg(long)]
    pub all: bool,
}

pub(crate) fn down(args: DownArgs) -> Result<ExitCode> {
    runtime()?.block_on(lifecycle::down(args.run_id.as_deref(), args.all))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// List what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only the objects of this run id (default: every perflab stack whose owner is gone; a
    /// live perflab's and another host's are listed, never removed).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also other users' stacks whose owner is gone or that they kept (a shared host: without
    /// it `cleanup` removes only yours; a live perflab's objects are never removed).
    #[arg(long)]
    pub all: bool,
}

pub(crate) fn cleanup(args: CleanupArgs) -> Result<ExitCode> {
    runtime()?.block_on(lifecycle::cleanup(
        args.dry_run,
        args.run.as_deref(),
        args.all,
    ))?;
    Ok(ExitCode::SUCCESS)
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

pub(crate) fn smoke(args: SmokeArgs) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    let smoked = runtime()?.block_on(lifecycle::smoke(
        &exp, &pinning, suite, args.keep, args.quiet,
    ))?;
    let (report, s) = match smoked {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    print_smoke(&report, args.json)?;
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
}

/// The smoke report: JSON, or one line per check.
fn print_smoke(report: &stack::smoke::SmokeReport, json: bool) -> Result<()> {
    if json {
        crate::out!("{}", serde_json::to_string_pretty(report)?);
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
    Ok(())
}
