//! The live page's HTTP server (hyper, HTTP/1.1, GET only): `/` the page, `/data` its JSON,
//! `/metrics` the OpenMetrics text, `/run/<file>` the run directory's report files, read-only.
//! With a token every request must carry it (`?token=`, `Authorization: Bearer`, the
//! `X-Perflab-Token` header, or the cookie the first good request sets), else 401; on a
//! loopback bind the `Host` header must name the loopback (a DNS-rebinding page cannot read it).
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::feed::Feed;

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serve {
    /// The page, `/data`, `/metrics` and the report files.
    Page,
    /// Only `/metrics` (`--prometheus` on its own address).
    Metrics,
}

/// What a server shows: a run's feed, or the trainer's room.
#[derive(Clone)]
pub enum Source {
    Run(Feed),
    Room(super::room::Room),
}

struct Ctx {
    source: Source,
    token: Option<String>,
    serve: Serve,
    /// Loopback bind: the `Host` header must name it.
    loopback: bool,
    port: u16,
}

/// A running listener; it stops when `stop` is called or the handle is dropped with the runtime.
pub struct Server {
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Server {
    /// Bind `addr` (port 0: a free port the kernel picks) and serve `feed`.
    pub async fn start(
        addr: SocketAddr,
        token: Option<String>,
        serve: Serve,
        source: Source,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let ctx = Arc::new(Ctx {
            source,
            token,
            serve,
            loopback: addr.ip().is_loopback(),
            port: addr.port(),
        });
        let (stop, mut rx) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                let conn = tokio::select! {
                    c = listener.accept() => c,
                    _ = rx.changed() => break,
                };
                let Ok((stream, _)) = conn else { continue };
                let ctx = ctx.clone();
                let mut rx = rx.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let ctx = ctx.clone();
                        async move {
                            Ok::<_, Infallible>(match &ctx.source {
                                Source::Run(feed) => feed.charged(|| handle(&ctx, &req)),
                                Source::Room(_) => handle(&ctx, &req),
                            })
                        }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        _ = rx.changed() => conn.as_mut().graceful_shutdown(),
                    }
                });
            }
        });
        Ok(Server { addr, stop, task })
    }

    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

type Resp = Response<Full<Bytes>>;

fn reply(status: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Resp {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(ctype) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    // the page and the reports are self-contained: nothing may load from elsewhere
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
        ),
    );
    r
}

fn text(status: StatusCode, body: &str) -> Resp {
    reply(status, "text/plain; charset=utf-8", body.to_owned())
}

/// The token the request carries, from the query, a header or the cookie.
fn presented<B>(req: &Request<B>) -> Option<String> {
    let q = req.uri().query().unwrap_or("");
    let from_query = q
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(percent_decode);
    let hdr = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    from_query
        .or_else(|| hdr("x-perflab-token").map(str::to_owned))
        .or_else(|| {
            hdr("authorization")
                .and_then(|a| a.strip_prefix("Bearer "))
                .map(str::to_owned)
        })
        .or_else(|| {
            hdr("cookie")?
                .split(';')
                .find_map(|c| c.trim().strip_prefix("perflab_live="))
                .map(str::to_owned)
        })
}

/// Compare in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// `%XX` decoded (a bad escape stays as it is); `+` is not a space in a path.
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn host_ok(ctx: &Ctx, host: Option<&str>) -> bool {
    if !ctx.loopback {
        return true;
    }
    let Some(host) = host else { return false };
    let p = ctx.port;
    [
        format!("127.0.0.1:{p}"),
        format!("localhost:{p}"),
        format!("[::1]:{p}"),
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(host))
}

