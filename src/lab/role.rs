//! The one role type of the labs: a container of a stack (or the base and k6 images), declared
//! as data (`RoleDecl`: its name, container name, image, CPU slot and memory). The
//! infrastructure roles (`Role::BASE`, `Role::PG`, `Role::K6`) are declared here; every other
//! role is declared by the lab that runs it (`php.rs`'s `FPM` and `NGINX`, ...), and
//! `lab::roles()` lists them all, so a new role is its declaration and no enum is edited.
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// What a role is, fixed for every run: the lab's part of a container's declaration that does
/// not depend on the experiment's settings (those are `lab::ContainerDecl`).
#[derive(Debug, PartialEq, Eq)]
pub struct RoleDecl {
    /// Its name: the `role` of `samples/cgroup.jsonl`, the sampler's and the report's CPU
    /// column (`<name>%`), the claims' `cpu.<name>`, its serde form.
    pub name: &'static str,
    /// The container's name in a stack: `logs/<log_name>.log`, the container name's suffix,
    /// its network alias and its role label.
    pub log_name: &'static str,
    /// Its image: the directory under `images/` and the tag's repository name; roles of the
    /// same image share it (the demo server runs `node-app`).
    pub image: &'static str,
    /// The CPU slot of the plan's layout it is pinned to.
    pub slot: Slot,
    /// Its container's memory limit (MiB; 0 for the roles that run no container of a stack).
    pub memory_mib: i64,
    /// The process it runs, as the version matrix names it (the node app's `app` is `node`).
    pub process: &'static str,
}

/// A role, a declared `RoleDecl`. Serializes as its name (`fpm`, `app`, `demo`, ...), the form
/// the recorded samples and the sample agent's targets use; images and stacks serialize
/// through `as_image` / `as_log` where their files use those names. Equal by name; ordered as
/// `lab::roles()` lists them.
#[derive(Clone, Copy)]
pub struct Role(&'static RoleDecl);

impl Role {
    /// The Debian base image every other image builds on (the remote sampler runs in it).
    pub const BASE: Role = Role::declare(&RoleDecl {
        name: "base",
        log_name: "base",
        image: "base",
        slot: Slot::Loadgen,
        memory_mib: 0,
        process: "base",
    });
    /// PostgreSQL, of the labs that have a database (`lab::postgres`).
    pub const PG: Role = Role::declare(&RoleDecl {
        name: "pg",
        log_name: "pg",
        image: "pg",
        slot: Slot::Db,
        memory_mib: 512,
        process: "pg",
    });
    /// The load generator.
    pub const K6: Role = Role::declare(&RoleDecl {
        name: "k6",
        log_name: "k6",
        image: "k6",
        slot: Slot::Loadgen,
        memory_mib: 0,
        process: "k6",
    });

    /// The role `decl` declares (a lab's `const`).
    pub const fn declare(decl: &'static RoleDecl) -> Role {
        Role(decl)
    }

    /// Every role the labs declare, infrastructure included (`lab::roles()`).
    pub(crate) fn all() -> &'static [Role] {
        super::roles()
    }

    /// The declared role named `name` (`fpm`, `pg`, `k6`, ...).
    pub fn named(name: &str) -> Option<Role> {
        Role::all().iter().copied().find(|r| r.column() == name)
    }

    /// The role that owns this role's image (the first declared with it: the demo server's is
    /// the node app's).
    pub(crate) fn image(self) -> Role {
        let own = Role::all()
            .iter()
            .copied()
            .find(|r| r.0.image == self.0.image);
        own.unwrap_or(self)
    }

    /// The image's directory under `images/` and its tag's repository name.
    pub(crate) fn image_name(self) -> &'static str {
        self.0.image
    }

    /// The image this role's image is built on.
    pub(crate) fn parent(self) -> Option<Role> {
        (self.image_name() != Role::BASE.image_name()).then_some(Role::BASE)
    }

    /// The roles that own an image, in build order (parents first): the base, then each
    /// declared image once.
    pub(crate) fn images() -> Vec<Role> {
        images_of(Role::all())
    }

    /// The sampler's name for the role: the `role` of `samples/cgroup.jsonl` and the report's
    /// CPU columns.
    pub fn column(self) -> &'static str {
        self.0.name
    }

    /// The container's name in a stack: `logs/<name>.log`, the container name suffix, its
    /// network alias and its role label.
    pub(crate) fn log_name(self) -> &'static str {
        self.0.log_name
    }

    /// The CPU slot of the plan's layout the role is pinned to.
    pub(crate) fn slot(self) -> Slot {
        self.0.slot
    }

    /// The process it runs, as the version matrix names it.
    pub(crate) fn process(self) -> &'static str {
        self.0.process
    }

    /// Its container's memory limit, MiB.
    pub(crate) fn memory_mib(self) -> i64 {
        self.0.memory_mib
    }

    /// Roles whose CPU serves the requests on the app box (ms CPU per ok, app-cores criterion).
    pub(crate) fn is_app_box(self) -> bool {
        self.slot() == Slot::App
    }

    /// The roles that run a container: every role but the base image, in `all`'s order.
    pub(crate) fn with_containers() -> impl Iterator<Item = Role> {
        Role::all().iter().copied().filter(|r| *r != Role::BASE)
    }

    /// The sampler columns of the roles that run a container: `cpu.<column>` of claims,
    /// `<column>%` of the report's headers.
    pub(crate) fn container_columns() -> impl Iterator<Item = &'static str> {
        Role::with_containers().map(Role::column)
    }

    /// Its place in `all` (roles declared nowhere, as a test's, after them by name).
    fn rank(self) -> usize {
        Role::all()
            .iter()
            .position(|r| *r == self)
            .unwrap_or(usize::MAX)
    }
}

