//! `--live [ADDR]`, `--live-token TOKEN`, `--prometheus [ADDR]`, `--live-linger S`: the flags
//! (flattened into `perflab run`'s) and their check into [`LiveOptions`] (bad input: exit 2,
//! nothing started). A non-loopback address needs a token; without `--live-token` one is made.
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use clap::Args;

use crate::error::InvalidInput;

/// The address `--live` and `--prometheus` take without a value: the loopback, a free port.
pub(crate) const DEFAULT_ADDR: &str = "127.0.0.1:0";

#[derive(Debug, Clone, Default, Args)]
pub struct LiveArgs {
    /// Serve a live page of the run (and its state as JSON at /data) on ADDR: IP, IP:PORT or :PORT [default: 127.0.0.1, a free port]; its URL is printed at the start, it stops with the run
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_ADDR)]
    pub live: Option<String>,
    /// The token every request to a --live or --prometheus server must carry (?token=TOKEN or `Authorization: Bearer TOKEN`); required off the loopback, made and printed when not given
    #[arg(long, value_name = "TOKEN", env = "PERFLAB_LIVE_TOKEN")]
    pub live_token: Option<String>,
    /// Serve the live state as OpenMetrics text at /metrics on ADDR (names perflab_*, labels run, experiment, step, role) [default: 127.0.0.1, a free port]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_ADDR)]
    pub prometheus: Option<String>,
    /// Seconds the live page stays up after the run, for its link to report.html (Ctrl-C ends it sooner)
    #[arg(long, value_name = "S", default_value_t = 10)]
    pub live_linger: u64,
}

/// `perflab status --live [ADDR]`: the trainer's room.
#[derive(Debug, Clone, Default, Args)]
pub struct RoomArgs {
    /// Serve the room as a page on ADDR until Ctrl-C: the host lock's holder and queue with their expected ends, each one's live page (`run --live`) and the runner's step [default: 127.0.0.1, a free port]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_ADDR)]
    pub live: Option<String>,
    /// The token every request to the room's page must carry; required off the loopback, made and printed when not given
    #[arg(long, value_name = "TOKEN", env = "PERFLAB_LIVE_TOKEN")]
    pub live_token: Option<String>,
}

impl RoomArgs {
    /// The checked options, as `run`'s: `None` without `--live`.
    pub(crate) fn options(&self) -> anyhow::Result<Option<LiveOptions>> {
        LiveArgs {
            live: self.live.clone(),
            live_token: self.live_token.clone(),
            prometheus: None,
            live_linger: 0,
        }
        .options()
    }
}

/// The checked flags.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveOptions {
    pub page: Option<SocketAddr>,
    pub prometheus: Option<SocketAddr>,
    pub token: Option<String>,
    /// The token was made here (print it).
    pub token_made: bool,
    pub linger_s: u64,
}

/// `IP`, `IP:PORT`, `[IPv6]:PORT`, `:PORT` or `localhost[:PORT]`; the port 0 (none given): a
/// free one.
pub(crate) fn parse_addr(flag: &str, s: &str) -> Result<SocketAddr, InvalidInput> {
    let s = s.trim();
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let port = |p: &str| p.parse::<u16>().ok();
    let parsed = if let Ok(a) = s.parse::<SocketAddr>() {
        Some(a)
    } else if let Ok(ip) = s.parse::<IpAddr>() {
        Some(SocketAddr::new(ip, 0))
    } else if s == "localhost" {
        Some(SocketAddr::new(local, 0))
    } else if let Some(p) = s.strip_prefix("localhost:").or_else(|| s.strip_prefix(':')) {
        port(p).map(|p| SocketAddr::new(local, p))
    } else {
        None
    };
    parsed.ok_or_else(|| {
        InvalidInput(format!(
            "{flag} {s:?}: not an address; give IP, IP:PORT or :PORT (e.g. {flag} 0.0.0.0:8090), \
             or {flag} alone for 127.0.0.1 and a free port"
        ))
    })
}

