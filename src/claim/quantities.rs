//! What the claims' checks know of the names a claim may use: each quantity's scope, lab and
//! help, and each function's arguments, behind the [`Names`] trait. The registry itself, each
//! quantity's name, scope, help and reader in one row, is `verify::quantities` (the readers
//! need the report's and the manifest's types, floors above this one); whoever checks a
//! catalog hands it in.
use crate::lab::Lab;

/// Where a quantity is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One step of `report.json` (needs `at:` or a selector like `knee.`).
    Step,
    /// The whole run's report.
    Run,
    /// The run's recorded config or CPU layout (manifest.json).
    Config,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Step => "step",
            Scope::Run => "run",
            Scope::Config => "config",
        }
    }
}

/// A named quantity as the checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub name: &'static str,
    pub help: &'static str,
    pub scope: Scope,
    /// Only meaningful on this lab (a setting of one lab's stack section).
    pub lab: Option<Lab>,
}

/// A function as the checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    pub name: &'static str,
    /// `Step`: reads a step (needs `at:`); `Run`: anywhere.
    pub scope: Scope,
    /// Reads the run's measurements (logs, steps), so `needs` may not use it.
    pub measured: bool,
    /// Argument kinds: `s` string, `q` a step quantity's name (a string), `n` number, `n+` one
    /// or more numbers.
    pub args: &'static str,
    pub help: &'static str,
}

/// The quantities and functions a claim may name. `verify::quantities::Quantities` is the
/// one implementation; tests may give a smaller one.
pub trait Names {
    /// A quantity path (`cpu.pg` and `non200.500` included: their family's row).
    fn quantity(&self, path: &str) -> Option<Named>;
    /// Every name (the families' members spelled out), for did-you-mean.
    fn names(&self) -> Vec<String>;
    /// A function by its name.
    fn function(&self, name: &str) -> Option<Function>;
    /// Every function's name.
    fn function_names(&self) -> Vec<&'static str>;
}
