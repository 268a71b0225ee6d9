//! A lab stack's life outside a run: the experiment a stack is started from (a lab's
//! defaults, a catalog entry or a file, with `--set` and a CPU layout), `up` and `smoke`
//! (images built, the host lock held, the stack started, raced against Ctrl-C, which removes
//! what was started), `down` and `cleanup` (the host lock held; only what no live perflab owns
//! is removed, another user's only when asked, `session::sweep`), and the stacks on the engine
//! with their owners (`status`). The CLI parses and prints.
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::docker::{self, Docker};
use crate::error::InvalidInput;
use crate::experiment::{Catalog, CatalogEntry, Experiment, Lab};
use crate::images::{self, ImageSet, Suite, build_progress};
use crate::lock::{HostLock, Wait};
use crate::owner::Owner;
use crate::session::signals::Interrupt;
use crate::session::sweep::{self, Asker, Fate};
use crate::stack::{self, LabStack, Pinning, StartOptions, defaults};

/// Where a stack's settings come from, as `up` and `smoke` are given them.
pub(crate) struct StackRequest<'a> {
    /// A lab (`php`, ...) or a catalog experiment id.
    pub lab: &'a str,
    pub suite: &'a str,
    /// An experiment file whose lab must be `lab`.
    pub file: Option<&'a Path>,
    pub set: &'a [String],
    pub cpus: Option<&'a str>,
    pub force_cpus: bool,
}

pub(crate) fn parse_lab(s: &str) -> std::result::Result<Lab, InvalidInput> {
    Lab::from_name(s)
        .ok_or_else(|| InvalidInput(format!("unknown lab `{s}`: use {}", Lab::list_or(Lab::ALL))))
}

impl StackRequest<'_> {
    /// The experiment whose stack to start: a lab's defaults, a catalog entry, or a file.
    fn base_experiment(&self, catalog: impl FnOnce() -> Result<Catalog>) -> Result<Experiment> {
        let lab = parse_lab(self.lab);
        if let Some(path) = self.file {
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
        let catalog = catalog()?;
        let entry = catalog.lookup(self.lab).map_err(|e| {
            InvalidInput(format!(
                "`{}` is neither a lab ({}) nor an experiment: {}",
                self.lab,
                Lab::ALL.map(Lab::as_str).join(", "),
                e.0
            ))
        })?;
        match &entry.entry {
            CatalogEntry::Experiment(e) => Ok(e.clone()),
            CatalogEntry::Group(g) => Err(InvalidInput(format!(
                "`{}` is a group ({}); give one experiment or a lab",
                g.id,
                g.members.join(", ")
            ))
            .into()),
        }
    }

    /// The experiment with `--set` applied, the pinning and the suite; bad input is exit 2.
    pub(crate) fn resolve(
        &self,
        catalog: impl FnOnce() -> Result<Catalog>,
    ) -> Result<(Experiment, Pinning, Suite)> {
        let base = self.base_experiment(catalog)?;
        let (exp, _) = crate::experiment::overrides::apply(&base, self.set)
            .map_err(|d| anyhow::Error::new(crate::experiment::invalid(&d)))?;
        let online = crate::plan::layout::online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
        let layout = crate::plan::layout::resolve(&online, self.cpus, self.force_cpus)?;
        Ok((exp, Pinning::from(&layout), self.suite.parse()?))
    }
}

/// What `up` and `smoke` share: Ctrl-C watched, the engine connected, the suite's images
/// built, the host lock held, and the stack started (an interrupted build or start exits 130
/// and leaves nothing).
pub(crate) struct Started {
    pub interrupt: Interrupt,
    pub docker: Docker,
    _lock: HostLock,
}

