//! Ctrl-C / SIGTERM handling for a run: the first signal asks the run to stop cleanly
//! (stop k6 and the samplers, remove the containers, mark the run aborted); a second one
//! exits at once.
use std::io::Write;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// Fires a manual [`Interrupt`] as if `name` had been received.
#[derive(Clone)]
pub struct Trigger {
    tx: watch::Sender<Option<&'static str>>,
}

impl Trigger {
    pub fn fire(&self, name: &'static str) {
        let _ = self.tx.send(Some(name));
    }
}

/// A clonable view of "has the user asked us to stop, and with which signal".
#[derive(Clone)]
pub struct Interrupt {
    rx: watch::Receiver<Option<&'static str>>,
}

impl Interrupt {
    /// Install the handlers (call inside the tokio runtime).
    pub(crate) fn install() -> std::io::Result<Interrupt> {
        Interrupt::install_with("stopping k6 and the samplers, removing containers")
    }

    /// [`Interrupt::install`] announcing `what` happens on the first signal.
    pub(crate) fn install_with(what: &'static str) -> std::io::Result<Interrupt> {
        let (tx, rx) = watch::channel(None);
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::spawn(async move {
            let mut seen = 0;
            loop {
                let name = tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                };
                seen += 1;
                // Act first, then tell: a write to a closed stderr (the terminal or the pipe
                // reader is gone) must not stop the handler, so no `eprintln!` here.
                let mut err = std::io::stderr();
                if seen == 1 {
                    let _ = tx.send(Some(name));
                    let _ = writeln!(err, "\n{name}: {what} (again to exit at once)");
                } else {
                    let _ = writeln!(
                        err,
                        "{name} again: exiting now; `perflab cleanup` removes what is left"
                    );
                    std::process::exit(130);
                }
            }
        });
        Ok(Interrupt { rx })
    }

    /// An interrupt no signal handler feeds: the returned [`Trigger`] fires it (tests, fake
    /// engines, a caller that stops a session on its own terms).
    pub fn manual() -> (Interrupt, Trigger) {
        let (tx, rx) = watch::channel(None);
        (Interrupt { rx }, Trigger { tx })
    }

    /// The signal received so far, if any.
    pub fn reason(&self) -> Option<&'static str> {
        *self.rx.borrow()
    }

    /// Resolve when a signal arrives (never, if the sender is gone without one).
    pub(crate) async fn wait(&mut self) -> &'static str {
        loop {
            if let Some(r) = *self.rx.borrow() {
                return r;
            }
            if self.rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

impl crate::docker::Cancel for Interrupt {
    async fn cancelled(&self) {
        let mut i = self.clone();
        i.wait().await;
    }
}
