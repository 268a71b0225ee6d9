//! The live view of a run (`perflab run --live`, `--prometheus`): a small HTTP server that
//! serves one self-contained page, its state as JSON (`/data`) and as OpenMetrics text
//! (`/metrics`), built from what the run already reads (k6's REST API through the progress
//! line, the samplers' files): the feed (`feed`) the rig writes, the state (`state`), the page
//! (`page`), the OpenMetrics text (`prom`), the server with its token and path checks
//! (`server`) and the flags (`args`). It stops with the run.
pub mod args;
pub mod feed;
pub(crate) mod page;
pub mod prom;
pub mod room;
pub mod server;
pub mod state;

use std::time::Duration;

pub use args::LiveArgs;
pub(crate) use args::LiveOptions;
pub use feed::{Begin, Feed};
use server::{Serve, Server, Source};

/// `perflab status --live`: serve the room until Ctrl-C (its own runtime).
pub(crate) fn serve_room(o: &LiveOptions) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let room = room::Room::default();
        let refresh = room.spawn_refresh(crate::lock::lock_path());
        let addr = o
            .page
            .unwrap_or(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let s = Server::start(addr, o.token.clone(), Serve::Page, Source::Room(room))
            .await
            .map_err(|e| anyhow::anyhow!("--live {addr}: cannot listen: {e}"))?;
        crate::output::say_line(&format!(
            "the room: {} (Ctrl-C to stop)",
            url(s.addr, "/", o.token.as_deref())
        ));
        if o.token_made
            && let Some(t) = &o.token
        {
            crate::output::say_line(&format!("live token: {t}"));
        }
        let _ = tokio::signal::ctrl_c().await;
        refresh.abort();
        s.stop().await;
        anyhow::Ok(())
    })
}

/// The running servers of one command and the feed they read.
pub(crate) struct Live {
    pub feed: Feed,
    servers: Vec<Server>,
    /// The page's address as bound.
    page: Option<std::net::SocketAddr>,
    linger_s: u64,
    started: std::time::Instant,
}

/// The URL a client opens: the address as bound, the loopback spelled `127.0.0.1`, the token
/// in the query.
pub(crate) fn url(addr: std::net::SocketAddr, path: &str, token: Option<&str>) -> String {
    let q = token.map(|t| format!("?token={t}")).unwrap_or_default();
    format!("http://{addr}{path}{q}")
}

impl Live {
    /// Bind the servers `o` asks for (the URLs said on stderr, even with `--quiet`: they are
    /// what the flag is for); `label` names the run until its first load begins.
    pub(crate) async fn start(o: &LiveOptions, label: &str) -> anyhow::Result<Live> {
        let feed = Feed::new(label);
        let mut servers = Vec::new();
        let mut page = None;
        let token = o.token.as_deref();
        if let Some(addr) = o.page {
            let s = Server::start(
                addr,
                o.token.clone(),
                Serve::Page,
                Source::Run(feed.clone()),
            )
            .await
            .map_err(|e| anyhow::anyhow!("--live {addr}: cannot listen: {e}"))?;
            crate::output::say_line(&format!("live page: {}", url(s.addr, "/", token)));
            page = Some(s.addr);
            servers.push(s);
        }
        if let Some(addr) = o.prometheus {
            let s = Server::start(
                addr,
                o.token.clone(),
                Serve::Metrics,
                Source::Run(feed.clone()),
            )
            .await
            .map_err(|e| anyhow::anyhow!("--prometheus {addr}: cannot listen: {e}"))?;
            crate::output::say_line(&format!(
                "OpenMetrics: {}{}",
                url(s.addr, "/metrics", None),
                if token.is_some() {
                    " (Authorization: Bearer TOKEN)"
                } else {
                    ""
                }
            ));
            servers.push(s);
        }
        if o.token_made
            && let Some(t) = token
        {
            crate::output::say_line(&format!(
                "live token (off the loopback every request needs it): {t}"
            ));
        }
        Ok(Live {
            feed,
            servers,
            page,
            linger_s: o.linger_s,
            started: std::time::Instant::now(),
        })
    }

    /// The live page's URL without its token (what the host lock's records show the room).
    pub(crate) fn page_url(&self) -> Option<String> {
        self.page.map(|a| match a.ip().is_unspecified() {
            // bound to every address: the room reaches it by this host's name
            true => format!("http://{}:{}/", crate::owner::this_host(), a.port()),
            false => url(a, "/", None),
        })
    }

    /// The run is over: show the report's link (`report`: its path in the run directory), keep
    /// serving `linger_s` (or until `stop` resolves: Ctrl-C), then stop the servers.
    pub(crate) async fn finish(
        self,
        report: Option<&str>,
        stop: impl std::future::Future<Output = ()>,
    ) {
        self.feed.finish(report);
        if self.linger_s > 0 && !self.servers.is_empty() {
            crate::output::say_line(&format!(
                "live page: up {} s more for its link to report.html",
                self.linger_s
            ));
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(self.linger_s)) => {}
                _ = stop => {}
            }
        }
        for s in self.servers {
            s.stop().await;
        }
        let cores = |c: Duration, t: Duration| {
            format!(
                "{:.0} ms of CPU in {:.0} s: {:.5} cores",
                c.as_secs_f64() * 1000.0,
                t.as_secs_f64(),
                c.as_secs_f64() / t.as_secs_f64().max(1.0)
            )
        };
        let during = match self.feed.load_cost() {
            Some((c, t)) => format!("{} during the load, ", cores(c, t)),
            None => String::new(),
        };
        crate::output::say_line(&format!(
            "live view: its work (the state, the samplers' new lines, the requests answered) took \
             {during}{} in all",
            cores(self.feed.cost(), self.started.elapsed())
        ));
    }
}
