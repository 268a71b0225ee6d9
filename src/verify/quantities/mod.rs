//! The one registry of the names a claim can use, each quantity's name, scope, help and reader
//! in one row: per-step figures of `report.json` (`failed_rate`, `cpu.pg`, `fpm.idle_min`, ...,
//! in `step`), per-run figures (`knee`, `max_ok_per_s`, ..., in `run`), the run's recorded
//! config and CPU layout (`app_cpus`, ..., in `config`), the labs' own settings (their
//! descriptors declare and read them), and the functions (`functions`). Adding a quantity is
//! one row; adding a claim on these needs no Rust change. [`Quantities`] hands the names to the
//! catalog's checks (`claim::quantities::Names`). Pure.
use crate::analyze::model::{Report, StepReport};
use crate::claim::quantities::{Function, Named, Names, Scope};
use crate::lab::{Lab, Role};

/// Declares one scope's quantities, one row each: `Variant "name" => "help" => reader,`. The
/// reader is an `f64` expression over the context named in the head (`|c: &StepCtx<'_>|`); its
/// `?` returns why the value is missing.
macro_rules! quantities {
    ($(#[$doc:meta])* $ty:ident, |$c:ident: $ctx:ty| {
        $($var:ident $name:literal => $help:literal => $read:expr,)*
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $ty {
            $($var,)*
        }

        impl $ty {
            /// Every quantity of this kind, in the order `verify --quantities` lists them.
            pub(crate) const ALL: &'static [$ty] = &[$($ty::$var,)*];

            /// The name claims use.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $($ty::$var => $name,)*
                }
            }

            /// One line on what it is.
            pub(crate) const fn help(self) -> &'static str {
                match self {
                    $($ty::$var => $help,)*
                }
            }

            /// Its value.
            pub fn read(self, $c: $ctx) -> Result<f64, $crate::verify::quantities::Missing> {
                Ok(match self {
                    $($ty::$var => $read,)*
                })
            }
        }
    };
}

mod config;
mod functions;
mod run;
mod step;
mod value;

pub use config::ConfigQ;
pub(crate) use config::lab_value;
pub(crate) use functions::{Call, FUNCTIONS};
pub use run::RunQ;
pub(crate) use step::{StepCtx, StepQ};
pub(crate) use value::Missing;
#[cfg(test)]
use value::{b, need};

/// How a quantity is read; its scope is the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    Step(StepQ),
    Run(RunQ),
    Config(ConfigQ),
    /// A lab's own setting (config scope): one of its descriptor's `info().quantities`, which
    /// the descriptor reads.
    Lab(Lab, &'static str),
    /// A step figure of a declared sampler source (`nginx.active_max`), by its name: a
    /// figure of its row in `analyze::samples::sources`, read from the step's
    /// `server.sources`.
    Source(&'static str),
}

/// One named quantity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantity {
    pub reader: Reader,
    pub name: &'static str,
    pub help: &'static str,
}

impl Quantity {
    /// Where it is read: its reader's kind.
    pub(crate) fn scope(&self) -> Scope {
        match self.reader {
            Reader::Step(_) | Reader::Source(_) => Scope::Step,
            Reader::Run(_) => Scope::Run,
            Reader::Config(_) | Reader::Lab(..) => Scope::Config,
        }
    }

    /// Only meaningful on this lab (a setting of one lab's stack section).
    pub(crate) fn lab(&self) -> Option<Lab> {
        match self.reader {
            Reader::Lab(lab, _) => Some(lab),
            Reader::Step(_) | Reader::Source(_) | Reader::Run(_) | Reader::Config(_) => None,
        }
    }
}

/// One kind's rows as [`Quantity`]s, each wrapped into its [`Reader`] by `$reader`.
macro_rules! rows {
    ($ty:ident, $reader:expr) => {
        $ty::ALL.iter().map(|&q| Quantity {
            reader: $reader(q),
            name: q.name(),
            help: q.help(),
        })
    };
}

/// The labs' own settings, as their descriptors declare them, in `Lab::ALL`'s order.
fn lab_rows() -> impl Iterator<Item = Quantity> {
    Lab::ALL.into_iter().flat_map(|lab| {
        let declared = crate::lab::descriptor(lab).info().quantities;
        declared.iter().map(move |&(name, help)| Quantity {
            reader: Reader::Lab(lab, name),
            name,
            help,
        })
    })
}

/// The step figures of the declared sampler sources, each row's in its order.
fn source_rows() -> impl Iterator<Item = Quantity> {
    let rows = crate::analyze::samples::sources::ROWS.iter();
    rows.flat_map(|r| r.figures).map(|f| Quantity {
        reader: Reader::Source(f.name),
        name: f.name,
        help: f.help,
    })
}

/// Every quantity (the families `cpu.<role>` and `non200.<status>` once each), in order:
/// step, the sources' step figures, run, the labs' settings, config.
pub(crate) fn all() -> impl Iterator<Item = Quantity> {
    rows!(StepQ, Reader::Step)
        .chain(source_rows())
        .chain(rows!(RunQ, Reader::Run))
        .chain(lab_rows())
        .chain(rows!(ConfigQ, Reader::Config))
}