/// A token: 8 to 256 URL-safe characters (it travels in a URL).
fn check_token(t: &str) -> Result<(), InvalidInput> {
    let ok = (8..=256).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(InvalidInput(
            "--live-token: give 8 to 256 characters of A-Z a-z 0-9 - . _ ~ (it goes in a URL), \
             or leave it out and perflab makes one"
                .into(),
        ))
    }
}

/// 128 random bits from the kernel, as hex.
fn make_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(hex::encode(b))
}

impl LiveArgs {
    /// The checked options; `None` without `--live` or `--prometheus`.
    pub(crate) fn options(&self) -> anyhow::Result<Option<LiveOptions>> {
        let page = self
            .live
            .as_deref()
            .map(|a| parse_addr("--live", a))
            .transpose()?;
        let prometheus = self
            .prometheus
            .as_deref()
            .map(|a| parse_addr("--prometheus", a))
            .transpose()?;
        if page.is_none() && prometheus.is_none() {
            if self.live_token.is_some() {
                return Err(InvalidInput(
                    "--live-token without --live or --prometheus: add --live".into(),
                )
                .into());
            }
            return Ok(None);
        }
        if let Some(t) = &self.live_token {
            check_token(t)?;
        }
        let open = [page, prometheus]
            .iter()
            .flatten()
            .any(|a| !a.ip().is_loopback());
        let token_made = open && self.live_token.is_none();
        let token = match &self.live_token {
            Some(t) => Some(t.clone()),
            None if open => Some(make_token()?),
            None => None,
        };
        Ok(Some(LiveOptions {
            page,
            prometheus,
            token,
            token_made,
            linger_s: self.live_linger,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(live: Option<&str>, token: Option<&str>) -> LiveArgs {
        LiveArgs {
            live: live.map(str::to_owned),
            live_token: token.map(str::to_owned),
            prometheus: None,
            live_linger: 10,
        }
    }

    #[test]
    fn addresses_default_to_the_loopback_and_a_free_port() {
        let p = |s| parse_addr("--live", s).unwrap().to_string();
        assert_eq!(p(DEFAULT_ADDR), "127.0.0.1:0");
        assert_eq!(p("0.0.0.0"), "0.0.0.0:0");
        assert_eq!(p(":8090"), "127.0.0.1:8090");
        assert_eq!(p("localhost:8090"), "127.0.0.1:8090");
        assert_eq!(p("[::1]:9"), "[::1]:9");
        let e = parse_addr("--live", "example.org").unwrap_err().0;
        assert!(e.contains("--live \"example.org\": not an address"), "{e}");
    }

    #[test]
    fn off_the_loopback_a_token_is_required_and_made_when_not_given() {
        assert_eq!(args(None, None).options().unwrap(), None);
        let o = args(Some(DEFAULT_ADDR), None).options().unwrap().unwrap();
        assert_eq!((o.token, o.token_made), (None, false));
        let o = args(Some("0.0.0.0"), None).options().unwrap().unwrap();
        assert!(o.token_made);
        assert_eq!(o.token.as_ref().map(String::len), Some(32));
        let other = args(Some("0.0.0.0"), None).options().unwrap().unwrap();
        assert_ne!(o.token, other.token, "a fresh token each time");
        let o = args(Some("0.0.0.0"), Some("s3cret-token"))
            .options()
            .unwrap()
            .unwrap();
        assert_eq!(
            (o.token.as_deref(), o.token_made),
            (Some("s3cret-token"), false)
        );
        for bad in ["short", "has space in it", "quote\"inside__"] {
            let e = args(Some("0.0.0.0"), Some(bad)).options().unwrap_err();
            assert!(e.downcast_ref::<InvalidInput>().is_some(), "{bad}: {e}");
        }
        assert!(args(None, Some("s3cret-token")).options().is_err());
    }
}
