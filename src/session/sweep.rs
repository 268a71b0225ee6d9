//! Leftovers of killed runs: run directories still marked `running` whose process is gone are
//! marked aborted, and the Docker objects of stacks whose owner (`owner` labels: host, pid,
//! start time) is dead are removed. Nothing whose owner is alive is ever removed; objects of
//! another host's perflab are never removed automatically: they are listed with how to remove
//! them. A stack handed to the user (`perflab up`, `smoke --keep`) carries a kept marker and is
//! left to `perflab down`.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::docker::{Docker, LABEL_KEPT, LABEL_RUN, LabelledObject, ObjectKind};
use crate::owner::{Liveness, Owner};
use crate::rundir;

/// Prefix of the run ids `perflab run` gives its stacks (exploration stacks use `up-` and
/// `smoke-`).
pub(crate) const RUN_ID_PREFIX: &str = "run-";

/// What becomes of one run's objects, from their labels and their owner's liveness.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fate {
    /// The owner is gone (the reason says how we know).
    Dead(String),
    /// The owner still runs on this host.
    Live(Owner),
    /// The owner is another host's perflab: this host cannot tell whether it is alive.
    OtherHost(Owner),
    /// A stack handed to the user (`perflab up`); `perflab down` removes it.
    Kept,
    /// No owner labels (made by a perflab before they existed).
    Unowned,
}

/// Who asks: the automatic sweep before a run, or the user (`cleanup`, `down`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asker {
    /// The sweep under the host lock; `local` when the engine is this host's (no perflab of
    /// this host can be running there without the lock, so unowned `run-` stacks are leftovers).
    Sweep { local: bool },
    /// `perflab cleanup` / `perflab down`: also kept and unowned stacks; another user's only
    /// with `all` (`--all`).
    User { all: bool },
}

/// One run's objects and what to do with them.
#[derive(Debug, Clone)]
pub(crate) struct RunLeftover {
    pub run_id: String,
    pub objects: Vec<LabelledObject>,
    pub fate: Fate,
    pub remove: bool,
    /// The user whose perflab made the objects, when it is not the caller (a shared host).
    pub foreign_user: Option<String>,
}

impl RunLeftover {
    /// Why the run is left in place and how to remove it (`None` when it is removed, or live).
    pub(crate) fn left_note(&self, endpoint: &crate::docker::Endpoint) -> Option<String> {
        let id = &self.run_id;
        match &self.fate {
            _ if self.remove => None,
            Fate::Kept | Fate::Dead(_) if self.foreign_user.is_some() => Some(format!(
                "{id}: {} object(s) of {}'s stack; left in place: another user's stack is theirs to remove (`perflab down {id}`), or anyone's with `perflab cleanup --all --run {id}`",
                self.objects.len(),
                self.foreign_user.as_deref().unwrap_or_default()
            )),
            Fate::OtherHost(o) => Some(format!(
                "{id}: {} object(s) owned by {o}, another host; left in place. On {} `perflab cleanup --run {id}` removes them once their owner is gone, or by hand: {}",
                self.objects.len(),
                o.host,
                removal_commands(&self.objects, endpoint)
            )),
            Fate::Unowned => Some(format!(
                "{id}: {} object(s) without an owner (an older perflab made them); left in place: `perflab cleanup --run {id}` removes them",
                self.objects.len()
            )),
            Fate::Kept | Fate::Live(_) | Fate::Dead(_) => None,
        }
    }
}

/// The Docker commands that remove `objects` on `endpoint`, containers first.
pub(crate) fn removal_commands(
    objects: &[LabelledObject],
    endpoint: &crate::docker::Endpoint,
) -> String {
    let docker = match endpoint {
        crate::docker::Endpoint::Local => "docker".to_string(),
        e => format!("docker -H {e}"),
    };
    let names = |k: ObjectKind| -> Vec<&str> {
        objects
            .iter()
            .filter(|o| o.kind == k)
            .map(|o| o.name.as_str())
            .collect()
    };
    [
        (ObjectKind::Container, "rm -f"),
        (ObjectKind::Network, "network rm"),
        (ObjectKind::Volume, "volume rm"),
    ]
    .into_iter()
    .filter_map(|(k, cmd)| {
        let n = names(k);
        (!n.is_empty()).then(|| format!("`{docker} {cmd} {}`", n.join(" ")))
    })
    .collect::<Vec<_>>()
    .join(", then ")
}

/// The fate of one run's objects; `judge` tells an owner's liveness (pure, for tests).
pub(crate) fn fate_of(objects: &[LabelledObject], judge: impl Fn(&Owner) -> Liveness) -> Fate {
    if objects.iter().any(|o| o.labels.contains_key(LABEL_KEPT)) {
        return Fate::Kept;
    }
    let mut owners: Vec<Owner> = objects
        .iter()
        .filter_map(|o| Owner::from_labels(&o.labels))
        .collect();
    owners.dedup();
    let mut dead = None;
    for o in owners {
        match judge(&o) {
            Liveness::OtherHost => return Fate::OtherHost(o),
            Liveness::Alive => return Fate::Live(o),
            Liveness::Dead(why) => dead = dead.or(Some(why)),
        }
    }
    dead.map(Fate::Dead).unwrap_or(Fate::Unowned)
}

