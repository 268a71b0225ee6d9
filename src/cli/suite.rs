//! The values `--suite` takes, derived from the one list of suites (`images::Suite::ALL`) with
//! what each ships, so help and shell completions list them and a wrong one is refused by the
//! parser naming the values.
use clap::builder::{PossibleValue, PossibleValuesParser};

use crate::images::Suite;

/// `--suite`'s values: every suite, and with `all` (`perflab build`) every one in turn.
pub(crate) fn values(all: bool) -> PossibleValuesParser {
    let mut v: Vec<PossibleValue> = Suite::ALL
        .iter()
        .map(|s| PossibleValue::new(s.as_str()).help(s.about()))
        .collect();
    if all {
        v.push(PossibleValue::new("all").help("every suite, one after the other"));
    }
    PossibleValuesParser::new(v)
}
