//! The CLI's own documentation, generated from the clap command tree so it always matches
//! this binary: man pages (`perflab man`) and shell completions (`perflab completions SHELL`).
//! docs/reference/cli.md is generated from the same tree by tests/offline/docs.rs.
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

/// A shell `perflab completions` writes a script for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    #[value(name = "powershell")]
    PowerShell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  perflab completions bash > /etc/bash_completion.d/perflab
  perflab completions zsh > \"${fpath[1]}/_perflab\"
  perflab completions fish > ~/.config/fish/completions/perflab.fish")]
pub struct CompletionsArgs {
    /// The shell to complete perflab's subcommands, flags and values in
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  perflab man | man -l -
  sudo perflab man --dir /usr/local/share/man/man1   # perflab(1), perflab-run(1), ...")]
pub struct ManArgs {
    /// Write perflab.1 and one page per subcommand (perflab-run.1, ...) into DIR instead of
    /// printing perflab.1 on stdout
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `perflab completions SHELL`: the completion script of `cmd` (perflab's command tree) on
/// stdout.
pub(crate) fn completions(args: CompletionsArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Elvish => S::Elvish,
        Shell::PowerShell => S::PowerShell,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut visible(cmd), "perflab", &mut buf);
    crate::output::emit_bytes(&buf);
    Ok(ExitCode::SUCCESS)
}

/// perflab's command tree without its hidden subcommands (the debug lock holder, the remote
/// sampler, these generators): clap_complete would offer them after `perflab <TAB>`.
fn visible(cmd: clap::Command) -> clap::Command {
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut top = clap::Command::new("perflab")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cmd.get_arguments().cloned())
        .subcommands(subs)
        .subcommand_required(true);
    if let Some(about) = cmd.get_about() {
        top = top.about(about.clone());
    }
    top
}

/// `perflab man [--dir DIR]`: perflab(1) on stdout, or every page written into DIR; `cmd` is
/// perflab's command tree.
pub(crate) fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let pages = man_pages(cmd)?;
    let Some(dir) = args.dir else {
        crate::output::emit_bytes(&pages[0].1);
        return Ok(ExitCode::SUCCESS);
    };
    crate::rundir::output_path::write_files("--dir", &dir, &pages)?;
    crate::say!("{} man pages written to {}", pages.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}

/// Every man page as (file name, roff): perflab.1 first, then one per visible subcommand
/// (`perflab-run.1`, named as `clap_mangen::generate_to` names them).
pub(crate) fn man_pages(cmd: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![render(cmd.clone())?];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push(render(sub.clone())?);
    }
    Ok(pages)
}

fn render(cmd: clap::Command) -> anyhow::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd).source(concat!("perflab ", env!("CARGO_PKG_VERSION")));
    let mut page = Vec::new();
    man.render(&mut page)?;
    Ok((man.get_filename(), page))
}
