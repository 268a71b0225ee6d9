//! CLI commands for the lab area: `build`, `up`, `down`, `cleanup`, `smoke`. Each but `build`
//! holds the host lock while it starts or removes objects, and removes only what no live
//! perflab owns (`session::sweep`); Ctrl-C stops a build or a stack start and removes what it
//! made.
use crate::docker::{self, Docker};
use crate::error::InvalidInput;
use crate::experiment::{Experiment, Lab};
use crate::images::{self, ImageSet, Suite, build_progress};
use crate::lock::{HostLock, Wait};
use crate::run::outline::duration;
use crate::session::signals::Interrupt;
use crate::session::sweep::{self, Asker};
use crate::stack::{self, LabStack, Pinning, StartOptions, defaults};
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

fn parse_lab(s: &str) -> std::result::Result<Lab, InvalidInput> {
    Lab::ALL
        .into_iter()
        .find(|l| l.as_str() == s)
        .ok_or_else(|| InvalidInput(format!("unknown lab `{s}`: use php, node or demo")))
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

pub fn build(args: BuildArgs) -> Result<ExitCode> {
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
    /// A lab (php, node, demo: the article's default settings) or a catalog experiment id
    /// (exp3-n5, 1c, ...: that experiment's stack settings).
    #[arg(value_name = "LAB|EXPERIMENT")]
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
        let layout = crate::plan::layout::resolve(&online, self.cpus.as_deref(), self.force_cpus)?;
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
        let run_id = format!("up-{}-{}", exp.lab.as_str(), stack::random_token(6));
        let opts = StartOptions {
            publish_entry: args.publish,
            ..Default::default()
        };
        let started = Started::new(suite, &exp, &pinning, &run_id, &opts, args.quiet).await?;
        let (lab, s) = match started {
            Ok(x) => x,
            Err(code) => return Ok(code),
        };
        // Handed to the user: the sweep leaves it to `perflab down`.
        s.hand_over(&lab.docker).await?;
        drop(lab);
        print_stack(&s);
        Ok(ExitCode::SUCCESS)
    })
}

/// What `up` and `smoke` share: Ctrl-C watched, the engine connected, the suite's images
/// built, the host lock held, and the stack started (an interrupted build or start exits 130
/// and leaves nothing).
struct Started {
    interrupt: Interrupt,
    docker: Docker,
    _lock: HostLock,
}

impl Started {
    async fn new(
        suite: Suite,
        exp: &Experiment,
        pinning: &Pinning,
        run_id: &str,
        opts: &StartOptions,
        quiet: bool,
    ) -> Result<std::result::Result<(Started, LabStack), ExitCode>> {
        let interrupt = Interrupt::install_with("stopping, removing what was started")?;
        let docker = Docker::connect().await?;
        let mut progress = build_progress(quiet);
        let set = match images::ensure_built_until(&docker, suite, &mut progress, &interrupt).await
        {
            Ok(set) => set,
            Err(e) => return interrupted_or(e, &interrupt).map(Err),
        };
        let lock = lab_lock(run_id, quiet, &interrupt).await?;
        let s = match start_stack(&docker, exp, pinning, run_id, &set, opts, &interrupt).await {
            Ok(s) => s,
            Err(e) => return interrupted_or(e, &interrupt).map(Err),
        };
        let lab = Started {
            interrupt,
            docker,
            _lock: lock,
        };
        Ok(Ok((lab, s)))
    }
}

/// The host lock for a lab command, given up on Ctrl-C (nothing is started before it).
async fn lab_lock(what: &str, quiet: bool, interrupt: &Interrupt) -> Result<HostLock> {
    crate::session::acquire_lock(what, Wait::Block, quiet, interrupt).await
}

/// Start a stack, raced against Ctrl-C: an interrupted start removes what it made.
async fn start_stack(
    docker: &Docker,
    exp: &Experiment,
    pinning: &Pinning,
    run_id: &str,
    set: &ImageSet,
    opts: &StartOptions,
    interrupt: &Interrupt,
) -> Result<LabStack> {
    let started = crate::session::or_interrupt(
        interrupt,
        LabStack::start(docker, exp, pinning, run_id, set, opts),
    )
    .await;
    match started {
        Ok(s) => Ok(s),
        Err(stop) => {
            sweep::remove_run(docker, run_id).await?;
            Err(stop.into_error())
        }
    }
}

