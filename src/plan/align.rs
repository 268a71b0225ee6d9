//! Minute alignment: when to start k6 so the first step begins on a wall-clock minute (:00),
//! so that minute-boundary host stalls fall into untagged ramp windows (lab-spec §4). Pure.
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::{Deserialize, Serialize};

/// When to start k6 and what lands where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alignment {
    /// t = 0 of the plan's timeline (k6 test start).
    pub k6_start: DateTime<Utc>,
    /// How long to wait from `now` until `k6_start`.
    pub wait_ms: i64,
    /// Wall-clock instant of the first step (warm-up end for breakpoint.js): on :00 when aligned.
    pub first_step_at: DateTime<Utc>,
    /// Scheduled end of the k6 timeline.
    pub end_at: DateTime<Utc>,
    pub aligned: bool,
}

/// `plan::align` on bare numbers (offset of the first step and total duration, seconds).
pub(crate) fn align_offset(
    now: DateTime<Utc>,
    offset_s: u32,
    total_s: u32,
    enabled: bool,
) -> Alignment {
    let offset = Duration::seconds(offset_s as i64);
    let k6_start = if enabled {
        let earliest_first = now + offset;
        let floor = earliest_first
            .duration_trunc(Duration::minutes(1))
            .expect("minute truncation of a valid time");
        let boundary = if floor == earliest_first {
            floor
        } else {
            floor + Duration::minutes(1)
        };
        boundary - offset
    } else {
        now
    };
    Alignment {
        k6_start,
        wait_ms: (k6_start - now).num_milliseconds(),
        first_step_at: k6_start + offset,
        end_at: k6_start + Duration::seconds(total_s as i64),
        aligned: enabled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(h: u32, m: u32, s: u32, ms: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 10, 30, h, m, s).unwrap() + Duration::milliseconds(ms as i64)
    }

    #[test]
    fn breakpoint_warmup_ends_on_the_minute() {
        // article: k6 started at :40 with a 20 s warm-up
        let a = align_offset(t(11, 44, 21, 0), 20, 230, true);
        assert_eq!(a.k6_start, t(11, 44, 40, 0));
        assert_eq!(a.first_step_at, t(11, 45, 0, 0));
        assert_eq!(a.wait_ms, 19_000);
    }

    #[test]
    fn too_late_for_this_minute_takes_the_next() {
        let a = align_offset(t(11, 44, 40, 1), 20, 0, true);
        assert_eq!(a.k6_start, t(11, 45, 40, 0));
        assert_eq!(a.wait_ms, 59_999);
    }

    #[test]
    fn exactly_on_time_waits_zero() {
        let a = align_offset(t(11, 44, 40, 0), 20, 0, true);
        assert_eq!(a.wait_ms, 0);
    }

    #[test]
    fn crosses_hour_and_day() {
        let a = align_offset(t(23, 59, 50, 500), 0, 0, true);
        assert_eq!(
            a.k6_start,
            Utc.with_ymd_and_hms(2026, 10, 31, 0, 0, 0).unwrap()
        );
        assert_eq!(a.wait_ms, 9_500);
    }

    #[test]
    fn warmup_longer_than_a_minute() {
        let a = align_offset(t(10, 0, 10, 0), 90, 0, true);
        assert_eq!(a.first_step_at, t(10, 2, 0, 0));
        assert_eq!(a.k6_start, t(10, 0, 30, 0));
    }

    #[test]
    fn disabled_starts_now() {
        let now = t(10, 0, 10, 123);
        let a = align_offset(now, 20, 100, false);
        assert_eq!(a.k6_start, now);
        assert_eq!(a.wait_ms, 0);
        assert_eq!(a.end_at, now + Duration::seconds(100));
    }
}
