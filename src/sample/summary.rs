//! What the samplers did, as the manifest's `measurements.samplers` object records it: the
//! lines written per counted file (under its `SampleFile`'s count key, `cgroup_samples`,
//! `pg_samples`, ...), the failures, and perflab's and dockerd's mean CPU.
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::files::SampleFile;

/// What the samplers did (`sample::Samplers::stop` returns it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplerSummary {
    /// Lines written per file, each under its count key, in the registry's order (first in
    /// the object, as the counts have always been). A key a manifest lacks reads as 0
    /// (`procs_samples` is younger than the others); a key no file counts is ignored.
    #[serde(flatten)]
    lines: Lines,
    pub errors: u64,
    /// Mean CPU of perflab itself over the sampling (cores).
    pub perflab_cores_mean: Option<f64>,
    /// Mean CPU of dockerd over the sampling (cores).
    pub dockerd_cores_mean: Option<f64>,
}

impl SamplerSummary {
    /// Lines written to `file` (0 if none were counted).
    pub fn lines(&self, file: SampleFile) -> u64 {
        self.lines.0.get(&file).copied().unwrap_or(0)
    }

    /// One more line written to `file`.
    pub(crate) fn count_line(&mut self, file: SampleFile) {
        debug_assert!(file.count_key().is_some(), "{file:?} has no count");
        *self.lines.0.entry(file).or_default() += 1;
    }

    /// A count for each of `files`, 0 until lines are added: the manifest lists it.
    pub(crate) fn expect(&mut self, files: &[SampleFile]) {
        for f in files {
            self.lines.0.entry(*f).or_default();
        }
    }

    /// Add another sampler's summary to this one (the means: the first that has one).
    pub(crate) fn add(&mut self, s: &SamplerSummary) {
        for (f, n) in &s.lines.0 {
            *self.lines.0.entry(*f).or_default() += n;
        }
        self.errors += s.errors;
        self.perflab_cores_mean = self.perflab_cores_mean.or(s.perflab_cores_mean);
        self.dockerd_cores_mean = self.dockerd_cores_mean.or(s.dockerd_cores_mean);
    }
}

/// The counts, keyed by file (so they serialize in the registry's order, not the keys').
#[derive(Debug, Clone, Default, PartialEq)]
struct Lines(BTreeMap<SampleFile, u64>);

impl Serialize for Lines {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().filter_map(|(f, n)| Some((f.count_key()?, n))))
    }
}

impl<'de> Deserialize<'de> for Lines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lines, D::Error> {
        struct Counts;
        impl<'de> Visitor<'de> for Counts {
            type Value = Lines;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the samplers' counts of lines")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Lines, A::Error> {
                let mut lines = BTreeMap::new();
                while let Some(key) = m.next_key::<String>()? {
                    match SampleFile::all()
                        .into_iter()
                        .find(|f| f.count_key().as_deref() == Some(key.as_str()))
                    {
                        Some(f) => {
                            lines.insert(f, m.next_value()?);
                        }
                        None => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Lines(lines))
            }
        }
        d.deserialize_map(Counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `samplers` object of tests/fixtures/compare/2a-shared/2a/20261201T155905Z-r1.
    const RECORDED: &str = r#"{"cgroup_samples":108,"host_samples":36,"procs_samples":36,"fpm_samples":0,"pg_samples":19,"errors":0,"perflab_cores_mean":0.0024934389293770807,"dockerd_cores_mean":0.001386128777952949}"#;

    /// The same of tests/fixtures/compare/2a-base/2a/20261130T222220Z-r1: before the procs
    /// sampler, no `procs_samples`.
    const BEFORE_PROCS: &str = r#"{"cgroup_samples":108,"host_samples":36,"fpm_samples":0,"pg_samples":19,"errors":0,"perflab_cores_mean":0.0016680959081786474,"dockerd_cores_mean":0.00027713468563123175}"#;

    #[test]
    fn a_recorded_summary_reads_and_writes_back_the_same_keys_in_the_same_order() {
        let s: SamplerSummary = serde_json::from_str(RECORDED).unwrap();
        assert_eq!(
            [
                SampleFile::Cgroup,
                SampleFile::Host,
                SampleFile::HostProcs,
                SampleFile::Source("fpm"),
                SampleFile::Source("pg")
            ]
            .map(|f| s.lines(f)),
            [108, 36, 36, 0, 19]
        );
        assert_eq!(s.perflab_cores_mean, Some(0.0024934389293770807));
        assert_eq!(serde_json::to_string(&s).unwrap(), RECORDED);
    }

    #[test]
    fn a_summary_from_before_the_procs_sampler_reads_with_no_procs_lines() {
        let s: SamplerSummary = serde_json::from_str(BEFORE_PROCS).unwrap();
        assert_eq!(s.lines(SampleFile::HostProcs), 0);
        assert_eq!(
            (
                s.lines(SampleFile::Cgroup),
                s.lines(SampleFile::Source("pg"))
            ),
            (108, 19)
        );
        assert_eq!(serde_json::to_string(&s).unwrap(), BEFORE_PROCS);
        // A key no file counts is ignored, as before.
        let extra = BEFORE_PROCS.replace(r#""errors""#, r#""other":"x","errors""#);
        assert_eq!(serde_json::from_str::<SamplerSummary>(&extra).unwrap(), s);
    }

    #[test]
    fn summaries_add_up_and_keep_the_first_mean() {
        let mut total = SamplerSummary::default();
        let mut a = SamplerSummary {
            errors: 1,
            perflab_cores_mean: Some(0.1),
            ..Default::default()
        };
        (0..3).for_each(|_| a.count_line(SampleFile::Cgroup));
        let mut b = SamplerSummary {
            errors: 2,
            perflab_cores_mean: Some(0.9),
            dockerd_cores_mean: Some(0.2),
            ..Default::default()
        };
        (0..2).for_each(|_| b.count_line(SampleFile::Source("fpm")));
        total.expect(&[SampleFile::Source("pg")]);
        total.add(&a);
        total.add(&b);
        assert_eq!(
            (
                total.lines(SampleFile::Cgroup),
                total.lines(SampleFile::Source("fpm")),
                total.errors
            ),
            (3, 2, 3)
        );
        assert_eq!(total.perflab_cores_mean, Some(0.1));
        assert_eq!(total.dockerd_cores_mean, Some(0.2));
        let json = serde_json::to_string(&total).unwrap();
        assert!(
            json.starts_with(r#"{"cgroup_samples":3,"fpm_samples":2,"pg_samples":0,"errors":3"#),
            "{json}"
        );
    }
}
