//! What every reader of a quantity shares: why a value is missing, and two helpers.

/// Why a value could not be read.
pub(crate) type Missing = String;

/// 1 for true, 0 for false.
pub(crate) fn b(x: bool) -> f64 {
    if x { 1.0 } else { 0.0 }
}

/// `v`, or why it is missing.
pub(crate) fn need<T>(v: Option<T>, what: impl FnOnce() -> String) -> Result<T, Missing> {
    v.ok_or_else(what)
}
