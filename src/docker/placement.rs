//! Where each role runs: `--host loadgen=tcp://…` (or unix://, ssh://, a Docker context name;
//! `db` and `app` together on one engine), default all on the local engine, and
//! `--publish-on IP`, the address the app's entry point (and, for a stack on another engine,
//! PostgreSQL) is published on. Parsing is pure; every
//! mistake is an `InvalidInput` naming the flag and the fix (exit 2, nothing started).
use std::net::IpAddr;
use std::path::Path;

use crate::docker::endpoint::{self, Endpoint};
use crate::error::InvalidInput;

/// The engines of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Placement {
    pub loadgen: Endpoint,
    pub db: Endpoint,
    pub app: Endpoint,
    /// Where the entry point is published (127.0.0.1 unless `--publish-on`).
    pub publish_on: String,
    /// `--publish-on` given explicitly.
    pub publish_explicit: bool,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            loadgen: Endpoint::Local,
            db: Endpoint::Local,
            app: Endpoint::Local,
            publish_on: "127.0.0.1".into(),
            publish_explicit: false,
        }
    }
}

impl Placement {
    /// The load generators run on another engine than the stack.
    pub(crate) fn loadgen_remote(&self) -> bool {
        self.loadgen != self.app
    }
}

fn bad(msg: String) -> InvalidInput {
    InvalidInput(msg)
}