/// Step quantity `path` of `r` at step `s` (a function's reader: `first_step_over`).
pub(crate) fn step_value(r: &Report, s: &StepReport, path: &str) -> Result<f64, Missing> {
    let q = lookup(path).ok_or_else(|| format!("unknown quantity `{path}`"))?;
    let ctx = StepCtx::new(r, s, path);
    match q.reader {
        Reader::Step(sq) => sq.read(&ctx),
        Reader::Source(name) => ctx.source(name),
        _ => Err(format!("`{path}` is not a step quantity")),
    }
}

/// Look up a quantity path (`cpu.pg` and `non200.500` included: their family's row).
pub(crate) fn lookup(path: &str) -> Option<Quantity> {
    if let Some(q) = all().find(|q| q.name == path) {
        return Some(q);
    }
    let (family, member) = path.split_once('.')?;
    let ok = match family {
        "cpu"
        | "pss_mib"
        | "worker_pss_total_mib"
        | "worker_pss_mib"
        | "worker_private_mib"
        | "mem_workers" => Role::container_columns().any(|r| r == member),
        "non200" => member.parse::<u16>().is_ok(),
        _ => false,
    };
    if ok {
        all().find(|q| q.name == family)
    } else {
        None
    }
}

/// The registry, as the catalog's checks see it: hand `&Quantities` to `Catalog::load`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quantities;

impl Names for Quantities {
    fn quantity(&self, path: &str) -> Option<Named> {
        lookup(path).map(|q| Named {
            name: q.name,
            help: q.help,
            scope: q.scope(),
            lab: q.lab(),
        })
    }

    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = all().map(|q| q.name.to_string()).collect();
        v.extend(Role::container_columns().map(|r| format!("cpu.{r}")));
        v.push("non200.500".into());
        v
    }

    fn function(&self, name: &str) -> Option<Function> {
        FUNCTIONS
            .iter()
            .find(|f| f.info.name == name)
            .map(|f| f.info)
    }

    fn function_names(&self) -> Vec<&'static str> {
        FUNCTIONS.iter().map(|f| f.info.name).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    quantities! {
        /// A kind declared here to hold the macro to its word: one row is a name, a help line
        /// and a reader, and nothing else is written for it.
        ToyQ, |x: &Option<f64>| {
            Twice "toy.twice" => "twice x" => need(*x, || "no x".into())? * 2.0,
            One "toy.one" => "always 1" => b(true),
        }
    }

    #[test]
    fn a_row_is_its_name_help_and_reader() {
        assert_eq!(ToyQ::ALL, &[ToyQ::Twice, ToyQ::One]);
        assert_eq!(
            (ToyQ::Twice.name(), ToyQ::Twice.help()),
            ("toy.twice", "twice x")
        );
        assert_eq!(ToyQ::Twice.read(&Some(2.5)), Ok(5.0));
        assert_eq!(ToyQ::Twice.read(&None), Err("no x".to_string()));
        assert_eq!(ToyQ::One.read(&None), Ok(1.0));
    }

    #[test]
    fn families_and_unknown_names() {
        assert_eq!(lookup("cpu.pg").unwrap().scope(), Scope::Step);
        assert_eq!(lookup("cpu.pg").unwrap().reader, Reader::Step(StepQ::Cpu));
        assert_eq!(lookup("non200.500").unwrap().scope(), Scope::Step);
        assert!(lookup("cpu.gpu").is_none());
        assert!(lookup("non200.abc").is_none());
        assert_eq!(lookup("knee").unwrap().scope(), Scope::Run);
        assert_eq!(lookup("max_children").unwrap().lab(), Some(Lab::Php));
        assert_eq!(
            lookup("fpm.idle_min").unwrap().reader,
            Reader::Step(StepQ::FpmIdleMin)
        );
        assert!(lookup("fpm.nope").is_none());
        let n = Quantities.quantity("pool_max").unwrap();
        assert_eq!((n.scope, n.lab), (Scope::Config, Some(Lab::Node)));
        assert!(Quantities.names().iter().any(|n| n == "cpu.pg"));
        let log = Quantities.function("log").unwrap();
        assert_eq!(
            (log.scope, log.args, log.measured),
            (Scope::Run, "ss", true)
        );
        assert!(!Quantities.function("abs").unwrap().measured);
        assert!(Quantities.function("nope").is_none());
    }

    #[test]
    fn names_are_unique_and_scopes_follow_the_kind() {
        let mut n: Vec<&str> = all().map(|q| q.name).collect();
        assert_eq!(
            n.len(),
            203,
            "a row was lost or added: update this count with it"
        );
        n.sort();
        let len = n.len();
        n.dedup();
        assert_eq!(n.len(), len);
        for q in all() {
            assert_eq!(
                q.lab().is_some(),
                matches!(q.reader, Reader::Lab(..)),
                "{}",
                q.name
            );
            assert_eq!(
                lookup(q.name).map(|l| l.reader),
                Some(q.reader),
                "{}",
                q.name
            );
        }
        let mut f = Quantities.function_names();
        f.dedup();
        assert_eq!(f.len(), FUNCTIONS.len());
    }
}
