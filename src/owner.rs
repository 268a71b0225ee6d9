//! Who owns a Docker object: the perflab process that created it (host name, pid, the process's
//! start time in clock ticks since boot, the boot id, and the user who invoked it: `SUDO_USER`
//! under sudo, else the uid's name), written as labels on every object, and
//! whether that owner is still alive. Only an owner on this host can be found dead (pid gone,
//! pid reused by a process started at another time, zombie, or another boot); an owner on
//! another host is never judged from here.
use std::collections::BTreeMap;

/// Label: the owner's host name.
pub(crate) const LABEL_HOST: &str = "perflab.owner.host";
/// Label: the owner's pid.
pub(crate) const LABEL_PID: &str = "perflab.owner.pid";
/// Label: the owner's start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot).
pub(crate) const LABEL_START: &str = "perflab.owner.start";
/// Label: the owner host's boot id (`/proc/sys/kernel/random/boot_id`).
pub(crate) const LABEL_BOOT: &str = "perflab.owner.boot";
/// Label: the user who invoked the owner (on a shared host, whose stack it is).
pub(crate) const LABEL_USER: &str = "perflab.owner.user";

/// The process that created an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub pid: u32,
    pub start: u64,
    pub boot: String,
    /// Who invoked it (empty for objects of a perflab that did not record it).
    pub user: String,
}

/// Is an owner alive, as seen from this host?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// Its process still runs here.
    Alive,
    /// It ran on this host and is gone (the reason says how we know).
    Dead(String),
    /// It runs (or ran) on another host: this host cannot tell.
    OtherHost,
}

/// What this host's `/proc` says about a pid (pure inputs of [`Owner::liveness_with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcState {
    /// Field 22 of `/proc/<pid>/stat`.
    pub start: u64,
    /// Field 3 (`R`, `S`, `Z`, ...).
    pub state: char,
}

impl Owner {
    /// This process.
    pub fn me() -> &'static Owner {
        static ME: std::sync::OnceLock<Owner> = std::sync::OnceLock::new();
        ME.get_or_init(|| {
            let pid = std::process::id();
            Owner {
                host: this_host(),
                pid,
                start: proc_state(pid).map(|s| s.start).unwrap_or(0),
                boot: this_boot(),
                user: invoking_user(),
            }
        })
    }

    /// The owner labels of this owner.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (LABEL_HOST.to_string(), self.host.clone()),
            (LABEL_PID.to_string(), self.pid.to_string()),
            (LABEL_START.to_string(), self.start.to_string()),
            (LABEL_BOOT.to_string(), self.boot.clone()),
            (LABEL_USER.to_string(), self.user.clone()),
        ])
    }

    /// The owner an object's labels name; `None` for objects of a perflab that wrote none.
    pub(crate) fn from_labels(labels: &BTreeMap<String, String>) -> Option<Owner> {
        Some(Owner {
            host: labels.get(LABEL_HOST)?.clone(),
            pid: labels.get(LABEL_PID)?.parse().ok()?,
            start: labels.get(LABEL_START)?.parse().ok()?,
            boot: labels.get(LABEL_BOOT).cloned().unwrap_or_default(),
            user: labels.get(LABEL_USER).cloned().unwrap_or_default(),
        })
    }

    /// Is this owner alive, judged from this host's `/proc`?
    pub fn liveness(&self) -> Liveness {
        self.liveness_with(&this_host(), &this_boot(), proc_state)
    }

    /// [`Owner::liveness`] with this host's name, boot id and `/proc` given (pure, for tests).
    pub(crate) fn liveness_with(
        &self,
        host: &str,
        boot: &str,
        proc: impl Fn(u32) -> Option<ProcState>,
    ) -> Liveness {
        if self.host != host {
            return Liveness::OtherHost;
        }
        if !self.boot.is_empty() && !boot.is_empty() && self.boot != boot {
            return Liveness::Dead("the host rebooted since".into());
        }
        match proc(self.pid) {
            None => Liveness::Dead(format!("pid {} is gone", self.pid)),
            Some(p) if p.start != self.start => Liveness::Dead(format!(
                "pid {} is now another process (started at tick {}, the owner at {})",
                self.pid, p.start, self.start
            )),
            Some(p) if matches!(p.state, 'Z' | 'X' | 'x') => {
                Liveness::Dead(format!("pid {} is a zombie", self.pid))
            }
            Some(_) => Liveness::Alive,
        }
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.user.as_str() {
            "" => write!(f, "pid {} on {}", self.pid, self.host),
            u => write!(f, "{u}'s pid {} on {}", self.pid, self.host),
        }
    }
}