/// The roles of `roles` that own an image, in build order: the base first, each image once.
fn images_of(roles: &[Role]) -> Vec<Role> {
    let mut v = vec![Role::BASE];
    for r in roles {
        if !v.iter().any(|x| x.image_name() == r.image_name()) {
            v.push(*r);
        }
    }
    v
}

impl PartialEq for Role {
    fn eq(&self, other: &Role) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Role {}

impl std::hash::Hash for Role {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}

impl Ord for Role {
    fn cmp(&self, other: &Role) -> std::cmp::Ordering {
        (self.rank(), self.0.name).cmp(&(other.rank(), other.0.name))
    }
}

impl PartialOrd for Role {
    fn partial_cmp(&self, other: &Role) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Role({})", self.0.name)
    }
}

/// The CPU slots of a plan's layout (`Role::slot` maps containers to them; `plan::CpuLayout`
/// gives each its CPUs). PHP: nginx and php-fpm share `app`; samplers run on `loadgen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Slot {
    Loadgen,
    Db,
    App,
}

impl Slot {
    pub(crate) const ALL: [Slot; 3] = [Slot::Loadgen, Slot::Db, Slot::App];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Slot::Loadgen => "loadgen",
            Slot::Db => "db",
            Slot::App => "app",
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.column())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Role::named(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown role `{s}`")))
    }
}

/// Serde for a role written by its image name (`node-app`), alone or as a map key.
pub(crate) mod as_image {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.image_name())
    }

    /// The role owning the image named `name`.
    fn by_image<E: serde::de::Error>(name: &str) -> Result<Role, E> {
        Role::images()
            .into_iter()
            .find(|r| r.image_name() == name)
            .ok_or_else(|| E::custom(format!("unknown image `{name}`")))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
        by_image(&String::deserialize(d)?)
    }

    /// A map keyed by image role.
    pub mod map {
        use super::*;

        pub(crate) fn serialize<S: Serializer, T: Serialize>(
            m: &BTreeMap<Role, T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_map(m.iter().map(|(k, v)| (k.image_name(), v)))
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
            d: D,
        ) -> Result<BTreeMap<Role, T>, D::Error> {
            let m = BTreeMap::<String, T>::deserialize(d)?;
            m.into_iter().map(|(k, v)| Ok((by_image(&k)?, v))).collect()
        }
    }
}

