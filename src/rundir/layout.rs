//! The run directory's layout: one typed path per file and folder a run directory (and a tool
//! run's, and a `loads/<label>/` load's) holds, each saying what it holds; every writer and
//! reader of those files takes its path from here. The contract's docs list the same paths
//! (docs/reports.md, "The run directory"; a test keeps them equal, [`names`]).
use super::read::{FileKind, RunFile};
use std::path::{Path, PathBuf};

/// `manifest.json`: versions, host, CPU layout, caveats, config and measurements (`Manifest`),
/// or a tool run's (`ToolManifest`).
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
/// `status.json`: `running`, `complete`, `failed`, `aborted`, the owner and the phase (`Status`).
pub(crate) const STATUS_FILE: &str = "status.json";
/// `plan.json`: the run's plan (`plan::Plan`): steps, windows, stages, VUs, criteria.
pub(crate) const PLAN_FILE: &str = "plan.json";
/// `report.json`: the analysis with its schema version (`rundir::report::ReportFile`).
pub(crate) const REPORT_FILE: &str = "report.json";
/// `report.txt`: the plain-text report.
pub(crate) const REPORT_TXT: &str = "report.txt";
/// `report.md`: the Markdown report.
pub(crate) const REPORT_MD: &str = "report.md";
/// `report.html`: the self-contained HTML report.
pub(crate) const REPORT_HTML: &str = "report.html";
/// `plot-steps.svg`: the per-step plot.
pub const STEPS_SVG: &str = "plot-steps.svg";
/// `plot-timeline.svg`: the per-second plot.
pub const TIMELINE_SVG: &str = "plot-timeline.svg";
/// `findings.md`: `perflab verify`'s findings, in its own dated directory.
pub(crate) const FINDINGS_MD: &str = "findings.md";
/// `findings.json`: the same findings as JSON.
pub(crate) const FINDINGS_JSON: &str = "findings.json";
/// A group's recovered/stuck map as read (`perflab verify GROUP`, under `maps/<group>/`).
pub(crate) const MAP_JSON: &str = "map.json";
/// `stalls.jsonl`: the noise tool's stalls, one JSON line each.
pub(crate) const STALLS_FILE: &str = "stalls.jsonl";
/// The files k6 writes into a generator's folder, named where k6 is invoked (`load`, below
/// this module): its web dashboard (one self-contained HTML file), `--summary-export` and
/// per-request CSV.
pub(crate) use crate::load::{CSV_FILE, DASHBOARD_FILE, SUMMARY_FILE};
/// k6's output, collected by the session into a generator's folder.
pub(crate) const K6_LOG: &str = "k6.log";
/// The single load generator's folder, and the parent of several generators' `g<i>/`.
pub(crate) const K6_DIR: &str = "k6";
/// A plain (not gzipped) per-request CSV, read when there is no [`CSV_FILE`].
pub(crate) const PLAIN_CSV_FILE: &str = "requests.csv";

/// The samplers' files under `samples/`, one JSON line per reading (`sample::records`): their
/// registry is `sample`'s (`sample_files!`, below this module), each file's path is
/// [`Layout::samples`].
pub use crate::sample::SampleFile;