impl Started {
    pub(crate) async fn new(
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

/// `up`: a stack started and handed to the user (the sweep leaves it to `perflab down`).
pub(crate) async fn up(
    exp: &Experiment,
    pinning: &Pinning,
    suite: Suite,
    publish: Option<u16>,
    quiet: bool,
) -> Result<std::result::Result<LabStack, ExitCode>> {
    let run_id = format!("up-{}-{}", exp.lab.as_str(), stack::random_token(6));
    let opts = StartOptions {
        publish_entry: publish,
        ..Default::default()
    };
    let (lab, s) = match Started::new(suite, exp, pinning, &run_id, &opts, quiet).await? {
        Ok(x) => x,
        Err(code) => return Ok(Err(code)),
    };
    s.hand_over(&lab.docker).await?;
    Ok(Ok(s))
}

/// `smoke`: a fresh stack, its smoke checks, then removed (or handed over with `keep`, when
/// the checks ran). Interrupted: exit 130, nothing left.
pub(crate) async fn smoke(
    exp: &Experiment,
    pinning: &Pinning,
    suite: Suite,
    keep: bool,
    quiet: bool,
) -> Result<std::result::Result<(stack::smoke::SmokeReport, LabStack), ExitCode>> {
    let prefix = if keep { "up" } else { "smoke" };
    let run_id = format!("{prefix}-{}-{}", exp.lab.as_str(), stack::random_token(6));
    let opts = StartOptions::default();
    let (lab, s) = match Started::new(suite, exp, pinning, &run_id, &opts, quiet).await? {
        Ok(x) => x,
        Err(code) => return Ok(Err(code)),
    };
    let (docker, interrupt) = (&lab.docker, &lab.interrupt);
    if !quiet {
        crate::say!(
            "{} stack ready in {:.1} s; smoking",
            exp.lab.as_str(),
            s.start_seconds
        );
    }
    let report = crate::session::or_interrupt(interrupt, stack::smoke::run(docker, &s, exp)).await;
    if !keep || report.is_err() {
        s.teardown(docker).await?;
    } else {
        s.hand_over(docker).await?;
    }
    match report {
        Ok(r) => Ok(Ok((r, s))),
        Err(stop) => interrupted_or(stop.into_error(), interrupt).map(Err),
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
pub(crate) fn interrupted_or(e: anyhow::Error, interrupt: &Interrupt) -> Result<ExitCode> {
    match interrupt.reason() {
        Some(sig) => {
            crate::say!("interrupted by {sig}: {e:#}; nothing is left running");
            Ok(ExitCode::from(130))
        }
        None => Err(e),
    }
}

/// `down`: the stacks `up` started (one by run id, else all of yours, or everyone's with
/// `all`) removed, unless a live perflab owns them.
pub(crate) async fn down(run_id: Option<&str>, all: bool) -> Result<()> {
    let interrupt = Interrupt::install_with("stopping")?;
    let docker = Docker::connect().await?;
    // an unknown run id is said at once, not after a wait for the host lock
    if let Some(id) = run_id
        && docker
            .list_labelled(&[format!("{}={id}", docker::LABEL_RUN)])
            .await?
            .is_empty()
    {
        return Err(no_such_stack(id));
    }
    let _lock = lab_lock("down", false, &interrupt).await?;
    let runs: Vec<_> = user_plan(&docker, run_id, all)
        .await?
        .into_iter()
        .filter(|r| run_id.is_some() || r.run_id.starts_with("up-"))
        // without a run id, other users' stacks are not yours to list
        .filter(|r| run_id.is_some() || all || r.foreign_user.is_none())
        .collect();
    if runs.is_empty() {
        match run_id {
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
    Ok(())
}

fn no_such_stack(id: &str) -> anyhow::Error {
    InvalidInput(format!(
        "no stack with run id `{id}` (`perflab status` lists the stacks); `perflab cleanup` removes every perflab object no live perflab owns"
    ))
    .into()
}

/// `cleanup`: every perflab object (of one run, or all) whose owner is gone removed (only
/// listed with `dry_run`); yours, or everyone's with `all`; a live perflab's never.
pub(crate) async fn cleanup(dry_run: bool, run: Option<&str>, all: bool) -> Result<()> {
    let interrupt = Interrupt::install_with("stopping")?;
    let _lock = lab_lock("cleanup", false, &interrupt).await?;
    let docker = Docker::connect().await?;
    let runs = user_plan(&docker, run, all).await?;
    let mut n = 0;
    let done = if dry_run { "would remove" } else { "removed" };
    for r in &runs {
        if !r.remove {
            crate::say!("left {}", left_reason(r, docker.endpoint()));
            continue;
        }
        if !dry_run {
            sweep::remove_run(&docker, &r.run_id).await?;
        }
        for o in &r.objects {
            crate::out!("{done} {:?} {} ({})", o.kind, o.name, r.run_id);
        }
        n += r.objects.len();
    }
    crate::say!(
        "{n} perflab objects {}",
        if dry_run { "found" } else { "removed" }
    );
    Ok(())
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

/// One lab stack on the engine and whose it is.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StackRow {
    pub run_id: String,
    pub lab: String,
    /// `kept` (handed to its user by `up`), `measuring` (its perflab runs), `leftover` (its
    /// perflab is gone), `other-host`, `unowned`.
    pub state: &'static str,
    pub user: String,
    pub owner: Option<String>,
    pub objects: usize,
}

/// The lab stacks on the engine and whose they are (`perflab status`); why not, when the engine
/// cannot be listed within 5 s.
pub(crate) async fn stacks() -> std::result::Result<Vec<StackRow>, String> {
    let listed = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        let docker = crate::docker::Docker::connect().await?;
        docker.list_labelled(&[]).await
    })
    .await;
    let objects = match listed {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(format!("{e:#}")),
        Err(_) => return Err("the Docker engine did not answer within 5 s".into()),
    };
    let me = &Owner::me().user;
    let plan = sweep::plan(
        objects,
        Asker::User { all: true },
        me,
        &Default::default(),
        Owner::liveness,
    );
    Ok(plan.into_iter().map(row).collect())
}

fn row(r: sweep::RunLeftover) -> StackRow {
    let owner = r.objects.iter().find_map(|o| Owner::from_labels(&o.labels));
    let lab = r
        .objects
        .iter()
        .find_map(|o| o.labels.get(crate::docker::LABEL_LAB).cloned())
        .unwrap_or_default();
    StackRow {
        state: match r.fate {
            Fate::Kept => "kept",
            Fate::Live(_) => "measuring",
            Fate::Dead(_) => "leftover",
            Fate::OtherHost(_) => "other-host",
            Fate::Unowned => "unowned",
        },
        user: owner.as_ref().map(|o| o.user.clone()).unwrap_or_default(),
        owner: owner.map(|o| o.to_string()),
        lab,
        objects: r.objects.len(),
        run_id: r.run_id,
    }
}
