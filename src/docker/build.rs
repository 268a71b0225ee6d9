//! Image builds with the classic builder (Docker 20.10, no BuildKit) from in-memory tar contexts,
//! stoppable (the running step's intermediate container removed), and image inspection.
use super::engine::Docker;
use super::error::{DockerError, Result};
use bollard::query_parameters::{BuildImageOptionsBuilder, BuilderVersion};
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};

/// What a build reports as it goes.
#[derive(Debug, Clone)]
pub(crate) enum BuildEvent {
    /// A new Dockerfile step started (`Step 3/7 : RUN apt-get ...`).
    Step(String),
    /// Any output line (apt, compiler, ...).
    Line(String),
}

/// What the engine knows about a local image.
#[derive(Debug, Clone)]
pub(crate) struct ImageInfo {
    pub id: String,
    pub size_bytes: i64,
}

/// After a cancel, read the build's stream for up to 700 ms until it names the running step's
/// container.
async fn drain_for_container<S>(stream: &mut S, running: &mut Option<String>)
where
    S: futures_util::Stream<
            Item = std::result::Result<bollard::models::BuildInfo, bollard::errors::Error>,
        > + Unpin,
{
    let deadline = tokio::time::sleep(std::time::Duration::from_millis(700));
    tokio::pin!(deadline);
    while running.is_none() {
        tokio::select! {
            item = stream.next() => match item {
                Some(Ok(info)) => {
                    for line in info.stream.as_deref().unwrap_or("").lines() {
                        track_container(line.trim_end(), running);
                    }
                }
                _ => return,
            },
            () = &mut deadline => return,
        }
    }
}

impl Docker {
    /// Build `tag` from a tar context (with `Dockerfile` at its root), every step anew when
    /// `no_cache` (`build --refresh`: the apt layers fetch today's archive). `on_event` sees every
    /// step and output line; on failure the error names the failing step and the last lines.
    /// When `cancel` fires the build stops: the request is dropped (the engine cancels the
    /// build) and the step's intermediate container is removed before this returns.
    pub(crate) async fn build_image(
        &self,
        context_tar: Vec<u8>,
        (tag, no_cache): (&str, bool),
        build_args: &BTreeMap<String, String>,
        labels: &BTreeMap<String, String>,
        cancel: &impl Cancel,
        mut on_event: impl FnMut(BuildEvent),
    ) -> Result<()> {
        let args: HashMap<String, String> = build_args.clone().into_iter().collect();
        let labels: HashMap<String, String> = labels.clone().into_iter().collect();
        let opts = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(tag)
            .rm(true)
            .forcerm(true)
            .nocache(no_cache)
            .buildargs(&args)
            .labels(&labels)
            .version(BuilderVersion::BuilderV1)
            .build();
        let body = bollard::body_full(context_tar.into());
        let mut stream = self.raw().build_image(opts, None, Some(body));
        let mut step = String::from("(before the first step)");
        let mut tail: std::collections::VecDeque<String> = Default::default();
        let mut id: Option<String> = None;
        // The container of the step running now (` ---> Running in <id>`).
        let mut running: Option<String> = None;
        let stop = cancel.cancelled();
        tokio::pin!(stop);
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = &mut stop => {
                    if running.is_none() {
                        // The step's container may be announced in a line still in flight
                        // (` ---> Running in <id>`): read on briefly so it is not left behind.
                        drain_for_container(&mut stream, &mut running).await;
                    }
                    drop(stream);
                    self.remove_build_container(running.as_deref()).await;
                    return Err(DockerError::Cancelled {
                        tag: tag.to_string(),
                        step,
                        reason: "interrupted".into(),
                    });
                }
            };
            let Some(item) = item else { break };
            let info = match item {
                Ok(i) => i,
                Err(bollard::errors::Error::DockerStreamError { error }) => {
                    return Err(build_error(tag, &step, error, &tail));
                }
                Err(e) => return Err(DockerError::api(format!("build {tag}"), e)),
            };
            if let Some(s) = info.stream.as_deref() {
                let seen = StreamState {
                    step: &mut step,
                    tail: &mut tail,
                    running: &mut running,
                    id: &mut id,
                };
                read_stream_lines(s, seen, &mut on_event);
            }
            if let Some(s) = info.status.as_deref() {
                on_event(BuildEvent::Line(s.to_string()));
            }
            if let Some(err) = info.error_detail {
                let msg = err.message.unwrap_or_else(|| "unknown build error".into());
                return Err(build_error(tag, &step, msg, &tail));
            }
            if let Some(i) = info.aux.and_then(|a| a.id) {
                id = Some(i);
            }
        }
        // The classic builder prints "Successfully built <short id>"; resolve the full id.
        let info = self.image_info(tag).await?.ok_or_else(|| {
            build_error(
                tag,
                &step,
                "the build ended without producing the image".into(),
                &tail,
            )
        })?;
        let _ = (id, info);
        Ok(())
    }

    /// Remove the intermediate container of a stopped build (the engine may still be running
    /// the step's command: wait until the container is gone, up to 2 s).
    async fn remove_build_container(&self, id: Option<&str>) {
        let Some(id) = id else { return };
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_secs(2) {
            let _ = self.remove_container(id).await;
            match self.inspect_container(id).await {
                Err(e) if e.is_not_found() => return,
                _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
            }
        }
    }

    /// Inspect a local image; `None` when it does not exist.
    pub(crate) async fn image_info(&self, name: &str) -> Result<Option<ImageInfo>> {
        match self.raw().inspect_image(name).await {
            Ok(i) => Ok(Some(ImageInfo {
                id: i.id.unwrap_or_default(),
                size_bytes: i.size.unwrap_or(0),
            })),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(DockerError::api(format!("inspect image {name}"), e)),
        }
    }
}