/// Whether `asker` removes a run of `run_id` with `fate`; `foreign` when another user's
/// perflab made it (removed only by a user's `--all`, never by the sweep).
pub(crate) fn removes(asker: Asker, run_id: &str, fate: &Fate, foreign: bool) -> bool {
    match (fate, asker) {
        (Fate::Live(_) | Fate::OtherHost(_), _) => false,
        (_, Asker::Sweep { .. } | Asker::User { all: false }) if foreign => false,
        (Fate::Dead(_), _) => true,
        (Fate::Kept | Fate::Unowned, Asker::User { .. }) => true,
        (Fate::Kept, Asker::Sweep { .. }) => false,
        (Fate::Unowned, Asker::Sweep { local }) => local && run_id.starts_with(RUN_ID_PREFIX),
    }
}

/// Group labelled objects by run and decide each run's fate (pure but for `judge`).
pub(crate) fn plan(
    objects: Vec<LabelledObject>,
    asker: Asker,
    caller: &str,
    keep: &BTreeSet<String>,
    judge: impl Fn(&Owner) -> Liveness,
) -> Vec<RunLeftover> {
    let mut by_run: BTreeMap<String, Vec<LabelledObject>> = BTreeMap::new();
    for o in objects {
        if let Some(r) = o.labels.get(LABEL_RUN).cloned() {
            by_run.entry(r).or_default().push(o);
        }
    }
    by_run
        .into_iter()
        .filter(|(id, _)| !keep.contains(id))
        .map(|(run_id, objects)| {
            let fate = fate_of(&objects, &judge);
            let foreign_user = objects
                .iter()
                .filter_map(|o| Owner::from_labels(&o.labels))
                .map(|o| o.user)
                .find(|u| !u.is_empty() && u != caller);
            let remove = removes(asker, &run_id, &fate, foreign_user.is_some());
            RunLeftover {
                run_id,
                objects,
                fate,
                remove,
                foreign_user,
            }
        })
        .collect()
}

/// What a sweep found and removed.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Swept {
    pub aborted_dirs: Vec<String>,
    pub removed_runs: Vec<String>,
    pub removed_objects: usize,
    /// Runs left in place, each with why and how to remove it.
    pub left: Vec<String>,
}

impl Swept {
    /// Say what was swept and what was left (nothing when `quiet`, but what was left).
    pub(crate) fn tell(&self, quiet: bool, engine: &crate::docker::Endpoint) {
        if !quiet && (self.removed_objects > 0 || !self.aborted_dirs.is_empty()) {
            crate::say!(
                "swept leftovers of killed runs on {engine}: {} Docker objects of {} run(s) removed, {} run folder(s) marked aborted",
                self.removed_objects,
                self.removed_runs.len(),
                self.aborted_dirs.len()
            );
        }
        for note in &self.left {
            crate::say!("left {note}");
        }
    }
}

/// Sweep leftovers. `keep` holds run ids that must survive.
pub(crate) async fn sweep(
    docker: &Docker,
    out_root: &Path,
    keep: &BTreeSet<String>,
) -> anyhow::Result<Swept> {
    let mut swept = Swept::default();
    for d in rundir::mark_stale_runs(out_root) {
        swept.aborted_dirs.push(d.path.display().to_string());
    }
    let engine = sweep_engine(docker, keep).await?;
    swept.removed_objects = engine.removed_objects;
    swept.removed_runs = engine.removed_runs;
    swept.left = engine.left;
    Ok(swept)
}

/// Remove the Docker objects of dead owners' runs on one engine (the stack's or the load
/// generator's); what is left is listed with how to remove it.
pub async fn sweep_engine(docker: &Docker, keep: &BTreeSet<String>) -> anyhow::Result<Swept> {
    let local = docker.endpoint().is_on_this_machine();
    let runs = plan(
        docker.list_labelled(&[]).await?,
        Asker::Sweep { local },
        &Owner::me().user,
        keep,
        Owner::liveness,
    );
    let mut swept = Swept::default();
    for r in &runs {
        if let Some(note) = r.left_note(docker.endpoint()) {
            swept.left.push(note);
        }
        if r.remove {
            swept.removed_objects += remove_run(docker, &r.run_id).await?;
            swept.removed_runs.push(r.run_id.clone());
        }
    }
    Ok(swept)
}

