//! Which Docker engine to talk to: the local default (`DOCKER_HOST` or the unix socket), a unix
//! socket path, a plain TCP endpoint, an ssh target (the remote socket forwarded over `ssh -L`,
//! since this build's bollard has no ssh transport), or a Docker context name resolved from
//! `~/.docker/contexts`. Parsing is pure; connecting lives in `Docker::connect_to`.
use std::path::{Path, PathBuf};

/// A Docker engine endpoint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "address", rename_all = "lowercase")]
pub enum Endpoint {
    /// `DOCKER_HOST` or `/var/run/docker.sock`.
    Local,
    /// A unix socket path.
    Unix(String),
    /// `host:port`, plain HTTP.
    Tcp(String),
    /// `[user@]host[:port]`, reached through `ssh -L <local socket>:/var/run/docker.sock`.
    Ssh(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Local => write!(f, "local"),
            Endpoint::Unix(p) => write!(f, "unix://{p}"),
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
            Endpoint::Ssh(t) => write!(f, "ssh://{t}"),
        }
    }
}

/// Why an endpoint string is not usable (the caller names the flag).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum EndpointError {
    #[error("`{0}` is empty after the scheme")]
    Empty(String),
    #[error(
        "`{0}`: TLS (https:// or DOCKER_TLS_VERIFY) is not built into perflab; reach a remote engine over ssh (ssh://user@box) or a forwarded socket (unix://...)"
    )]
    Tls(String),
    #[error("`{0}`: tcp:// needs host:port, e.g. tcp://10.0.0.5:2375")]
    TcpPort(String),
    #[error("`{0}`: unix:// needs an absolute socket path, e.g. unix:///var/run/docker.sock")]
    UnixPath(String),
    #[error(
        "`{url}`: unknown scheme `{scheme}` (use tcp://, unix://, ssh:// or a docker context name)"
    )]
    Scheme { url: String, scheme: String },
    #[error(
        "`{name}` is not a Docker context under {dir} (known: {known}); create it with `docker context create`, or give tcp://, unix:// or ssh://"
    )]
    NoContext {
        name: String,
        dir: String,
        known: String,
    },
    #[error("docker context `{name}`: {detail}")]
    BadContext { name: String, detail: String },
}

/// Parse an endpoint: `tcp://h:p`, `http://h:p`, `unix:///path`, `ssh://[user@]host[:port]`,
/// `local`/`default`, or a context name (looked up in `contexts_dir`).
pub(crate) fn parse(s: &str, contexts_dir: &Path) -> Result<Endpoint, EndpointError> {
    let s = s.trim();
    if s == "local" || s == "default" {
        return Ok(Endpoint::Local);
    }
    if let Some((scheme, rest)) = s.split_once("://") {
        if rest.is_empty() {
            return Err(EndpointError::Empty(s.into()));
        }
        return match scheme {
            "tcp" | "http" => {
                let hostport = rest.trim_end_matches('/');
                let ok = hostport
                    .rsplit_once(':')
                    .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
                if !ok || hostport.contains('/') {
                    return Err(EndpointError::TcpPort(s.into()));
                }
                Ok(Endpoint::Tcp(hostport.into()))
            }
            "https" => Err(EndpointError::Tls(s.into())),
            "unix" => {
                if !rest.starts_with('/') {
                    return Err(EndpointError::UnixPath(s.into()));
                }
                Ok(Endpoint::Unix(rest.into()))
            }
            "ssh" => {
                let t = rest.trim_end_matches('/');
                if t.contains('/') || t.starts_with('@') || t.ends_with('@') {
                    return Err(EndpointError::Empty(s.into()));
                }
                Ok(Endpoint::Ssh(t.into()))
            }
            other => Err(EndpointError::Scheme {
                url: s.into(),
                scheme: other.into(),
            }),
        };
    }
    context(s, contexts_dir)
}

/// `$DOCKER_CONFIG/contexts` or `~/.docker/contexts`.
pub(crate) fn default_contexts_dir() -> PathBuf {
    let base = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))
        .unwrap_or_else(|| PathBuf::from("/root/.docker"));
    base.join("contexts")
}

/// Resolve a Docker context: `meta/<sha256(name)>/meta.json` with `Endpoints.docker.Host`.
fn context(name: &str, dir: &Path) -> Result<Endpoint, EndpointError> {
    let meta_dir = dir.join("meta");
    let mut known = Vec::new();
    for e in std::fs::read_dir(&meta_dir).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("meta.json")) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let n = v["Name"].as_str().unwrap_or_default().to_string();
        if n != name {
            known.push(n);
            continue;
        }
        let bad = |detail: String| EndpointError::BadContext {
            name: name.into(),
            detail,
        };
        let host = v
            .pointer("/Endpoints/docker/Host")
            .and_then(|h| h.as_str())
            .ok_or_else(|| bad("no Endpoints.docker.Host in meta.json".into()))?;
        if dir.join("tls").join(e.file_name()).exists() {
            return Err(bad(format!(
                "its endpoint {host} uses TLS material, which perflab cannot use; reach the engine over ssh:// instead"
            )));
        }
        if host.starts_with("tcp://") || host.starts_with("unix://") || host.starts_with("ssh://") {
            return parse(host, dir).map_err(|e| bad(e.to_string()));
        }
        return Err(bad(format!("unsupported endpoint {host}")));
    }
    known.sort();
    Err(EndpointError::NoContext {
        name: name.into(),
        dir: dir.display().to_string(),
        known: if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        },
    })
}