/// A command stopped by Ctrl-C exits 130 after saying so; any other error stays an error.
fn interrupted_or(e: anyhow::Error, interrupt: &Interrupt) -> Result<ExitCode> {
    match interrupt.reason() {
        Some(sig) => {
            crate::say!("interrupted by {sig}: {e:#}; nothing is left running");
            Ok(ExitCode::from(130))
        }
        None => Err(e),
    }
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

pub fn down(args: DownArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let interrupt = Interrupt::install_with("stopping")?;
        let docker = Docker::connect().await?;
        // an unknown run id is said at once, not after a wait for the host lock
        if let Some(id) = &args.run_id
            && docker
                .list_labelled(&[format!("{}={id}", docker::LABEL_RUN)])
                .await?
                .is_empty()
        {
            return Err(no_such_stack(id));
        }
        let _lock = lab_lock("down", false, &interrupt).await?;
        let runs: Vec<_> = user_plan(&docker, args.run_id.as_deref(), args.all)
            .await?
            .into_iter()
            .filter(|r| args.run_id.is_some() || r.run_id.starts_with("up-"))
            // without a run id, other users' stacks are not yours to list
            .filter(|r| args.run_id.is_some() || args.all || r.foreign_user.is_none())
            .collect();
        if runs.is_empty() {
            match &args.run_id {
                Some(id) => return Err(no_such_stack(id)),
                None => crate::say!("no stack started by `perflab up` is running"),
            }
        }
        for r in &runs {
            if r.remove {
                let n = sweep::remove_run(&docker, &r.run_id).await?;
                crate::say!("removed {} ({n} objects)", r.run_id);
            } else {
                crate::say!("left {}", left_reason(r, docker.endpoint()));
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn no_such_stack(id: &str) -> anyhow::Error {
    InvalidInput(format!(
        "no stack with run id `{id}` (`perflab status` lists the stacks); `perflab cleanup` removes every perflab object no live perflab owns"
    ))
    .into()
}

/// The runs on the local engine (all, or one) and whether the user's `down`/`cleanup` removes
/// each: never when its owner is alive or on another host, another user's only with `all`.
async fn user_plan(
    docker: &Docker,
    run: Option<&str>,
    all: bool,
) -> Result<Vec<sweep::RunLeftover>> {
    let filter: Vec<String> = run
        .iter()
        .map(|r| format!("{}={r}", docker::LABEL_RUN))
        .collect();
    let objects = docker.list_labelled(&filter).await?;
    Ok(sweep::plan(
        objects,
        Asker::User { all },
        &crate::owner::Owner::me().user,
        &Default::default(),
        crate::owner::Owner::liveness,
    ))
}

/// Why a run is left in place, and how to remove it.
fn left_reason(r: &sweep::RunLeftover, endpoint: &docker::Endpoint) -> String {
    match &r.fate {
        sweep::Fate::Live(o) => format!(
            "{}: its owner ({o}) is still running; stop it (Ctrl-C) and it removes its objects",
            r.run_id
        ),
        _ => r
            .left_note(endpoint)
            .unwrap_or_else(|| format!("{}: kept", r.run_id)),
    }
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

pub fn cleanup(args: CleanupArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let interrupt = Interrupt::install_with("stopping")?;
        let _lock = lab_lock("cleanup", false, &interrupt).await?;
        let docker = Docker::connect().await?;
        let runs = user_plan(&docker, args.run.as_deref(), args.all).await?;
        let mut n = 0;
        for r in &runs {
            if !r.remove {
                crate::say!("left {}", left_reason(r, docker.endpoint()));
                continue;
            }
            if !args.dry_run {
                sweep::remove_run(&docker, &r.run_id).await?;
            }
            for o in &r.objects {
                crate::out!(
                    "{} {:?} {} ({})",
                    if args.dry_run {
                        "would remove"
                    } else {
                        "removed"
                    },
                    o.kind,
                    o.name,
                    r.run_id
                );
            }
            n += r.objects.len();
        }
        crate::say!(
            "{n} perflab objects {}",
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
        let prefix = if args.keep { "up" } else { "smoke" };
        let run_id = format!("{prefix}-{}-{}", exp.lab.as_str(), stack::random_token(6));
        let opts = StartOptions::default();
        let started = Started::new(suite, &exp, &pinning, &run_id, &opts, args.quiet).await?;
        let (lab, s) = match started {
            Ok(x) => x,
            Err(code) => return Ok(code),
        };
        let (docker, interrupt) = (&lab.docker, &lab.interrupt);
        if !args.quiet {
            crate::say!(
                "{} stack ready in {:.1} s; smoking",
                exp.lab.as_str(),
                s.start_seconds
            );
        }
        let report =
            crate::session::or_interrupt(interrupt, stack::smoke::run(docker, &s, &exp)).await;
        if !args.keep || report.is_err() {
            s.teardown(docker).await?;
        } else {
            s.hand_over(docker).await?;
        }
        let report = match report {
            Ok(r) => r,
            Err(stop) => return interrupted_or(stop.into_error(), interrupt),
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
    })
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
