//! The registry of the fit's quantities, the names a `fit:` rule's expression may read: one row
//! each, its name, its help (`perflab show EXP --fit` lists them) and its reader over what a
//! calibration has (`Inputs`). `validate` checks a rule's names against it, the session reads
//! every row after a calibration ([`values`]), and code that needs one quantity names its row
//! (`FitQ::AppCeiling`), never a string.
use super::super::schema::{Experiment, Model};
use std::collections::BTreeMap;

/// The calibrated quantities by name, as the manifest records them (`fit.quantities`).
pub type Quantities = BTreeMap<String, f64>;

/// What the quantities are read from: the published experiment and the CPU layout, and the
/// calibration's and the peak probe's measurements when they ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub published: Published,
    pub calibration: Option<Measured>,
    pub peak: Option<Measured>,
}

/// The published numbers a rule may read before any calibration, and the layout's CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub top: f64,
    pub max_vus: f64,
    pub think_s: f64,
    /// The app's concurrency slots (`StackSettings::slots`), when its lab has a section.
    pub pool: Option<f64>,
    pub app_cpus: f64,
    pub db_cpus: f64,
}

impl Published {
    /// `e`'s published numbers on a layout of `app_cpus` and `db_cpus`.
    pub fn of(e: &Experiment, app_cpus: usize, db_cpus: usize) -> Published {
        Published {
            top: f64::from(e.load.steps.last().copied().unwrap_or(0)),
            max_vus: f64::from(e.load.max_vus),
            think_s: match e.load.model {
                Model::Closed => e.load.think_time_s.unwrap_or(0.0),
                Model::Open => 0.0,
            },
            pool: e.stack.slots().map(f64::from),
            app_cpus: app_cpus as f64,
            db_cpus: db_cpus as f64,
        }
    }
}

/// What one calibration load (or the peak probe) measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub rate: f64,
    pub ok_per_s: f64,
    pub w_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: Option<f64>,
    pub app_ms: Option<f64>,
    pub db_ms: Option<f64>,
}

/// `cpus * 1000 / ms`: a CPU (or pool) ceiling in requests/s, when `ms` is positive.
fn ceiling(n: Option<f64>, ms: Option<f64>) -> Option<f64> {
    let (n, ms) = (n?, ms?);
    (ms > 0.0).then(|| n * 1000.0 / ms)
}

impl Inputs {
    fn cal<T>(&self, f: fn(&Measured) -> T) -> Option<T> {
        self.calibration.as_ref().map(f)
    }
    fn peak<T>(&self, f: fn(&Measured) -> T) -> Option<T> {
        self.peak.as_ref().map(f)
    }
}

/// The registry: `Variant "name" => "help" => reader,`, the reader an `Option<f64>` over
/// the `Inputs` named between the bars (none: not measured on this run).
macro_rules! fit_quantities {
    (|$i:ident| { $($var:ident $name:literal => $help:literal => $read:expr,)* }) => {
        /// A quantity a `fit:` rule may read.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum FitQ {
            $($var,)*
        }

        impl FitQ {
            /// Every quantity, in the order `show --fit` lists them.
            pub const ALL: &'static [FitQ] = &[$(FitQ::$var,)*];

            /// The name a rule uses.
            pub const fn name(self) -> &'static str {
                match self {
                    $(FitQ::$var => $name,)*
                }
            }

            /// One line on what it is.
            pub const fn help(self) -> &'static str {
                match self {
                    $(FitQ::$var => $help,)*
                }
            }

            /// Its value on `i`, when measured.
            pub fn read(self, $i: &Inputs) -> Option<f64> {
                match self {
                    $(FitQ::$var => $read,)*
                }
            }
        }
    };
}

