//! `measurements.compare` of a run's manifest: the `perflab compare EXP --a ... --b ...` batch a
//! round was run for, its side and pair, and the side's declared difference. Rounds without it
//! are plain `perflab run` rounds; both count for a comparison of the same configuration.
use serde::{Deserialize, Serialize};

/// Which side of a comparison a round belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareSide {
    A,
    B,
}

impl CompareSide {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CompareSide::A => "A",
            CompareSide::B => "B",
        }
    }
}

impl std::fmt::Display for CompareSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The comparison batch a round was run for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompareTag {
    /// The batch id: the UTC time the batch started (`20261201T101500Z`); `--resume` keeps it.
    pub batch: String,
    pub side: CompareSide,
    /// The side's round number in the batch's count (1 = the first round of that side).
    pub pair: u32,
    /// The side's declared difference as given (`suite=forky`, `stack.node.burn_us=1000`);
    /// empty for the experiment as published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared: Vec<String>,
}