/// Remove every object of one run; returns how many.
pub async fn remove_run(docker: &Docker, run_id: &str) -> anyhow::Result<usize> {
    Ok(docker
        .remove_labelled_settled(&[format!("{LABEL_RUN}={run_id}")])
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(run: &str, owner: Option<&Owner>, kept: bool) -> LabelledObject {
        let mut labels = owner.map(Owner::labels).unwrap_or_default();
        labels.insert(LABEL_RUN.into(), run.into());
        if kept {
            labels.insert(LABEL_KEPT.into(), "1".into());
        }
        LabelledObject {
            kind: ObjectKind::Container,
            id: format!("id-{run}"),
            name: format!("perflab-{run}-x"),
            labels,
        }
    }

    fn owner(host: &str, pid: u32) -> Owner {
        Owner {
            host: host.into(),
            pid,
            start: 7,
            boot: "b".into(),
            user: "alice".into(),
        }
    }

    /// pid 1 alive on `here`, every other pid dead.
    fn judge(o: &Owner) -> Liveness {
        o.liveness_with("here", "b", |pid| {
            (pid == 1).then_some(crate::owner::ProcState {
                start: 7,
                state: 'S',
            })
        })
    }

    #[test]
    fn only_dead_owners_runs_are_swept() {
        let (alive, dead, other) = (owner("here", 1), owner("here", 2), owner("there", 2));
        let objs = vec![
            obj("run-live", Some(&alive), false),
            obj("run-dead", Some(&dead), false),
            obj("up-dead", Some(&dead), false),
            obj("smoke-dead", Some(&dead), false),
            obj("run-other", Some(&other), false),
            obj("up-kept", Some(&dead), true),
            obj("run-old", None, false),
            obj("up-old", None, false),
            obj("run-kept-by-caller", Some(&dead), false),
        ];
        let keep = BTreeSet::from(["run-kept-by-caller".to_string()]);
        let removed = |asker| -> Vec<String> {
            plan(objs.clone(), asker, "alice", &keep, judge)
                .into_iter()
                .filter(|r| r.remove)
                .map(|r| r.run_id)
                .collect()
        };
        assert_eq!(
            removed(Asker::Sweep { local: true }),
            ["run-dead", "run-old", "smoke-dead", "up-dead"]
        );
        // On another host's engine an owner-less stack may be a live run of an older perflab.
        assert_eq!(
            removed(Asker::Sweep { local: false }),
            ["run-dead", "smoke-dead", "up-dead"]
        );
        // The user also removes kept and owner-less stacks, never a live or another host's.
        assert_eq!(
            removed(Asker::User { all: false }),
            [
                "run-dead",
                "run-old",
                "smoke-dead",
                "up-dead",
                "up-kept",
                "up-old"
            ]
        );
    }

    /// A workshop host: bob's kept `up` stack and his killed run stay when alice runs `down`,
    /// `cleanup` or a run (the sweep); `--all` removes them, a live owner's never.
    #[test]
    fn another_users_stacks_are_left_unless_all() {
        let bob = |pid| Owner {
            user: "bob".into(),
            ..owner("here", pid)
        };
        let objs = vec![
            obj("up-bob", Some(&bob(2)), true),
            obj("run-bob-dead", Some(&bob(2)), false),
            obj("run-bob-live", Some(&bob(1)), false),
            obj("up-alice", Some(&owner("here", 2)), true),
            obj(
                "run-older",
                Some(&Owner {
                    user: String::new(),
                    ..bob(2)
                }),
                false,
            ),
        ];
        let removed = |asker| -> Vec<String> {
            plan(objs.clone(), asker, "alice", &BTreeSet::new(), judge)
                .into_iter()
                .filter(|r| r.remove)
                .map(|r| r.run_id)
                .collect()
        };
        assert_eq!(
            removed(Asker::User { all: false }),
            ["run-older", "up-alice"]
        );
        assert_eq!(removed(Asker::Sweep { local: true }), ["run-older"]);
        assert_eq!(
            removed(Asker::User { all: true }),
            ["run-bob-dead", "run-older", "up-alice", "up-bob"]
        );
        let runs = plan(
            objs,
            Asker::User { all: false },
            "alice",
            &BTreeSet::new(),
            judge,
        );
        let ep = crate::docker::Endpoint::Local;
        let note = runs[0].left_note(&ep).unwrap();
        assert!(
            note.starts_with("run-bob-dead: 1 object(s) of bob's stack; left in place"),
            "{note}"
        );
        assert!(
            note.contains("perflab cleanup --all --run run-bob-dead"),
            "{note}"
        );
    }

    #[test]
    fn another_hosts_run_is_listed_with_how_to_remove_it() {
        let objs = vec![obj("run-x", Some(&owner("there", 9)), false)];
        let runs = plan(
            objs,
            Asker::Sweep { local: false },
            "alice",
            &BTreeSet::new(),
            judge,
        );
        let ep = crate::docker::Endpoint::Ssh("lab@box".into());
        let note = runs[0].left_note(&ep).unwrap();
        assert!(note.contains("pid 9 on there"), "{note}");
        assert!(note.contains("perflab cleanup --run run-x"), "{note}");
        assert!(
            note.contains("`docker -H ssh://lab@box rm -f perflab-run-x-x`"),
            "{note}"
        );
    }
}
