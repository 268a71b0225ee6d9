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

/// Bad input `msg` as an error chain (exit code 2): the one constructor the modules share.
pub(crate) fn invalid(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(InvalidInput(msg.into()))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_input_exits_2_anywhere_in_the_chain_and_other_errors_exit_1() {
        let e = invalid("--steps 0: give at least one step");
        assert_eq!(e.to_string(), "--steps 0: give at least one step");
        assert_eq!(exit_code_for(&e), EXIT_INVALID);
        assert_eq!(exit_code_for(&e.context("reading the plan")), EXIT_INVALID);
        assert_eq!(exit_code_for(&anyhow::anyhow!("engine gone")), EXIT_FAILURE);
    }
}
