//! The registry of the files the samplers write under a run's `samples/` folder
//! (`sample_files!`: `SampleFile`, each file's name and the key of its count in the summary; a
//! lab's declared sources are `SampleFile::Source`), and the folder itself (`SampleFiles`).
use std::path::PathBuf;

/// The registry of the fixed files under a run's `samples/`, one row each after its doc:
/// `Variant: "name"`, then `, counted as "key"` when the samplers' summary counts its lines.
/// The file is `<name>.jsonl`; a sampler that writes it is `<name>` in `sampler-errors.jsonl`;
/// `key` is its count in the manifest's `samplers` object. `SampleFile`, `SampleFile::all`
/// (what the run directory's layout lists), `name`, `file` and `count_key` derive from this
/// table and the labs' declared sources (`SampleFile::Source`, counted as `<name>_samples`,
/// after the fixed rows); the order of the rows is the order of the counts in the manifest.
/// A row may carry a `#[cfg(..)]` (the unit tests' sampler is one).
macro_rules! sample_files {
    (@key) => { None::<&str> };
    (@key $key:literal) => { Some::<&str>($key) };
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $v:ident: $name:literal $(, counted as $key:literal)?;
    )+) => {
        /// A file under a run's `samples/`, one JSON line per reading (`sample::records`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum SampleFile {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? $v, )+
            /// A source a lab declares (`lab::source::SourceDecl`), by its name: `fpm.jsonl`
            /// (php-fpm's status, `FpmSample`), `pg.jsonl` (`pg_stat_activity`, `PgSample`),
            /// `nginx.jsonl` (nginx's `stub_status`), `node.jsonl` (the node app's metrics
            /// lines, `NodeSample`, cut from its log at collection), ...
            Source(&'static str),
        }

        impl SampleFile {
            /// The fixed files, in the registry's order.
            const FIXED: &'static [SampleFile] = &[$( $(#[cfg($cfg)])? SampleFile::$v, )+];

            /// Every file: the fixed ones, then the sources every lab declares.
            pub(crate) fn all() -> Vec<SampleFile> {
                let sources = crate::lab::sources().into_iter().map(|s| SampleFile::Source(s.name));
                SampleFile::FIXED.iter().copied().chain(sources).collect()
            }

            /// The file's name without `.jsonl`: its sampler's name in `sampler-errors.jsonl`.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $( $(#[cfg($cfg)])? SampleFile::$v => $name, )+
                    SampleFile::Source(name) => name,
                }
            }

            /// The file's name in `samples/`.
            pub(crate) fn file(self) -> String {
                format!("{}.jsonl", self.name())
            }

            /// The key of its count of lines in the samplers' summary, if the samplers count
            /// them (a source cut from a container's output is not sampled, so not counted).
            pub(crate) fn count_key(self) -> Option<String> {
                match self {
                    $( $(#[cfg($cfg)])? SampleFile::$v => sample_files!(@key $($key)?).map(String::from), )+
                    SampleFile::Source(name) => crate::lab::sources()
                        .into_iter()
                        .any(|s| s.name == name && s.read.sampled())
                        .then(|| format!("{name}_samples")),
                }
            }
        }
    };
}

sample_files! {
    /// `cgroup.jsonl`: each container's cgroup CPU and memory (`CgroupSample`).
    Cgroup: "cgroup", counted as "cgroup_samples";
    /// `host.jsonl`: the host's CPU (`HostSample`).
    Host: "host", counted as "host_samples";
    /// `hostprocs.jsonl`: the host's processes by source, irq and softirq (`HostProcsSample`).
    HostProcs: "hostprocs", counted as "procs_samples";
    /// `sampler-errors.jsonl`: what a sampler failed to read.
    Errors: "sampler-errors";
    /// `counting.jsonl`: the unit tests' sampler (`sampler.rs`).
    #[cfg(test)]
    Counting: "counting", counted as "counting_samples";
}

/// Where the samplers write: the run directory's `samples/` folder, handed down by the layout
/// that owns it (`rundir::layout::Layout::sample_files`, above this module); each file in it
/// is named by its [`SampleFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SampleFiles {
    /// The folder, created if missing.
    pub dir: PathBuf,
}

impl SampleFiles {
    /// `file`'s path in the folder.
    pub(crate) fn path(&self, file: SampleFile) -> PathBuf {
        self.dir.join(file.file())
    }
}