/// Serialization of a stack's role by its container name (`php-fpm`, `app`), alone or as a
/// map key.
pub(crate) mod as_log {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.log_name())
    }

    pub(crate) fn map<S: Serializer, T: Serialize>(
        m: &BTreeMap<Role, T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().map(|(k, v)| (k.log_name(), v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roles of the shipped labs (the unit tests' toy lab adds its own after them).
    fn shipped() -> Vec<Role> {
        let mut v: Vec<Role> = Role::all().to_vec();
        v.retain(|r| r.column() != "toy");
        v
    }

    #[test]
    fn names_in_files_are_kept() {
        let all = shipped();
        let names = |f: fn(&Role) -> &'static str| all.iter().map(f).collect::<Vec<_>>().join(" ");
        let col = names(|r| r.column());
        assert_eq!(col, "base pg pgbouncer fpm nginx app demo api front k6");
        let log = names(|r| r.log_name());
        assert_eq!(log, "base pg pgbouncer php-fpm nginx app app api front k6");
        let img = names(|r| r.image_name());
        assert_eq!(
            img,
            "base pg pgbouncer php-fpm nginx node-app node-app node-app node-app k6"
        );
        let images: Vec<_> = Role::images().iter().map(|r| r.image_name()).collect();
        assert_eq!(
            images.join(" "),
            "base pg pgbouncer php-fpm nginx node-app k6"
        );
        for r in Role::all() {
            let json = serde_json::to_string(r).unwrap();
            assert_eq!(serde_json::from_str::<Role>(&json).unwrap(), *r);
        }
        assert!(serde_json::from_str::<Role>("\"php-fpm\"").is_err());
        // the order of maps keyed by role (manifests' images, the stack's containers)
        let mut sorted = all.clone();
        sorted.sort_by_key(|r| r.column());
        sorted.sort();
        assert_eq!(sorted, all);
    }

    #[test]
    fn slots_and_app_box() {
        let named = |n| Role::named(n).unwrap();
        assert_eq!(Role::PG.slot(), Slot::Db);
        assert_eq!(Role::K6.slot(), Slot::Loadgen);
        let app: Vec<_> = shipped().into_iter().filter(|r| r.is_app_box()).collect();
        assert_eq!(
            app,
            ["fpm", "nginx", "app", "demo", "api", "front"].map(named)
        );
        assert_eq!(named("demo").image(), named("app"));
        assert_eq!(named("demo").parent(), Some(Role::BASE));
        assert_eq!(Role::BASE.parent(), None);
    }

    /// A role declared outside every lab with an image of its own: the image list builds it
    /// after its parent, once, whoever else runs it (the php lab's PgBouncer is one, declared).
    #[test]
    fn a_declared_image_is_built_once_after_the_base() {
        const BOUNCER: Role = Role::declare(&RoleDecl {
            name: "bouncer",
            log_name: "bouncer",
            image: "bouncer",
            slot: Slot::Db,
            memory_mib: 64,
            process: "bouncer",
        });
        let roles = [Role::PG, BOUNCER, Role::K6, BOUNCER];
        let names: Vec<_> = images_of(&roles).iter().map(|r| r.image_name()).collect();
        assert_eq!(names, ["base", "pg", "bouncer", "k6"]);
        assert_eq!(BOUNCER.parent(), Some(Role::BASE));
        assert_eq!(
            BOUNCER.image(),
            BOUNCER,
            "not declared by a lab: its own image"
        );
        assert!(BOUNCER > Role::K6, "after every declared role");
    }
}