/// A run directory's paths (or a load's, `loads/<label>/`, which has the same shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    pub fn new(dir: impl Into<PathBuf>) -> Layout {
        Layout { dir: dir.into() }
    }

    /// The run directory itself.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// [`MANIFEST_FILE`].
    pub fn manifest(&self) -> PathBuf {
        self.dir.join(MANIFEST_FILE)
    }

    /// [`STATUS_FILE`].
    pub fn status(&self) -> PathBuf {
        self.dir.join(STATUS_FILE)
    }

    /// [`PLAN_FILE`].
    pub fn plan(&self) -> PathBuf {
        self.dir.join(PLAN_FILE)
    }

    /// [`REPORT_FILE`].
    pub(crate) fn report_json(&self) -> PathBuf {
        self.dir.join(REPORT_FILE)
    }

    /// [`REPORT_TXT`].
    pub(crate) fn report_txt(&self) -> PathBuf {
        self.dir.join(REPORT_TXT)
    }

    /// [`REPORT_MD`].
    pub(crate) fn report_md(&self) -> PathBuf {
        self.dir.join(REPORT_MD)
    }

    /// [`REPORT_HTML`].
    pub(crate) fn report_html(&self) -> PathBuf {
        self.dir.join(REPORT_HTML)
    }

    /// [`STEPS_SVG`].
    pub(crate) fn plot_steps(&self) -> PathBuf {
        self.dir.join(STEPS_SVG)
    }

    /// [`TIMELINE_SVG`].
    pub(crate) fn plot_timeline(&self) -> PathBuf {
        self.dir.join(TIMELINE_SVG)
    }

    /// [`FINDINGS_MD`] (the directory is `perflab verify`'s, not a run's).
    pub(crate) fn findings_md(&self) -> PathBuf {
        self.dir.join(FINDINGS_MD)
    }

    /// [`FINDINGS_JSON`] (the directory is `perflab verify`'s, not a run's).
    pub(crate) fn findings_json(&self) -> PathBuf {
        self.dir.join(FINDINGS_JSON)
    }

    /// [`MAP_JSON`] (the directory is a map's, not a run's).
    pub(crate) fn map_json(&self) -> PathBuf {
        self.dir.join(MAP_JSON)
    }

    /// [`STALLS_FILE`] (a noise tool run's).
    pub(crate) fn stalls(&self) -> PathBuf {
        self.dir.join(STALLS_FILE)
    }

    /// `k6/`: a single load generator's files.
    pub fn k6(&self) -> K6Dir {
        K6Dir {
            path: self.dir.join(K6_DIR),
        }
    }

    /// `k6/g<i>/`: load generator `name` (`g0`, `g1`, ...) of several.
    pub(crate) fn generator_named(&self, name: &str) -> K6Dir {
        K6Dir {
            path: self.k6().path.join(name),
        }
    }

    /// `k6/g<i>/`: load generator `i` of several.
    pub(crate) fn generator(&self, i: usize) -> K6Dir {
        self.generator_named(&format!("g{i}"))
    }

    /// Where generator `index` of `count` writes: `k6/` for a single one, `k6/g<i>/` otherwise.
    pub(crate) fn generator_of(&self, index: usize, count: usize) -> K6Dir {
        match count <= 1 {
            true => self.k6(),
            false => self.generator(index),
        }
    }

    /// `samples/`: the samplers' JSON lines.
    pub(crate) fn samples_dir(&self) -> PathBuf {
        self.dir.join("samples")
    }

    /// `samples/<name>.jsonl`: a [`SampleFile`].
    pub fn samples(&self, s: SampleFile) -> PathBuf {
        self.sample_files().path(s)
    }

    /// `samples/host-<role>.jsonl`: the host lines of a sample agent on another engine.
    pub(crate) fn agent_host_samples(&self, role: &str) -> PathBuf {
        self.samples_dir().join(format!("host-{role}.jsonl"))
    }

    /// The samplers' folder, for `sample::Samplers::start` (which sits below this module and
    /// names each file in it by its [`SampleFile`]).
    pub(crate) fn sample_files(&self) -> crate::sample::SampleFiles {
        crate::sample::SampleFiles {
            dir: self.samples_dir(),
        }
    }

    /// Where a stack's collected files go, for `stack` (which sits below this module).
    pub(crate) fn collect_paths(&self) -> crate::stack::CollectPaths {
        crate::stack::CollectPaths {
            logs_dir: self.logs_dir(),
            role_logs: crate::lab::Role::all()
                .iter()
                .map(|r| (*r, self.log(r.log_name())))
                .collect(),
            output_samples: crate::lab::sources()
                .into_iter()
                .filter(|s| !s.read.sampled())
                .map(|s| (s.name, self.samples(SampleFile::Source(s.name))))
                .collect(),
        }
    }

    /// `logs/`: every container's output and the lab's collected files (`lab::CollectFile`).
    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// `logs/<name>.log`: a container's output (`Role::log_name`) or Laravel's log.
    pub fn log(&self, name: &str) -> PathBuf {
        self.logs_dir().join(format!("{name}.log"))
    }

    /// `logs/access/<server>.log`: the access logs (`fpm`, `nginx`) when the experiment turns
    /// them on.
    pub(crate) fn access_log(&self, server: &str) -> PathBuf {
        self.logs_dir().join("access").join(format!("{server}.log"))
    }

    /// `loads/<label>/`: a load other than the measured steps (calibration, probes, the closed
    /// twin), laid out like a run directory (`plan.json`, `k6/`, `samples/`).
    pub(crate) fn load(&self, label: &str) -> Layout {
        Layout::new(self.dir.join("loads").join(label))
    }

    /// `path` (one of this layout's) relative to the run directory: how reports and errors
    /// name it.
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.dir)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// `path` (one of this layout's) for the bounded reader, named by [`Layout::rel`].
    pub fn file(&self, path: PathBuf, kind: FileKind) -> RunFile {
        RunFile {
            label: self.rel(&path),
            path,
            kind,
        }
    }
}

/// One load generator's folder: `k6/` or `k6/g<i>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K6Dir {
    pub path: PathBuf,
}

