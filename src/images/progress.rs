//! The image builds' progress on stderr (`perflab build`, and before `up`, `run`, the tools).
use crate::lab::Role;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Progress printer for image builds: one line per step on a terminal, plain lines otherwise.
pub(crate) fn build_progress(quiet: bool) -> impl FnMut(BuildProgress) + Send {
    let tty = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    move |p| {
        if quiet {
            return;
        }
        match p {
            BuildProgress::UpToDate { .. } => {}
            BuildProgress::Building { role, tag, log } => {
                crate::say!(
                    "building {:<9} {tag} (log: {})",
                    role.image_name(),
                    log.display()
                )
            }
            BuildProgress::Step { role, step } => {
                // Docker's build output: shown, never obeyed (`output::plain`).
                let step: String = step.chars().take(100).collect();
                let step = crate::output::plain(&step);
                if tty {
                    eprint!("\r\x1b[2K  {:<9} {step}", role.image_name());
                } else {
                    crate::say!("  {:<9} {step}", role.image_name());
                }
            }
            BuildProgress::Built { role, seconds, .. } => {
                if tty {
                    eprint!("\r\x1b[2K");
                }
                crate::say!("built    {:<9} in {seconds:.1} s", role.image_name())
            }
        }
    }
}

/// Progress of `ensure_built`, for a progress line.
#[derive(Debug, Clone)]
pub enum BuildProgress {
    /// The role's image exists already.
    UpToDate { role: Role, tag: String },
    /// A build starts; its full output goes to `log`.
    Building {
        role: Role,
        tag: String,
        log: PathBuf,
    },
    /// A Dockerfile step or a phase (debootstrap) of the current build.
    Step { role: Role, step: String },
    Built {
        role: Role,
        tag: String,
        seconds: f64,
    },
}
