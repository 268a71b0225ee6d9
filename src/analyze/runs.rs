//! Several runs of one experiment: max sustainable = min over runs of the last passing step,
//! the spread between runs, capacity with a margin and the node count (lab-spec §5, article 0.9).
use super::model::Report;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    pub title: String,
    pub last_passing: Option<u32>,
    pub knee: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsSummary {
    pub runs: Vec<RunLine>,
    /// min over runs of `last_passing` (None if any run has no passing step).
    pub max_sustainable: Option<u32>,
    /// Lowest and highest `last_passing` over the runs that have one.
    pub spread: Option<(u32, u32)>,
    pub margin: f64,
    /// max_sustainable x margin.
    pub capacity: Option<f64>,
    /// ceil(peak / capacity) + 1 (N+1), when a peak is given.
    pub nodes: Option<u32>,
}

/// Summarise runs; `margin` is typically 0.6-0.8, `peak` the expected peak load (same unit).
pub fn summarize(reports: &[&Report], margin: f64, peak: Option<f64>) -> RunsSummary {
    summarize_lines(
        reports
            .iter()
            .map(|r| RunLine {
                title: r.source.title.clone(),
                last_passing: r.last_passing,
                knee: r.knee,
            })
            .collect(),
        margin,
        peak,
    )
}

pub(crate) fn summarize_lines(runs: Vec<RunLine>, margin: f64, peak: Option<f64>) -> RunsSummary {
    let passing: Vec<u32> = runs.iter().filter_map(|r| r.last_passing).collect();
    let max_sustainable = if runs.is_empty() || passing.len() < runs.len() {
        None
    } else {
        passing.iter().copied().min()
    };
    let spread = passing
        .iter()
        .copied()
        .min()
        .zip(passing.iter().copied().max());
    let capacity = max_sustainable.map(|m| m as f64 * margin);
    let nodes = capacity
        .zip(peak)
        .filter(|(c, _)| *c > 0.0)
        .map(|(c, p)| (p / c).ceil() as u32 + 1);
    RunsSummary {
        runs,
        max_sustainable,
        spread,
        margin,
        capacity,
        nodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(lp: u32, knee: u32) -> RunLine {
        RunLine {
            title: format!("r{lp}"),
            last_passing: Some(lp),
            knee: Some(knee),
        }
    }

    #[test]
    fn article_node_cpu_example() {
        // 2a passes to 150, 3b to 100: max sustainable = min = 100; margin 0.7 -> 70;
        // peak 500 -> ceil(500 / 70) + 1 = 9 processes.
        let s = summarize_lines(vec![line(150, 175), line(100, 150)], 0.7, Some(500.0));
        assert_eq!(s.max_sustainable, Some(100));
        assert_eq!(s.spread, Some((100, 150)));
        assert!((s.capacity.unwrap() - 70.0).abs() < 1e-9);
        assert_eq!(s.nodes, Some(9));
        // Taking the best run instead: 150 x 0.7 = 105 -> ceil(500 / 105) + 1 = 6.
        let best = summarize_lines(vec![line(150, 175)], 0.7, Some(500.0));
        assert_eq!(best.nodes, Some(6));
    }

    #[test]
    fn a_run_without_a_passing_step_means_no_max_sustainable() {
        let mut runs = vec![line(150, 180)];
        runs.push(RunLine {
            title: "r1".into(),
            last_passing: None,
            knee: Some(120),
        });
        let s = summarize_lines(runs, 0.7, Some(500.0));
        assert_eq!(s.max_sustainable, None);
        assert_eq!(s.nodes, None);
        assert_eq!(s.spread, Some((150, 150)));
    }
}
