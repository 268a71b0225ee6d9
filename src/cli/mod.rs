//! Command-line interface (clap): parses arguments and dispatches to the per-area command files.
use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub mod analysis;
pub mod catalog;
pub mod compare;
pub mod docs;
pub mod export;
pub mod lab;
pub mod matrix;
pub mod run;
pub mod tools;
pub mod verify;

/// perflab: find the breaking point of the article's PHP and Node.js labs with k6.
#[derive(Debug, Parser)]
#[command(name = "perflab", version, about)]
pub struct Cli {
    /// Less output on stderr (errors still print).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the experiments and groups of the catalog.
    #[command(after_help = "Example:\n  perflab list --lab php")]
    List(catalog::ListArgs),
    /// Show the resolved plan of an experiment: timeline, VU sizing, CPU layout.
    #[command(after_help = "Example:\n  perflab show exp1 --quick")]
    Show(catalog::ShowArgs),
    /// Validate catalog files (no arguments: the whole catalog).
    #[command(after_help = "Example:\n  perflab validate experiments/exp1.yaml")]
    Validate(catalog::ValidateArgs),
    /// Run an experiment or group: fresh stack, minute-aligned k6, samplers, report.
    #[command(after_help = "Example:\n  perflab run exp1 --rounds 3")]
    Run(run::RunArgs),
    /// Build the lab images (content-addressed: unchanged recipes are not rebuilt).
    #[command(after_help = "Example:\n  perflab build --suite all")]
    Build(lab::BuildArgs),
    /// Start a lab for exploring and print how to reach it.
    #[command(after_help = "Example:\n  perflab up php --set max_children=5")]
    Up(lab::UpArgs),
    /// Stop a lab started with `up`.
    #[command(after_help = "Example:\n  perflab down up-php-a1b2c3")]
    Down(lab::DownArgs),
    /// Remove the Docker objects of perflab stacks no live perflab owns (leftovers of killed runs).
    #[command(after_help = "Example:\n  perflab cleanup --dry-run")]
    Cleanup(lab::CleanupArgs),
    /// Start a lab, check every endpoint and the samplers' sources, tear it down.
    #[command(after_help = "Example:\n  perflab smoke node")]
    Smoke(lab::SmokeArgs),
    /// Who holds the host lock and until about when, who waits, and whose lab stacks are up.
    #[command(after_help = "Example:\n  perflab status --json")]
    Status(lab::StatusArgs),
    /// Analyze any k6 per-request CSV (plain or gzip).
    #[command(after_help = "Example:\n  perflab analyze k6.csv.gz --slo-ms 200")]
    Analyze(analysis::AnalyzeArgs),
    /// Re-render the report of a run directory from its files.
    #[command(after_help = "Example:\n  perflab report out/exp1/latest")]
    Report(analysis::ReportArgs),
    /// Rebuild out/index.html: every run at a glance, grouped by experiment, filterable.
    #[command(after_help = "Example:\n  perflab index --out out")]
    Index(analysis::IndexArgs),
    /// Check the article's findings (the catalog's `expect:` claims) on recorded runs.
    #[command(after_help = "Example:\n  perflab verify exp1")]
    Verify(verify::VerifyArgs),
    /// Did B regress against A? Recorded runs or rounds (RUN,RUN,...), or an experiment or group
    /// run with the two configurations --a and --b declare (rounds interleaved until decided):
    /// verdict, steps, versions, config; one row per experiment.
    Compare(compare::CompareArgs),
    /// Findings over time: series per experiment, suite and configuration, their change points
    #[command(after_help = "Example:\n  perflab history exp1 --suite forky --check")]
    History(crate::history::args::HistoryArgs),
    /// Max sustainable rate over >= 3 rounds, capacity with a margin, nodes for a peak.
    #[command(after_help = "Example:\n  perflab capacity 1a --peak 900")]
    Capacity(verify::CapacityArgs),
    /// Measure the host's own noise: late wake-ups of a 1 ms sleep loop pinned to an app CPU.
    #[command(after_help = "Example:\n  perflab noise-check --seconds 60")]
    NoiseCheck(tools::NoiseCheckArgs),
    /// Time a fixed CPU loop repeatedly on an app CPU: how stable is this vCPU?
    #[command(after_help = "Example:\n  perflab calib --repeats 20")]
    Calib(tools::CalibArgs),
    /// CPU ms per request of each lab container, from N sequential requests per endpoint.
    #[command(after_help = "Example:\n  perflab cpu-per-request php --repeats 300")]
    CpuPerRequest(tools::CprArgs),
    /// The host speed probe every run takes before and after its loads, on its own: a fixed
    /// compute and memory workload timed on each CPU (is this host as fast as last time?).
    #[command(after_help = "Example:\n  perflab host-speed --repeats 3")]
    HostSpeed(tools::HostSpeedArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(hide = true)]
    Completions(docs::CompletionsArgs),
    /// Print the man page perflab(1), or write every page into a directory with --dir.
    #[command(hide = true)]
    Man(docs::ManArgs),
    /// The version matrix over many hosts: plan the cells, run them (here, GNU parallel over
    /// ssh, Slurm), follow them; the run directories come back into one out/.
    #[command(after_help = "Example:\n  perflab matrix status out/forky.plan")]
    Matrix(matrix::MatrixArgs),
    /// Write an experiment as another orchestrator's manifests (k8s: k6-operator TestRun and
    /// Indexed Jobs), for users beyond one Docker host.
    #[command(after_help = "Example:\n  perflab export k8s exp1 --dir k8s/exp1")]
    Export(export::ExportArgs),
    /// Debug: take the host lock, hold it, release it (tests lock contention).
    #[command(hide = true)]
    LockHold(catalog::LockHoldArgs),
    /// Internal: the sampler inside a container on another engine (prints JSON lines).
    #[command(hide = true)]
    SampleAgent(run::SampleAgentArgs),
}

