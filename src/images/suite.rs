//! The Debian suites the images are built from.
use serde::{Deserialize, Serialize};

/// Debian suite the images are built from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    #[default]
    /// Debian 13 (stable): nginx 1.26, PHP 8.4, Laravel 10, PostgreSQL 17, Node 20, Express 4.
    Trixie,
    /// Debian testing: closest to the article (Laravel 13, PostgreSQL 18, Node 24, Express 5).
    Forky,
    /// Debian 12: nginx 1.22, PHP 8.2, Laravel 8, PostgreSQL 15, Node 18.
    Bookworm,
}

impl Suite {
    pub const ALL: [Suite; 3] = [Suite::Trixie, Suite::Forky, Suite::Bookworm];

    pub fn as_str(self) -> &'static str {
        match self {
            Suite::Trixie => "trixie",
            Suite::Forky => "forky",
            Suite::Bookworm => "bookworm",
        }
    }

    /// What the suite is, in a few words (`--suite`'s help and completions).
    pub(crate) fn about(self) -> &'static str {
        match self {
            Suite::Trixie => "Debian 13, the default: PHP 8.4, Laravel 10, PostgreSQL 17, Node 20",
            Suite::Forky => {
                "Debian testing, closest to the article: Laravel 13, PostgreSQL 18, Node 24"
            }
            Suite::Bookworm => "Debian 12: PHP 8.2, Laravel 8, PostgreSQL 15, Node 18",
        }
    }
}

impl std::str::FromStr for Suite {
    type Err = crate::error::InvalidInput;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Suite::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| {
                crate::error::InvalidInput(format!(
                    "unknown Debian suite `{s}`: use one of trixie (default), forky, bookworm"
                ))
            })
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every `--suite` flag's parser: the suites as clap's possible values, each with what it
/// ships, and `all` too when `all` (`build`).
pub fn possible_values(all: bool) -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let mut v: Vec<PossibleValue> = Suite::ALL
        .iter()
        .map(|s| PossibleValue::new(s.as_str()).help(s.about()))
        .collect();
    if all {
        v.push(PossibleValue::new("all").help("every suite, one after the other"));
    }
    clap::builder::PossibleValuesParser::new(v)
}
