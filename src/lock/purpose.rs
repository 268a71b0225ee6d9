//! What a process takes the host lock for, as the others see it (the holder's record, the
//! queue's entries).

/// What a process takes the lock for, as the others see it while it holds the lock or waits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purpose {
    /// The experiment, group or command (`exp1`, `all`, `down`, a tool's run directory).
    pub what: String,
    /// How long it expects to hold the lock (from its plan), when it knows.
    pub expected_s: Option<u64>,
    /// Its live page's URL (`perflab run --live`), for the trainer's `status --live`.
    pub live: Option<String>,
}

impl Purpose {
    /// `what`, expected to hold the lock for `expected_s` seconds.
    pub(crate) fn new(what: impl Into<String>, expected_s: Option<u64>) -> Purpose {
        Purpose {
            what: what.into(),
            expected_s,
            live: None,
        }
    }

    /// The same, serving its live page at `url`.
    pub(crate) fn with_live(self, url: Option<String>) -> Purpose {
        Purpose { live: url, ..self }
    }
}

impl From<&str> for Purpose {
    fn from(what: &str) -> Purpose {
        Purpose::new(what, None)
    }
}

impl From<&String> for Purpose {
    fn from(what: &String) -> Purpose {
        Purpose::new(what.as_str(), None)
    }
}
