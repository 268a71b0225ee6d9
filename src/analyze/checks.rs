//! The article's arithmetic on its own numbers (lab-spec §6), as small pure functions.
use super::model::Stability;

/// Little's law solved for W: W = L / λ (s).
pub(crate) fn little_w(l: f64, lambda_per_s: f64) -> f64 {
    l / lambda_per_s
}

/// CPU ceiling: cores x 1000 / CPU ms per request (requests/s).
pub(crate) fn cpu_ceiling(cores: f64, cpu_ms_per_req: f64) -> f64 {
    cores * 1000.0 / cpu_ms_per_req
}

/// A pool of N slots each held W seconds serves at most N / W requests/s.
pub(crate) fn pool_ceiling(slots: f64, w_s: f64) -> f64 {
    slots / w_s
}

/// The cumulative p95 crosses a threshold only when bad samples B exceed G / 19.
pub(crate) fn abort_bad_needed(good: f64) -> f64 {
    good / 19.0
}

/// Closed model throughput: VUs / (R + Z).
pub(crate) fn closed_rate(vus: f64, r_s: f64, z_s: f64) -> f64 {
    vus / (r_s + z_s)
}

/// Closed model response time implied by the achieved rate: R = N / X - Z.
pub(crate) fn closed_implied_r(vus: f64, x_per_s: f64, z_s: f64) -> f64 {
    vus / x_per_s - z_s
}

/// Samples at or beyond percentile `pct` among `n`: n x (1 - pct / 100).
pub(crate) fn tail_samples(n: f64, pct: f64) -> f64 {
    n * (1.0 - pct / 100.0)
}

/// Seed 003: in-flight in the second half vs the first half of a window. Growth of 15-20 %
/// happens in stable systems (start-up bias, Poisson noise); half again or more with at least
/// one more request in flight means the queue grows.
pub(crate) fn stability(first_half: f64, second_half: f64) -> Stability {
    let grow = second_half - first_half;
    if first_half <= 0.0 {
        return if second_half > 2.0 {
            Stability::Unstable
        } else {
            Stability::Stable
        };
    }
    let ratio = second_half / first_half;
    if ratio >= 1.5 && grow >= 1.0 {
        Stability::Unstable
    } else if ratio >= 1.25 && grow >= 1.0 {
        Stability::Drifting
    } else {
        Stability::Stable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The article's worked examples (lab-spec §6).
    #[test]
    fn php_step_180_vus_to_latency() {
        // 228 VUs in use at 180 rps -> W = 1.27 s (p95 was 1.11 s).
        assert!((little_w(228.0, 180.0) - 1.2667).abs() < 1e-3);
    }

    #[test]
    fn node_1c_queue_to_latency() {
        // 400 waiting at 430 served/s -> 0.93 s (p50 892 ms).
        assert!((little_w(400.0, 430.0) - 0.930).abs() < 1e-3);
    }

    #[test]
    fn php_cpu_ceiling() {
        // 2 cores, 8.9 ms CPU per ok -> ~225 rps; 8-10 ms -> 200-250.
        assert!((cpu_ceiling(2.0, 8.9) - 224.7).abs() < 0.1);
        assert_eq!(cpu_ceiling(2.0, 10.0), 200.0);
        assert_eq!(cpu_ceiling(2.0, 8.0), 250.0);
        // Node: 1 core, 5.5 ms -> ~182.
        assert!((cpu_ceiling(1.0, 5.5) - 181.8).abs() < 0.1);
    }

    #[test]
    fn abort_lag_needs_g_over_19_bad_samples() {
        // 9,350 good samples -> B > 492.
        assert!((abort_bad_needed(9350.0) - 492.1).abs() < 0.1);
        // And the definition: with B just above G/19 the bad share exceeds 5 %.
        let (g, b) = (9350.0, 493.0);
        assert!(b / (g + b) > 0.05);
        assert!(492.0 / (g + 492.0) < 0.05);
    }

    #[test]
    fn closed_model_nominal_and_implied() {
        // 60 VUs, think 0.2 s, R 6 ms -> ~291 nominal; achieved 169.3 -> R = 0.154 s.
        assert!((closed_rate(60.0, 0.006, 0.2) - 291.3).abs() < 0.1);
        assert!((closed_implied_r(60.0, 169.3, 0.2) - 0.1544).abs() < 1e-3);
    }

    #[test]
    fn pool_ceiling_php_slow() {
        // N = 5 workers, W = 0.112 s -> 44.6 rps; 10 -> 89.3; 40 -> 357.
        assert!((pool_ceiling(5.0, 0.112) - 44.64).abs() < 0.01);
        assert!((pool_ceiling(40.0, 0.112) - 357.1).abs() < 0.1);
    }

    #[test]
    fn p99_tail_of_a_short_step() {
        // 150 rps x 22 s -> p99 rests on 33 requests.
        assert!((tail_samples(150.0 * 22.0, 99.0) - 33.0).abs() < 1e-9);
    }

    #[test]
    fn seed_003_stability_rows() {
        assert_eq!(stability(7.32, 8.93), Stability::Stable); // +22 %: noise
        assert_eq!(stability(1.78, 1.96), Stability::Stable);
        assert_eq!(stability(30.2, 41.0), Stability::Drifting); // near the edge
        assert_eq!(stability(94.2, 234.7), Stability::Unstable);
        assert_eq!(stability(0.2, 0.4), Stability::Stable); // tiny absolute growth
    }
}
