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

/// How a comparison's pair was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Whole rounds on fresh stacks, one after the other, in ABBA order over the pairs.
    #[default]
    Rounds,
    /// Both stacks up side by side, the sides taking turns at each load level of one round
    /// (`plan::turns`): the pair's two rounds ran at the same time.
    Steps,
    /// Both stacks up side by side on the same CPUs and loaded at the same time, each at half the
    /// plan's rates (`plan::turns::together`): a pair's readings of a level are the same seconds.
    Together,
}

impl Design {
    pub(crate) fn is_rounds(&self) -> bool {
        *self == Design::Rounds
    }

    /// How a verdict names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Design::Rounds => "whole rounds in ABBA order",
            Design::Steps => {
                "sides taking turns at each load level within one round (ABBA over levels)"
            }
            Design::Together => {
                "sides loaded together on the same CPUs, each at half the plan's rates"
            }
        }
    }

    /// Both sides' stacks up at once, the pair's two rounds run at the same time.
    pub(crate) fn side_by_side(self) -> bool {
        self != Design::Rounds
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
    /// How the pair was made (absent: whole rounds).
    #[serde(default, skip_serializing_if = "Design::is_rounds")]
    pub design: Design,
}