fit_quantities! { |i| {
    X "x" => "the published value (each element, for a list)" => None,
    Top "top" => "the published top step" => Some(i.published.top),
    Rate "rate" => "the calibration's offered rate, requests/s" => i.cal(|c| c.rate),
    OkPerS "ok_per_s" => "successful responses/s during the calibration"
        => i.cal(|c| c.ok_per_s),
    WMs "w_ms" => "mean latency at the calibration rate (the service time W), ms"
        => i.cal(|c| c.w_ms),
    AppMs "app_ms" => "app-box CPU ms per successful request" => i.cal(|c| c.app_ms).flatten(),
    DbMs "db_ms" => "PostgreSQL CPU ms per successful request" => i.cal(|c| c.db_ms).flatten(),
    AppCpus "app_cpus" => "CPUs the layout gives the app" => Some(i.published.app_cpus),
    DbCpus "db_cpus" => "CPUs the layout gives PostgreSQL" => Some(i.published.db_cpus),
    AppCeiling "app_ceiling" => "app_cpus * 1000 / app_ms: the app's CPU ceiling, requests/s"
        => ceiling(Some(i.published.app_cpus), i.cal(|c| c.app_ms).flatten()),
    DbCeiling "db_ceiling" => "db_cpus * 1000 / db_ms: PostgreSQL's CPU ceiling, requests/s"
        => ceiling(Some(i.published.db_cpus), i.cal(|c| c.db_ms).flatten()),
    Pool "pool"
        => "the app's workers or pool slots (php max_children, node pool_max x processes, demo workers)"
        => i.published.pool,
    PoolRps "pool_rps" => "pool * 1000 / w_ms: the pool's ceiling N/W, requests/s"
        => ceiling(i.published.pool, i.cal(|c| c.w_ms)),
    MaxVus "max_vus" => "the published load.max_vus" => Some(i.published.max_vus),
    ThinkS "think_s" => "the published load.think_time_s (0 for open models)"
        => Some(i.published.think_s),
    PeakRate "peak_rate" => "the peak probe's offered rate, requests/s" => i.peak(|p| p.rate),
    PeakOkPerS "peak_ok_per_s" => "successful responses/s during the peak probe"
        => i.peak(|p| p.ok_per_s),
    PeakWMs "peak_w_ms" => "mean latency during the peak probe, ms" => i.peak(|p| p.w_ms),
    PeakP95Ms "peak_p95_ms" => "p95 latency during the peak probe, ms" => i.peak(|p| p.p95_ms),
    PeakP99Ms "peak_p99_ms" => "p99 latency during the peak probe, ms"
        => i.peak(|p| p.p99_ms).flatten(),
    PeakAppMs "peak_app_ms" => "app-box CPU ms per successful request during the peak probe"
        => i.peak(|p| p.app_ms).flatten(),
    PeakAppCeiling "peak_app_ceiling"
        => "app_cpus * 1000 / peak_app_ms: the app's CPU ceiling where it binds, requests/s"
        => ceiling(Some(i.published.app_cpus), i.peak(|p| p.app_ms).flatten()),
}}

impl FitQ {
    /// The quantity named `name`.
    pub fn from_name(name: &str) -> Option<FitQ> {
        FitQ::ALL.iter().copied().find(|q| q.name() == name)
    }

    /// Only the peak probe measures it (a rule reading one needs `calibrate.peak`).
    pub(crate) fn is_peak(self) -> bool {
        self.name().starts_with("peak_")
    }
}

/// Every quantity `i` has, by name (`x` is each rule's own, not one of them).
pub fn values(i: &Inputs) -> Quantities {
    FitQ::ALL
        .iter()
        .filter_map(|q| Some((q.name().to_string(), q.read(i)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_row_but_x_is_read_from_a_full_calibration() {
        let mut names: Vec<&str> = FitQ::ALL.iter().map(|q| q.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FitQ::ALL.len());
        let m = Measured {
            rate: 20.0,
            ok_per_s: 20.0,
            w_ms: 4.0,
            p95_ms: 9.0,
            p99_ms: Some(12.0),
            app_ms: Some(2.0),
            db_ms: Some(5.0),
        };
        let i = Inputs {
            published: Published {
                top: 300.0,
                max_vus: 400.0,
                think_s: 0.0,
                pool: Some(10.0),
                app_cpus: 2.0,
                db_cpus: 1.0,
            },
            calibration: Some(m.clone()),
            peak: Some(m),
        };
        let q = values(&i);
        assert_eq!(q.len(), FitQ::ALL.len() - 1, "{q:?}");
        assert!(!q.contains_key("x"));
        assert_eq!(q["app_ceiling"], 1000.0);
        assert_eq!(q["db_ceiling"], 200.0);
        assert_eq!(q["pool_rps"], 2500.0);
        let before = values(&Inputs {
            calibration: None,
            peak: None,
            ..i
        });
        let names: Vec<&str> = before.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["app_cpus", "db_cpus", "max_vus", "pool", "think_s", "top"]
        );
    }
}
