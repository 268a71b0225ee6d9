//! Exports of an experiment for other orchestrators: `k8s` (k6-operator's TestRun and an
//! Indexed Job per lab slot). What an export does not cover is in docs/scale-out.md.
pub mod k8s;