/// Parse the `--host ROLE=ENDPOINT` values and `--publish-on`.
pub(crate) fn parse(
    hosts: &[String],
    publish_on: Option<&str>,
    contexts_dir: &Path,
) -> Result<Placement, InvalidInput> {
    let mut p = Placement::default();
    let mut seen: Vec<&str> = Vec::new();
    for h in hosts {
        let Some((role, ep)) = h.split_once('=') else {
            return Err(bad(format!(
                "--host `{h}`: expected ROLE=ENDPOINT, e.g. --host loadgen=tcp://10.0.0.5:2375 (roles: loadgen, db, app)"
            )));
        };
        let role = role.trim();
        if seen.contains(&role) {
            return Err(bad(format!(
                "--host `{h}`: role `{role}` is placed twice; give each role once"
            )));
        }
        let e = endpoint::parse(ep, contexts_dir)
            .map_err(|e| bad(format!("--host {role}={ep}: {e}")))?;
        match role {
            "loadgen" => p.loadgen = e,
            "db" => p.db = e,
            "app" => p.app = e,
            other => {
                let hint = ["loadgen", "db", "app"]
                    .iter()
                    .find(|r| strsim::levenshtein(r, other) <= 2)
                    .map(|r| format!(" (did you mean `{r}`?)"))
                    .unwrap_or_default();
                return Err(bad(format!(
                    "--host `{h}`: unknown role `{other}`{hint}; roles are loadgen, db, app"
                )));
            }
        }
        seen.push(role);
    }
    if let Some(ip) = publish_on {
        let addr: IpAddr = ip.trim().parse().map_err(|_| {
            bad(format!(
                "--publish-on `{ip}`: not an IP address; give an address of this machine the load generator's host can reach, e.g. --publish-on 10.0.0.4"
            ))
        })?;
        p.publish_on = addr.to_string();
        p.publish_explicit = true;
    }
    if p.db != p.app {
        return Err(bad(format!(
            "--host db={} and app={}: the database and the app must share one engine (the app reaches PostgreSQL over the lab's private network); give both the same --host, or place only the load generator elsewhere",
            p.db, p.app
        )));
    }
    if p.app != Endpoint::Local {
        let ip: IpAddr = p.publish_on.parse().expect("validated");
        if ip.is_unspecified() || (ip.is_loopback() && !p.app.is_on_this_machine()) {
            return Err(bad(format!(
                "--host app={}: the app and PostgreSQL are published on {ip}, which this machine cannot use to reach that host; give that host's address with --publish-on (e.g. --publish-on 10.0.0.6) and open its firewall for this machine and the generator's host",
                p.app
            )));
        }
    }
    if p.loadgen_remote() {
        let ip: IpAddr = p.publish_on.parse().expect("validated");
        if ip.is_unspecified() {
            return Err(bad(format!(
                "--publish-on {ip}: the generator on {} needs one address to connect to; give this machine's address on the network both hosts share, e.g. --publish-on 10.0.0.4",
                p.loadgen
            )));
        }
        if ip.is_loopback() && !p.loadgen.is_on_this_machine() {
            return Err(bad(format!(
                "--host loadgen={}: the app is published on {ip}, which that host cannot reach; give this machine's address with --publish-on (e.g. --publish-on 10.0.0.4) and open its firewall for the generator's host",
                p.loadgen
            )));
        }
    }
    if p.app == Endpoint::Local && p.publish_explicit {
        let ip: IpAddr = p.publish_on.parse().expect("validated");
        if ip.is_unspecified() {
            return Err(bad(format!(
                "--publish-on {ip}: the stack runs on this machine, and {ip} would open its entry point to every network this machine is on, with no authentication (and nginx's status page to any host on them); perflab publishes nothing for a local run. For a load generator on another host give this machine's address on the network both share, e.g. --host loadgen=ssh://box --publish-on 10.0.0.4"
            )));
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_(hosts: &[&str], publish: Option<&str>) -> Result<Placement, InvalidInput> {
        let h: Vec<String> = hosts.iter().map(|s| s.to_string()).collect();
        parse(&h, publish, Path::new("/nonexistent"))
    }

    #[test]
    fn default_is_all_local_on_loopback() {
        let p = parse_(&[], None).unwrap();
        assert_eq!(p, Placement::default());
        assert!(!p.loadgen_remote());
    }

    #[test]
    fn loadgen_on_a_loopback_forward() {
        let p = parse_(&["loadgen=tcp://127.0.0.1:23750"], None).unwrap();
        assert_eq!(p.loadgen, Endpoint::Tcp("127.0.0.1:23750".into()));
        assert!(p.loadgen_remote());
        assert_eq!(p.publish_on, "127.0.0.1");
    }

    #[test]
    fn stack_on_another_engine() {
        let ep = "tcp://127.0.0.1:23750";
        let p = parse_(&[&format!("db={ep}"), &format!("app={ep}")], None).unwrap();
        assert_eq!(p.app, Endpoint::Tcp("127.0.0.1:23750".into()));
        // The generator stays on the local engine: another engine than the stack's.
        assert!(p.loadgen_remote());
        let p = parse_(
            &[
                "db=ssh://lab@10.0.0.6",
                "app=ssh://lab@10.0.0.6",
                "loadgen=ssh://lab@10.0.0.6",
            ],
            Some("10.0.0.6"),
        )
        .unwrap();
        assert!(!p.loadgen_remote(), "everything on one other engine");
    }

    #[test]
    fn remote_box_needs_a_reachable_publish_address() {
        let e = parse_(&["loadgen=ssh://lab@10.0.0.7"], None).unwrap_err().0;
        assert!(e.contains("--publish-on"), "{e}");
        let p = parse_(&["loadgen=ssh://lab@10.0.0.7"], Some("10.0.0.4")).unwrap();
        assert_eq!(p.publish_on, "10.0.0.4");
        let e = parse_(&["loadgen=tcp://10.0.0.7:2375"], Some("0.0.0.0"))
            .unwrap_err()
            .0;
        assert!(e.contains("needs one address"), "{e}");
    }

    #[test]
    fn bad_values_name_the_flag_and_the_fix() {
        let e = parse_(&["loadgen"], None).unwrap_err().0;
        assert!(
            e.starts_with("--host `loadgen`") && e.contains("ROLE=ENDPOINT"),
            "{e}"
        );
        let e = parse_(&["loadgne=tcp://h:1"], None).unwrap_err().0;
        assert!(e.contains("did you mean `loadgen`"), "{e}");
        let e = parse_(&["loadgen=tcp://h"], None).unwrap_err().0;
        assert!(
            e.starts_with("--host loadgen=tcp://h:") && e.contains("host:port"),
            "{e}"
        );
        let e = parse_(&["loadgen=tcp://127.0.0.1:1", "loadgen=local"], None)
            .unwrap_err()
            .0;
        assert!(e.contains("twice"), "{e}");
        let e = parse_(&["db=tcp://10.0.0.7:2375"], None).unwrap_err().0;
        assert!(e.contains("must share one engine"), "{e}");
        let e = parse_(&["db=tcp://10.0.0.7:2375", "app=tcp://10.0.0.7:2375"], None)
            .unwrap_err()
            .0;
        assert!(e.contains("--publish-on"), "{e}");
        let e = parse_(&[], Some("not-an-ip")).unwrap_err().0;
        assert!(e.starts_with("--publish-on `not-an-ip`"), "{e}");
        // A local stack is never published on every interface (no remote generator either).
        for any in ["0.0.0.0", "::"] {
            let e = parse_(&[], Some(any)).unwrap_err().0;
            assert!(
                e.starts_with(&format!(
                    "--publish-on {any}: the stack runs on this machine"
                )),
                "{e}"
            );
        }
        assert!(parse_(&[], Some("127.0.0.1")).is_ok());
        // db/app on the local engine is the default, stated explicitly.
        assert!(parse_(&["db=local", "app=local"], None).is_ok());
    }
}
