//! php-fpm's two enumerated settings of the php lab: its process manager (`stack.php.pm`) and
//! how nginx reaches it (`stack.php.listen`). Pure data.
use serde::{Deserialize, Serialize};

/// php-fpm's process manager (`stack.php.pm`): how many workers it keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pm {
    /// `max_children` workers from the start (the article's every experiment).
    #[default]
    Static,
    /// Between the spare bounds, up to `max_children` (`templates::spare_servers`).
    Dynamic,
    /// None while idle; one forked per request waiting, up to `max_children`.
    Ondemand,
}

impl Pm {
    pub(crate) fn is_static(&self) -> bool {
        *self == Pm::Static
    }
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Pm::Static => "static",
            Pm::Dynamic => "dynamic",
            Pm::Ondemand => "ondemand",
        }
    }
}

/// How nginx reaches php-fpm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Listen {
    /// TCP :9000 on the lab network.
    Tcp,
    /// Unix socket `/run/php/php-fpm.sock` on a volume shared by nginx and php-fpm.
    Unix,
}
