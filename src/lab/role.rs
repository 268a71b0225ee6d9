//! The one role type of the labs: a container of a stack (or the base and k6 images), with its
//! image, its sampler column (`samples/*.jsonl`, report columns), its log file and container
//! name (`logs/<role>.log`, network alias, label) and the CPU slot of the plan it runs on.
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// A role. Serializes as its sampler column name (`fpm`, `app`, `demo`, ...), the form the
/// recorded samples and the sample agent's targets use; images and stacks serialize through
/// `as_image` / `as_log` where their files use those names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The Debian base image every other image builds on (the remote sampler runs in it).
    Base,
    Pg,
    PhpFpm,
    Nginx,
    /// The Express app of the node lab.
    NodeApp,
    /// The capacity server of the demo lab (runs from the node-app image).
    DemoApp,
    K6,
}

impl Role {
    pub(crate) const ALL: [Role; 7] = [
        Role::Base,
        Role::Pg,
        Role::PhpFpm,
        Role::Nginx,
        Role::NodeApp,
        Role::DemoApp,
        Role::K6,
    ];
    /// The roles that own an image, in build order (parents first).
    pub(crate) const IMAGES: [Role; 6] = [
        Role::Base,
        Role::Pg,
        Role::PhpFpm,
        Role::Nginx,
        Role::NodeApp,
        Role::K6,
    ];

    /// The role whose image this role runs.
    pub(crate) fn image(self) -> Role {
        match self {
            Role::DemoApp => Role::NodeApp,
            Role::Base => Role::Base,
            Role::Pg => Role::Pg,
            Role::PhpFpm => Role::PhpFpm,
            Role::Nginx => Role::Nginx,
            Role::NodeApp => Role::NodeApp,
            Role::K6 => Role::K6,
        }
    }

    /// The image's directory under `images/` and its tag's repository name.
    pub(crate) fn image_name(self) -> &'static str {
        match self.image() {
            Role::Base => "base",
            Role::Pg => "pg",
            Role::PhpFpm => "php-fpm",
            Role::Nginx => "nginx",
            Role::K6 => "k6",
            // Every role listed (no wildcard): a new role without an image name does not compile.
            Role::NodeApp | Role::DemoApp => "node-app",
        }
    }

    /// The image this role's image is built on.
    pub(crate) fn parent(self) -> Option<Role> {
        (self.image() != Role::Base).then_some(Role::Base)
    }

    /// The sampler's name for the role: the `role` of `samples/cgroup.jsonl` and the report's
    /// CPU columns.
    pub fn column(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Pg => "pg",
            Role::PhpFpm => "fpm",
            Role::Nginx => "nginx",
            Role::NodeApp => "app",
            Role::DemoApp => "demo",
            Role::K6 => "k6",
        }
    }

    /// The container's name in a stack: `logs/<name>.log`, the container name suffix, its
    /// network alias and its role label.
    pub(crate) fn log_name(self) -> &'static str {
        match self {
            Role::PhpFpm => "php-fpm",
            Role::NodeApp | Role::DemoApp => "app",
            Role::Base | Role::Pg | Role::Nginx | Role::K6 => self.column(),
        }
    }

    /// The CPU slot of the plan's layout the role is pinned to.
    pub(crate) fn slot(self) -> Slot {
        match self {
            Role::Pg => Slot::Db,
            Role::PhpFpm | Role::Nginx | Role::NodeApp | Role::DemoApp => Slot::App,
            Role::Base | Role::K6 => Slot::Loadgen,
        }
    }

    /// Roles whose CPU serves the requests on the app box (ms CPU per ok, app-cores criterion).
    pub(crate) fn is_app_box(self) -> bool {
        self.slot() == Slot::App
    }

    /// The roles that run a container: every role but the base image, in `ALL`'s order.
    pub(crate) fn with_containers() -> impl Iterator<Item = Role> {
        Role::ALL.into_iter().filter(|r| *r != Role::Base)
    }

    /// The sampler columns of the roles that run a container: `cpu.<column>` of claims,
    /// `<column>%` of the report's headers.
    pub(crate) fn container_columns() -> impl Iterator<Item = &'static str> {
        Role::with_containers().map(Role::column)
    }

    /// The role whose sampler column is `column` (`fpm`, `pg`, `k6`, ...).
    pub(crate) fn from_column(column: &str) -> Option<Role> {
        Role::by_name(column, Role::column)
    }

    fn by_name(name: &str, f: impl Fn(Role) -> &'static str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| f(*r) == name)
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
        Role::by_name(&s, Role::column)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown role `{s}`")))
    }
}

/// Serde for a role written by its image name (`node-app`), alone or as a map key.
pub(crate) mod as_image {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.image_name())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
        let s = String::deserialize(d)?;
        Role::IMAGES
            .into_iter()
            .find(|r| r.image_name() == s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown image `{s}`")))
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
            m.into_iter()
                .map(|(k, v)| {
                    let r = Role::IMAGES.into_iter().find(|r| r.image_name() == k);
                    r.map(|r| (r, v))
                        .ok_or_else(|| serde::de::Error::custom(format!("unknown image `{k}`")))
                })
                .collect()
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

    #[test]
    fn names_in_files_are_kept() {
        let col: Vec<_> = Role::ALL.iter().map(|r| r.column()).collect();
        assert_eq!(col, ["base", "pg", "fpm", "nginx", "app", "demo", "k6"]);
        let log: Vec<_> = Role::ALL.iter().map(|r| r.log_name()).collect();
        assert_eq!(log, ["base", "pg", "php-fpm", "nginx", "app", "app", "k6"]);
        let img: Vec<_> = Role::ALL.iter().map(|r| r.image_name()).collect();
        assert_eq!(
            img,
            [
                "base", "pg", "php-fpm", "nginx", "node-app", "node-app", "k6"
            ]
        );
        for r in Role::ALL {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Role>(&json).unwrap(), r);
        }
        assert!(serde_json::from_str::<Role>("\"php-fpm\"").is_err());
    }

    #[test]
    fn slots_and_app_box() {
        assert_eq!(Role::Pg.slot(), Slot::Db);
        assert_eq!(Role::K6.slot(), Slot::Loadgen);
        let app: Vec<_> = Role::ALL.into_iter().filter(|r| r.is_app_box()).collect();
        assert_eq!(
            app,
            [Role::PhpFpm, Role::Nginx, Role::NodeApp, Role::DemoApp]
        );
        assert_eq!(Role::DemoApp.image(), Role::NodeApp);
        assert_eq!(Role::DemoApp.parent(), Some(Role::Base));
        assert_eq!(Role::Base.parent(), None);
    }
}