/// The user who invoked perflab: `SUDO_USER` when root runs it through sudo (the workshop
/// participant, not root), else the name of the real uid (`uid N` when it has none).
pub fn invoking_user() -> String {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    user_of(uid, std::env::var("SUDO_USER").ok(), &name_of_uid)
}

/// [`invoking_user`] with the uid, `SUDO_USER` and the passwd look-up given (pure, for tests).
pub(crate) fn user_of(
    uid: u32,
    sudo_user: Option<String>,
    name: &dyn Fn(u32) -> Option<String>,
) -> String {
    let sudo = sudo_user.filter(|u| uid == 0 && !u.is_empty() && u.len() <= 64);
    let user = sudo
        .or_else(|| name(uid))
        .unwrap_or_else(|| format!("uid {uid}"));
    // a label value: printable, no control characters
    user.chars().filter(|c| !c.is_control()).collect()
}

/// The login name of `uid` from `/etc/passwd` (no NSS: a workshop host's local users).
fn name_of_uid(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.get(2)?.parse::<u32>().ok()? == uid).then(|| f[0].to_string())
    })
}

/// This host's name (`/proc/sys/kernel/hostname`).
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

fn this_boot() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// State and start time of `pid` from `/proc/<pid>/stat`; `None` when there is no such process.
pub fn proc_state(pid: u32) -> Option<ProcState> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// The user ids of `pid` (real, effective, saved, filesystem: `Uid:` of `/proc/<pid>/status`);
/// empty when there is no such process.
pub(crate) fn proc_uids(pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|u| {
            u.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Fields 3 and 22 of a `/proc/<pid>/stat` line (the command may hold spaces and parentheses:
/// the fields start after the last `)`).
pub(crate) fn parse_stat(stat: &str) -> Option<ProcState> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcState {
        state: f.first()?.chars().next()?,
        start: f.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner {
            host: "box".into(),
            pid: 42,
            start: 1000,
            boot: "b1".into(),
            user: "alice".into(),
        }
    }

    #[test]
    fn the_invoking_user_is_sudos_caller_else_the_uid() {
        let names = |uid: u32| (uid == 1000).then(|| "alice".to_string());
        assert_eq!(user_of(1000, None, &names), "alice");
        assert_eq!(user_of(0, Some("bob".into()), &names), "bob");
        // SUDO_USER counts only for root (a user cannot claim to be another by setting it)
        assert_eq!(user_of(1000, Some("bob".into()), &names), "alice");
        assert_eq!(user_of(4242, None, &names), "uid 4242");
        assert_eq!(user_of(0, Some("b\u{1b}[2Job".into()), &names), "b[2Job");
    }

    fn running(start: u64, state: char) -> impl Fn(u32) -> Option<ProcState> {
        move |_| Some(ProcState { start, state })
    }

    #[test]
    fn liveness_from_proc() {
        let o = owner();
        assert_eq!(
            o.liveness_with("box", "b1", running(1000, 'S')),
            Liveness::Alive
        );
        assert!(matches!(
            o.liveness_with("box", "b1", |_| None),
            Liveness::Dead(r) if r.contains("gone")
        ));
        assert!(matches!(
            o.liveness_with("box", "b1", running(2000, 'S')),
            Liveness::Dead(r) if r.contains("another process")
        ));
        assert!(matches!(
            o.liveness_with("box", "b1", running(1000, 'Z')),
            Liveness::Dead(r) if r.contains("zombie")
        ));
        assert!(matches!(
            o.liveness_with("box", "b2", running(1000, 'S')),
            Liveness::Dead(r) if r.contains("rebooted")
        ));
        // Another host's owner is never judged, even with a matching pid here.
        assert_eq!(
            o.liveness_with("other", "b1", running(1000, 'S')),
            Liveness::OtherHost
        );
    }

    #[test]
    fn labels_round_trip_and_this_process_is_alive() {
        let me = Owner::me();
        assert!(me.start > 0, "{me:?}");
        assert_eq!(Owner::from_labels(&me.labels()).as_ref(), Some(me));
        assert_eq!(me.liveness(), Liveness::Alive);
        assert_eq!(Owner::from_labels(&BTreeMap::new()), None);
    }

    #[test]
    fn stat_with_spaces_in_the_command() {
        let s = "1234 (perf lab) (x) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 3 0 98765 1000 10";
        assert_eq!(
            parse_stat(s),
            Some(ProcState {
                state: 'S',
                start: 98765
            })
        );
        let zombie = s.replace(") S ", ") Z ");
        assert_eq!(parse_stat(&zombie).map(|p| p.state), Some('Z'));
        assert_eq!(parse_stat("4242 (a) b) R"), None);
    }
}