impl K6Dir {
    /// The generator folder at `path` (one [`Layout`] gave, maybe canonicalized since).
    pub(crate) fn new(path: impl Into<PathBuf>) -> K6Dir {
        K6Dir { path: path.into() }
    }

    /// `requests.csv.gz`: k6's per-request CSV (`--out csv=`), gzipped.
    pub fn requests_csv_gz(&self) -> PathBuf {
        self.path.join(CSV_FILE)
    }

    /// `requests.csv`: the same, plain (read when there is no gzipped one).
    pub(crate) fn requests_csv(&self) -> PathBuf {
        self.path.join(PLAIN_CSV_FILE)
    }

    /// The CSVs the readers try, in order: gzipped, then plain.
    pub(crate) fn csv_candidates(&self) -> [PathBuf; 2] {
        [self.requests_csv_gz(), self.requests_csv()]
    }

    /// `summary.json`: k6's `--summary-export`.
    pub fn summary(&self) -> PathBuf {
        self.path.join(SUMMARY_FILE)
    }

    /// `k6.log`: k6's own output.
    pub(crate) fn log(&self) -> PathBuf {
        self.path.join(K6_LOG)
    }

    /// [`DASHBOARD_FILE`].
    pub(crate) fn dashboard(&self) -> PathBuf {
        self.path.join(DASHBOARD_FILE)
    }
}

/// Every path the layout names, relative to the run directory, with its placeholders (`<i>`,
/// `<role>`, `<name>`, `<server>`, `<label>`): what the run directory's docs list.
pub fn names() -> Vec<String> {
    let l = Layout::new("");
    let file = |p: PathBuf| p.to_string_lossy().into_owned();
    let dir = |p: PathBuf| format!("{}/", p.to_string_lossy());
    let mut v: Vec<String> = [
        l.manifest(),
        l.status(),
        l.plan(),
        l.report_json(),
        l.report_txt(),
        l.report_md(),
        l.report_html(),
        l.plot_steps(),
        l.plot_timeline(),
        l.findings_md(),
        l.findings_json(),
        l.map_json(),
        l.stalls(),
    ]
    .into_iter()
    .map(file)
    .collect();
    for k in [l.k6(), l.generator_named("g<i>")] {
        v.push(dir(k.path.clone()));
        v.extend(k.csv_candidates().map(file));
        v.extend([k.summary(), k.log(), k.dashboard()].map(file));
    }
    v.push(dir(l.samples_dir()));
    v.extend(SampleFile::all().into_iter().map(|s| file(l.samples(s))));
    v.push(file(l.agent_host_samples("<role>")));
    v.push(dir(l.logs_dir()));
    v.extend([l.log("<name>"), l.access_log("<server>")].map(file));
    v.push(dir(l.load("<label>").dir));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sit_where_the_contract_says() {
        let l = Layout::new("/out/x/r1");
        assert_eq!(l.manifest(), Path::new("/out/x/r1/manifest.json"));
        assert_eq!(
            l.generator_of(1, 2).summary(),
            Path::new("/out/x/r1/k6/g1/summary.json")
        );
        assert_eq!(l.generator_of(0, 1).log(), Path::new("/out/x/r1/k6/k6.log"));
        assert_eq!(
            l.load("probe-1").samples(SampleFile::Source("pg")),
            Path::new("/out/x/r1/loads/probe-1/samples/pg.jsonl")
        );
        let f = l.file(l.access_log("nginx"), FileKind::AccessLog);
        assert_eq!(f.label, "logs/access/nginx.log");
    }

    #[test]
    fn the_labs_collected_files_land_where_the_reader_looks() {
        let l = Layout::new("/r");
        let cat = crate::experiment::Catalog::load(
            Path::new("experiments"),
            &crate::verify::quantities::Quantities,
        )
        .unwrap();
        let crate::experiment::CatalogEntry::Experiment(e) = &cat.get("diag-acc").unwrap().entry
        else {
            panic!("diag-acc is an experiment")
        };
        let dests: Vec<PathBuf> = crate::lab::descriptor(e.lab)
            .collect(&e.stack)
            .iter()
            .map(|f| l.logs_dir().join(f.dest))
            .collect();
        for server in ["fpm", "nginx"] {
            assert!(dests.contains(&l.access_log(server)), "{server}: {dests:?}");
        }
    }

    #[test]
    fn names_are_unique_and_relative() {
        let n = names();
        let set: std::collections::BTreeSet<&String> = n.iter().collect();
        assert_eq!(set.len(), n.len(), "{n:?}");
        assert!(n.iter().all(|p| !p.starts_with('/')));
        assert!(n.contains(&"k6/g<i>/summary.json".to_string()), "{n:?}");
    }
}