/// Parse the process arguments, run, and map errors to exit codes (2 = invalid input, 1 = failure).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    crate::output::init_tracing(cli.quiet);
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            crate::say!("error: {err:#}");
            ExitCode::from(crate::error::exit_code_for(&err))
        }
    };
    // `sudo perflab ... --out ~/runs`: what it wrote belongs to the participant, not to root.
    crate::atomic::hand_to_invoker();
    code
}

/// Dispatch one parsed command. Returns the exit code on success.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::List(a) => catalog::list(a),
        Command::Show(a) => catalog::show(a),
        Command::Validate(a) => catalog::validate(a),
        Command::Run(a) => run::run(a, cli.quiet),
        Command::Build(a) => lab::build(a, cli.quiet),
        Command::Up(a) => lab::up(a, cli.quiet),
        Command::Down(a) => lab::down(a),
        Command::Cleanup(a) => lab::cleanup(a),
        Command::Smoke(a) => lab::smoke(a, cli.quiet),
        Command::Status(a) => lab::status(a),
        Command::Analyze(a) => analysis::analyze(a),
        Command::Report(a) => analysis::report(a),
        Command::Index(a) => analysis::index(a),
        Command::Verify(a) => verify::verify(a, cli.quiet),
        Command::Compare(a) if compare::wants_target(&a) => compare::compare_target(a, cli.quiet),
        Command::Compare(a) => compare::compare(a),
        Command::History(a) => crate::history::args::run(a, &crate::html::history_page::write),
        Command::Capacity(a) => verify::capacity(a),
        Command::NoiseCheck(a) => tools::noise_check(a, cli.quiet),
        Command::Calib(a) => tools::calib(a, cli.quiet),
        Command::CpuPerRequest(a) => tools::cpu_per_request(a, cli.quiet),
        Command::HostSpeed(a) => tools::host_speed(a),
        Command::Completions(a) => docs::completions(a, <Cli as clap::CommandFactory>::command()),
        Command::Man(a) => docs::man(a, <Cli as clap::CommandFactory>::command()),
        Command::Matrix(a) => matrix::matrix(a, cli.quiet),
        Command::Export(a) => export::export(a),
        Command::LockHold(a) => catalog::lock_hold(a),
        Command::SampleAgent(a) => run::sample_agent(a),
    }
}