impl Endpoint {
    /// The host part of a TCP or ssh endpoint (no user, no port).
    pub(crate) fn host(&self) -> Option<String> {
        match self {
            Endpoint::Tcp(a) => a
                .rsplit_once(':')
                .map(|(h, _)| h.trim_matches(['[', ']']).into()),
            Endpoint::Ssh(t) => {
                let h = t.rsplit_once('@').map(|(_, h)| h).unwrap_or(t);
                Some(h.split(':').next().unwrap_or(h).into())
            }
            _ => None,
        }
    }

    /// Does the engine run on this machine as far as the address tells (local socket,
    /// loopback TCP)? An ssh-forwarded unix socket looks local too; the caller cannot know.
    pub(crate) fn is_on_this_machine(&self) -> bool {
        match self {
            Endpoint::Local | Endpoint::Unix(_) => true,
            Endpoint::Tcp(_) => self.host().is_some_and(|h| {
                h == "localhost"
                    || h.parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }),
            Endpoint::Ssh(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Endpoint, EndpointError> {
        parse(s, Path::new("/nonexistent"))
    }

    #[test]
    fn schemes() {
        assert_eq!(
            p("tcp://127.0.0.1:23750"),
            Ok(Endpoint::Tcp("127.0.0.1:23750".into()))
        );
        assert_eq!(p("http://box:2375/"), Ok(Endpoint::Tcp("box:2375".into())));
        assert_eq!(
            p("unix:///var/run/docker.sock"),
            Ok(Endpoint::Unix("/var/run/docker.sock".into()))
        );
        assert_eq!(p("ssh://lab@box"), Ok(Endpoint::Ssh("lab@box".into())));
        assert_eq!(p("local"), Ok(Endpoint::Local));
        assert_eq!(
            p("tcp://127.0.0.1:23750").unwrap().to_string(),
            "tcp://127.0.0.1:23750"
        );
    }

    #[test]
    fn bad_values_say_what_to_write() {
        let e = p("tcp://box").unwrap_err().to_string();
        assert!(e.contains("host:port"), "{e}");
        let e = p("tcp://box:99999").unwrap_err().to_string();
        assert!(e.contains("host:port"), "{e}");
        let e = p("https://box:2376").unwrap_err().to_string();
        assert!(e.contains("ssh://"), "{e}");
        let e = p("unix://relative.sock").unwrap_err().to_string();
        assert!(e.contains("absolute"), "{e}");
        let e = p("ftp://x").unwrap_err().to_string();
        assert!(e.contains("unknown scheme `ftp`"), "{e}");
        let e = p("tcp://").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = p("mybox").unwrap_err().to_string();
        assert!(
            e.contains("not a Docker context") && e.contains("docker context create"),
            "{e}"
        );
    }

    #[test]
    fn hosts_and_locality() {
        assert_eq!(
            p("ssh://lab@box:2222").unwrap().host().as_deref(),
            Some("box")
        );
        assert_eq!(
            p("tcp://10.0.0.5:2375").unwrap().host().as_deref(),
            Some("10.0.0.5")
        );
        assert!(p("tcp://127.0.0.1:23750").unwrap().is_on_this_machine());
        assert!(!p("tcp://10.0.0.5:2375").unwrap().is_on_this_machine());
        assert!(!p("ssh://box").unwrap().is_on_this_machine());
        assert!(Endpoint::Local.is_on_this_machine());
    }

    #[test]
    fn contexts_resolve_from_meta_json() {
        let dir = tempfile::tempdir().unwrap();
        let meta = dir.path().join("meta/0123abcd");
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join("meta.json"),
            r#"{"Name":"loadbox","Metadata":{},"Endpoints":{"docker":{"Host":"ssh://lab@10.0.0.7","SkipTLSVerify":false}}}"#,
        )
        .unwrap();
        assert_eq!(
            parse("loadbox", dir.path()),
            Ok(Endpoint::Ssh("lab@10.0.0.7".into()))
        );
        let e = parse("other", dir.path()).unwrap_err().to_string();
        assert!(e.contains("known: loadbox"), "{e}");
        // A context with TLS material is refused with the alternative named.
        std::fs::create_dir_all(dir.path().join("tls/0123abcd/docker")).unwrap();
        let e = parse("loadbox", dir.path()).unwrap_err().to_string();
        assert!(e.contains("TLS") && e.contains("ssh://"), "{e}");
    }
}