fn handle<B>(ctx: &Ctx, req: &Request<B>) -> Resp {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n");
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok());
    if !host_ok(ctx, host) {
        return text(
            StatusCode::FORBIDDEN,
            "403: Host must name the loopback address\n",
        );
    }
    let mut set_cookie = None;
    if let Some(want) = &ctx.token {
        match presented(req) {
            Some(t) if same(&t, want) => set_cookie = Some(want.clone()),
            _ => {
                return text(
                    StatusCode::UNAUTHORIZED,
                    "401: this live page needs its token: add ?token=TOKEN (printed by perflab run) \
                     or send it as `Authorization: Bearer TOKEN`\n",
                );
            }
        }
    }
    let path = req.uri().path();
    let since = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("since="))
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite());
    let mut r = route(ctx, path, since);
    if let Some(t) = set_cookie
        && let Ok(v) = HeaderValue::from_str(&format!(
            "perflab_live={t}; HttpOnly; SameSite=Strict; Path=/"
        ))
    {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

fn route(ctx: &Ctx, path: &str, since: Option<f64>) -> Resp {
    let feed = match &ctx.source {
        Source::Run(feed) => feed,
        Source::Room(room) => {
            return match path {
                "/" => reply(
                    StatusCode::OK,
                    "text/html; charset=utf-8",
                    super::room::PAGE,
                ),
                "/data" => reply(StatusCode::OK, "application/json", room.json()),
                _ => text(StatusCode::NOT_FOUND, "404\n"),
            };
        }
    };
    match (ctx.serve, path) {
        (_, "/metrics") => reply(
            StatusCode::OK,
            super::prom::CONTENT_TYPE,
            feed.with(super::prom::render),
        ),
        (Serve::Metrics, _) => text(StatusCode::NOT_FOUND, "404: only /metrics here\n"),
        (Serve::Page, "/") => reply(
            StatusCode::OK,
            "text/html; charset=utf-8",
            feed.with(|d| super::page::html(&d.run)),
        ),
        (Serve::Page, "/data") => reply(
            StatusCode::OK,
            "application/json",
            feed.with(|d| match since {
                Some(t) => serde_json::to_vec(&d.since(t)),
                None => serde_json::to_vec(d),
            })
            .unwrap_or_default(),
        ),
        (Serve::Page, p) => match p.strip_prefix("/run/") {
            Some(rel) => run_file(feed.run_dir().as_deref(), rel),
            None => text(StatusCode::NOT_FOUND, "404\n"),
        },
    }
}

/// The report files a run directory holds, by extension, and their types.
const SERVED: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("txt", "text/plain; charset=utf-8"),
    ("md", "text/plain; charset=utf-8"),
    ("json", "application/json"),
];

/// A file of the run directory by its path in it, or why not: no escape (`..`, an absolute
/// path, a backslash, a NUL, a hidden name, a symlink out), only regular report files.
pub(crate) fn resolve(dir: &Path, rel: &str) -> Result<(PathBuf, &'static str), StatusCode> {
    let rel = percent_decode(rel);
    let bad = rel.is_empty()
        || rel.starts_with('/')
        || rel.contains(['\\', '\0'])
        || rel.split('/').any(|c| c.is_empty() || c.starts_with('.'));
    if bad {
        return Err(StatusCode::BAD_REQUEST);
    }
    let ext = rel.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let Some((_, ctype)) = SERVED.iter().find(|(e, _)| *e == ext) else {
        return Err(StatusCode::NOT_FOUND);
    };
    let root = dir.canonicalize().map_err(|_| StatusCode::NOT_FOUND)?;
    let p = root
        .join(&rel)
        .canonicalize()
        .map_err(|_| StatusCode::NOT_FOUND)?;
    if !p.starts_with(&root) || !p.is_file() {
        return Err(StatusCode::NOT_FOUND);
    }
    Ok((p, ctype))
}

fn run_file(dir: Option<&Path>, rel: &str) -> Resp {
    let Some(dir) = dir else {
        return text(StatusCode::NOT_FOUND, "404: no run directory yet\n");
    };
    match resolve(dir, rel) {
        Ok((p, ctype)) => match std::fs::read(&p) {
            Ok(body) => reply(StatusCode::OK, ctype, body),
            Err(_) => text(StatusCode::NOT_FOUND, "404\n"),
        },
        Err(s) => text(s, &format!("{}\n", s.as_u16())),
    }
}
