//! Out/ roots of nightly runs made from exp1's recorded round (tests/fixtures/compare): the
//! history's tests (offline and in the browser) read them.
#![allow(dead_code)]
use serde_json::Value;
use std::path::Path;

const SRC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/compare/exp1-clean/exp1/20261130T223353Z-r1"
);

pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A run of exp1 under `out`, `day` days after 2027-01-01, its steps' CPU per ok request and
/// p95 times `scale`, php-fpm's package `php`.
pub fn night(out: &Path, day: i64, scale: f64, php: &str) -> String {
    let at = chrono::DateTime::parse_from_rfc3339("2027-01-01T03:00:00Z").unwrap()
        + chrono::Duration::days(day);
    let name = format!("{}-r1", at.format("%Y%m%dT%H%M%SZ"));
    let d = out.join("exp1").join(&name);
    std::fs::create_dir_all(&d).unwrap();
    let src = Path::new(SRC);
    let mut m = json(&src.join("manifest.json"));
    m["run_id"] = name.clone().into();
    m["created"] = at.to_rfc3339().into();
    m["components"]["php-fpm.dpkg:php8.4-fpm"] = php.into();
    std::fs::write(d.join("manifest.json"), m.to_string()).unwrap();
    let mut r = json(&src.join("report.json"));
    for s in r["steps"].as_array_mut().unwrap() {
        for k in ["ms_cpu_per_ok", "p95_ms"] {
            if let Some(v) = s[k].as_f64() {
                s[k] = (v * scale).into();
            }
        }
    }
    std::fs::write(d.join("report.json"), r.to_string()).unwrap();
    std::fs::copy(src.join("status.json"), d.join("status.json")).unwrap();
    name
}

/// SplitMix64 normals: the same noise every time.
pub fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    let mut u = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (a, b) = (u(), u());
            (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        })
        .collect()
}

/// 45 nights; from night 30 on, php8.4-fpm 8.4.28 and 9 % more CPU per request. The run names.
pub fn series(out: &Path) -> Vec<String> {
    noise(11, 45)
        .iter()
        .enumerate()
        .map(|(i, z)| {
            let (scale, php) = match i >= 30 {
                true => (1.09, "8.4.28-1~deb13u1"),
                false => (1.0, "8.4.27-1~deb13u1"),
            };
            night(out, i as i64, scale * (1.0 + 0.027 * z), php)
        })
        .collect()
}
