//! Error kinds that decide the process exit code.
use std::fmt;

/// Bad input from the user (a catalog file, a flag, an override): exit code 2, nothing started.
#[derive(Debug)]
pub struct InvalidInput(pub String);

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidInput {}

/// Exit code for invalid input.
pub(crate) const EXIT_INVALID: u8 = 2;
/// Exit code for a harness failure.
pub(crate) const EXIT_FAILURE: u8 = 1;

/// Map an error chain to the process exit code: 2 if any cause is `InvalidInput`, else 1.
pub(crate) fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err
        .chain()
        .any(|c| c.downcast_ref::<InvalidInput>().is_some())
    {
        EXIT_INVALID
    } else {
        EXIT_FAILURE
    }
}