/// Follow the classic builder's intermediate containers: ` ---> Running in <id>` starts one,
/// `Removing intermediate container <id>` ends it.
fn track_container(line: &str, running: &mut Option<String>) {
    let line = line.trim_start_matches([' ', '-', '>']).trim();
    if let Some(id) = line.strip_prefix("Running in ") {
        *running = Some(id.trim().to_string());
    } else if line.starts_with("Removing intermediate container")
        || line.starts_with("Removed intermediate container")
    {
        *running = None;
    }
}

fn build_error(
    tag: &str,
    step: &str,
    message: String,
    tail: &std::collections::VecDeque<String>,
) -> DockerError {
    let tail: Vec<&str> = tail.iter().map(|s| s.as_str()).collect();
    DockerError::Build {
        tag: tag.to_string(),
        step: step.to_string(),
        message,
        tail: tail[tail.len().saturating_sub(15)..].join("\n"),
    }
}

/// What a build's output lines have told so far: the step running, its container, the built
/// image's id and the last 30 lines (for the error).
struct StreamState<'a> {
    step: &'a mut String,
    tail: &'a mut std::collections::VecDeque<String>,
    running: &'a mut Option<String>,
    id: &'a mut Option<String>,
}

/// One `stream` chunk of the build's output, line by line.
fn read_stream_lines(s: &str, seen: StreamState<'_>, on_event: &mut impl FnMut(BuildEvent)) {
    for line in s.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("Step ") {
            *seen.step = line.to_string();
            on_event(BuildEvent::Step(line.to_string()));
        } else {
            on_event(BuildEvent::Line(line.to_string()));
        }
        track_container(line, seen.running);
        if let Some(rest) = line.strip_prefix("Successfully built ") {
            *seen.id = Some(rest.trim().to_string());
        }
        seen.tail.push_back(line.to_string());
        if seen.tail.len() > 30 {
            seen.tail.pop_front();
        }
    }
}

/// Something that can ask a long engine call (an image build) to stop: Ctrl-C for the
/// commands (`session::signals::Interrupt` implements it), [`Never`] otherwise.
pub(crate) trait Cancel: Send + Sync {
    /// Resolves when the call must stop.
    fn cancelled(&self) -> impl std::future::Future<Output = ()> + Send;
}

/// A [`Cancel`] that never fires.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Never;

impl Cancel for Never {
    async fn cancelled(&self) {
        std::future::pending::<()>().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intermediate_containers_are_followed() {
        let mut r = None;
        track_container(" ---> Running in 3f2a9c0d1e4b", &mut r);
        assert_eq!(r.as_deref(), Some("3f2a9c0d1e4b"));
        track_container("Get:1 http://deb.debian.org trixie InRelease", &mut r);
        assert_eq!(r.as_deref(), Some("3f2a9c0d1e4b"));
        track_container("Removing intermediate container 3f2a9c0d1e4b", &mut r);
        assert_eq!(r, None);
    }
}
