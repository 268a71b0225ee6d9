//! Several load generators, one analysis: the per-instance results of k6 execution segments
//! merged into the data of one generator. Per-step latencies merge as HDR histograms (a
//! percentile of the merged histogram, never an average of percentiles), counts and drops add
//! up, VUs add up per second across instances; k6's summaries merge into counts only (their
//! percentiles cannot be combined), for the cross-check. Pure.
use super::k6csv::{K6Data, StepAgg};
use super::summary::{K6Summary, SummaryStep};
use std::collections::BTreeMap;

/// Merge the data of several generators (in instance order) into one.
pub(crate) fn merge_k6(parts: Vec<K6Data>) -> K6Data {
    let mut it = parts.into_iter();
    let Some(mut out) = it.next() else {
        return K6Data::default();
    };
    let rest: Vec<K6Data> = it.collect();
    if rest.is_empty() {
        return out;
    }
    let vus = sum_vus_per_second(std::iter::once(&out.vus).chain(rest.iter().map(|p| &p.vus)));
    for p in rest {
        out.convention = out.convention.or(p.convention);
        for s in p.steps {
            match out.steps.iter_mut().find(|o| o.name == s.name) {
                Some(o) => add_step(o, &s),
                None => out.steps.push(s),
            }
        }
        for (i, sec) in p.timeline.secs.iter().enumerate() {
            let o = out.timeline.get_mut(p.timeline.base_s + i as i64);
            o.done = o.done.saturating_add(sec.done);
            o.ok = o.ok.saturating_add(sec.ok);
            o.non200 = o.non200.saturating_add(sec.non200);
            o.started = o.started.saturating_add(sec.started);
            o.busy_ms += sec.busy_ms;
            o.dropped = o.dropped.saturating_add(sec.dropped);
            if let Some(h) = &sec.hist {
                match &mut o.hist {
                    Some(oh) => oh.add(h),
                    None => o.hist = Some(h.clone()),
                }
            }
        }
        for (i, (ok, drops)) in p.timeline.fine.iter().enumerate() {
            let o = out
                .timeline
                .fine_mut((p.timeline.fine_base + i as i64) * 100);
            o.0 = o.0.saturating_add(*ok);
            o.1 = o.1.saturating_add(*drops);
        }
        out.vus_max += p.vus_max;
        out.dropped_total += p.dropped_total;
        out.dropped_warmup += p.dropped_warmup;
        out.first_drop_ms = min_opt(out.first_drop_ms, p.first_drop_ms);
        out.recover_span = match (out.recover_span, p.recover_span) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        out.recover_sent += p.recover_sent;
        for (k, v) in p.excluded {
            *out.excluded.entry(k).or_default() += v;
        }
        out.rows += p.rows;
        out.requests += p.requests;
        out.first_ms = min_opt(out.first_ms, p.first_ms);
        out.last_ms = max_opt(out.last_ms, p.last_ms);
        out.first_request_ms = min_opt(out.first_request_ms, p.first_request_ms);
        out.second_resolution |= p.second_resolution;
        out.skipped_rows += p.skipped_rows;
        out.first_skipped_line = out.first_skipped_line.or(p.first_skipped_line);
    }
    out.steps.sort_by_key(|s| (s.tag.order, s.tag.target));
    // The per-second VU column is the sum over instances too.
    for s in out.timeline.secs.iter_mut() {
        s.vus = None;
    }
    for (t, v) in &vus {
        out.timeline.get_mut(t.div_euclid(1000)).vus = Some(*v);
    }
    out.vus = vus;
    out.timeline.trim();
    out
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn add_step(o: &mut StepAgg, s: &StepAgg) {
    o.all.add(&s.all);
    o.ok.add(&s.ok);
    o.requests += s.requests;
    o.ok_count += s.ok_count;
    for (k, v) in &s.statuses {
        *o.statuses.entry(*k).or_default() += v;
    }
    for (k, v) in &s.error_codes {
        *o.error_codes.entry(k.clone()).or_default() += v;
    }
    o.first_start_ms = o.first_start_ms.min(s.first_start_ms);
    o.last_start_ms = o.last_start_ms.max(s.last_start_ms);
    o.last_end_ms = o.last_end_ms.max(s.last_end_ms);
}

/// Active VUs of several instances summed per second: each instance counts with its largest
/// sample in that second, or its last earlier sample while it runs (k6 samples about once a
/// second, not in step across processes). Samples are `(unix ms, VUs)`; the result is keyed by
/// the start of each second.
pub(crate) fn sum_vus_per_second<'a>(
    instances: impl Iterator<Item = &'a Vec<(i64, f64)>>,
) -> Vec<(i64, f64)> {
    let mut total: BTreeMap<i64, f64> = BTreeMap::new();
    for samples in instances {
        let mut per_sec: BTreeMap<i64, f64> = BTreeMap::new();
        for (t, v) in samples {
            let e = per_sec.entry(t.div_euclid(1000)).or_insert(*v);
            *e = e.max(*v);
        }
        let (Some(&first), Some(&last)) = (per_sec.keys().next(), per_sec.keys().next_back())
        else {
            continue;
        };
        let mut cur = 0.0;
        for sec in first..=last {
            if let Some(v) = per_sec.get(&sec) {
                cur = *v;
            }
            *total.entry(sec).or_default() += cur;
        }
    }
    total.into_iter().map(|(s, v)| (s * 1000, v)).collect()
}

/// Merge the instances' k6 summaries for the cross-check: counts, drops and VUs add up, failure
/// rates are weighted by count, the maximum is the largest; percentiles are left out (the
/// merged histograms are the figures, k6 cannot say what the merged percentile is).
pub(crate) fn merge_summaries(parts: Vec<K6Summary>) -> K6Summary {
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    let mut out = K6Summary::default();
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    let mut failed: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for p in parts {
        out.dropped_iterations = add(out.dropped_iterations, p.dropped_iterations);
        out.http_reqs = add(out.http_reqs, p.http_reqs);
        out.vus_max = match (out.vus_max, p.vus_max) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
        };
        for (name, s) in p.steps {
            let o = out
                .steps
                .entry(name.clone())
                .or_insert_with(SummaryStep::default);
            o.count = add(o.count, s.count);
            o.max_ms = match (o.max_ms, s.max_ms) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            o.slo_p95_ms = o.slo_p95_ms.or(s.slo_p95_ms);
            o.slo_p99_ms = o.slo_p99_ms.or(s.slo_p99_ms);
            if let Some(r) = s.failed_rate {
                let n = s.count.unwrap_or(0);
                let f = failed.entry(name).or_default();
                f.0 += r * n as f64;
                f.1 += n;
            }
        }
    }
    for (name, (failed_n, n)) in failed {
        if let Some(o) = out.steps.get_mut(&name) {
            o.failed_rate = Some(if n > 0 { failed_n / n as f64 } else { 0.0 });
        }
    }
    out
}

/// Largest gap between the instances' first requests (ms), when there are at least two.
pub(crate) fn start_spread_ms(first_requests: &[Option<i64>]) -> Option<i64> {
    let v: Vec<i64> = first_requests.iter().flatten().copied().collect();
    if v.len() < 2 {
        return None;
    }
    Some(v.iter().max()? - v.iter().min()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::k6csv::read_k6_csv;

    const HEADER: &str = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n";

    fn req(t: i64, ms: f64, status: u16, stage: &str) -> String {
        let ok = (200..400).contains(&status);
        format!(
            "http_req_duration,{t},{ms},,,,{ok},,GET,u,HTTP/1.1,step,,{status},,,u,stage={stage},\n"
        )
    }

    fn data(lines: &[String]) -> K6Data {
        let csv = format!("{HEADER}{}", lines.concat());
        read_k6_csv(std::io::Cursor::new(csv.into_bytes())).unwrap()
    }

    #[test]
    fn merged_percentiles_come_from_the_merged_histogram() {
        // Instance A: 10 fast requests; instance B: 10 slow ones. Averaging the two p50s
        // would give 55 ms; the merged distribution's p50 lies between the two groups.
        let a: Vec<String> = (0..10)
            .map(|i| req(1_700_000_000_100 + i * 10, 10.0, 200, "r0100"))
            .collect();
        let b: Vec<String> = (0..10)
            .map(|i| req(1_700_000_000_105 + i * 10, 100.0 + i as f64, 200, "r0100"))
            .collect();
        let (da, db) = (data(&a), data(&b));
        let m = merge_k6(vec![da.clone(), db.clone()]);
        assert_eq!(m.steps.len(), 1);
        let s = &m.steps[0];
        assert_eq!(s.requests, 20);
        assert_eq!(s.ok_count, 20);
        let p = s.all.percentiles();
        assert_eq!(p.count, 20);
        // k6's definition on 20 values: rank 9.5 between 10 ms and 100 ms.
        assert!((p.p50_ms - 55.0).abs() < 0.5, "{p:?}");
        // p95: rank 18.05 among the slow ones (100..109): 108.05.
        assert!((p.p95_ms - 108.05).abs() < 0.2, "{p:?}");
        assert!((p.max_ms - 109.0).abs() < 1e-9);
        assert_eq!(m.requests, 20);
        assert_eq!(
            m.first_request_ms,
            Some(1_700_000_000_005),
            "earliest start over both instances (B's first request: 100 ms ending at .105)"
        );
        // Timeline counts add up per second.
        let sec = m.timeline.get(1_700_000_000).unwrap();
        assert_eq!(sec.done, 20);
    }

    #[test]
    fn steps_statuses_and_drops_add_up() {
        let mut a = vec![
            req(1_700_000_000_100, 5.0, 200, "r0100"),
            req(1_700_000_001_100, 5.0, 500, "r0200"),
        ];
        a.push("dropped_iterations,1700000001500,2,,,,,,,,,step,,,,,,,\n".into());
        let b = vec![
            req(1_700_000_000_200, 7.0, 200, "r0100"),
            req(1_700_000_001_300, 5.0, 200, "r0200"),
            req(1_700_000_001_400, 5.0, 0, "r0200"),
        ];
        let m = merge_k6(vec![data(&a), data(&b)]);
        let names: Vec<&str> = m.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["r0100", "r0200"]);
        let s2 = &m.steps[1];
        assert_eq!(s2.requests, 3);
        assert_eq!(s2.ok_count, 1);
        assert_eq!(s2.statuses.get(&500), Some(&1));
        assert_eq!(s2.statuses.get(&0), Some(&1));
        assert_eq!(m.dropped_total, 2);
        assert_eq!(
            m.timeline
                .ok_and_drops(1_700_000_001_000, 1_700_000_002_000),
            (1, 2)
        );
    }

    #[test]
    fn vus_add_up_per_second_across_instances() {
        // k6 samples VUs about once a second at its own phase: A at .100, B at .900.
        let a = vec![(1_000_100, 10.0), (1_001_100, 12.0), (1_002_100, 14.0)];
        let b = vec![(1_000_900, 5.0), (1_002_900, 7.0)];
        let v = sum_vus_per_second([&a, &b].into_iter());
        // Second 1001: B has no sample and counts with its last one (5).
        assert_eq!(
            v,
            vec![(1_000_000, 15.0), (1_001_000, 17.0), (1_002_000, 21.0)]
        );
    }

    #[test]
    fn merged_data_carries_summed_vus() {
        let mut a = vec![req(1_700_000_000_100, 5.0, 200, "r0100")];
        a.push("vus,1700000000050,3,,,,,,,,,,,,,,,,\n".into());
        a.push("vus_max,1700000000050,100,,,,,,,,,,,,,,,,\n".into());
        let mut b = vec![req(1_700_000_000_200, 5.0, 200, "r0100")];
        b.push("vus,1700000000950,4,,,,,,,,,,,,,,,,\n".into());
        b.push("vus_max,1700000000950,100,,,,,,,,,,,,,,,,\n".into());
        let m = merge_k6(vec![data(&a), data(&b)]);
        assert_eq!(m.vus, vec![(1_700_000_000_000, 7.0)]);
        assert_eq!(m.vus_max, 200.0);
        assert_eq!(m.timeline.get(1_700_000_000).unwrap().vus, Some(7.0));
    }

    #[test]
    fn one_instance_is_unchanged() {
        let a = data(&[req(1_700_000_000_100, 5.0, 200, "r0100")]);
        let m = merge_k6(vec![a.clone()]);
        assert_eq!(m.requests, a.requests);
        assert_eq!(m.vus, a.vus);
    }

    #[test]
    fn summaries_merge_counts_and_weighted_failure_rates() {
        let mk = |count: u64, rate: f64, max: f64| {
            let mut s = K6Summary::default();
            s.steps.insert(
                "r0100".into(),
                SummaryStep {
                    count: Some(count),
                    med_ms: Some(10.0),
                    p95_ms: Some(20.0),
                    failed_rate: Some(rate),
                    max_ms: Some(max),
                    slo_p95_ms: Some(300.0),
                    ..Default::default()
                },
            );
            s.dropped_iterations = Some(1);
            s.http_reqs = Some(count);
            s
        };
        let m = merge_summaries(vec![mk(100, 0.0, 50.0), mk(300, 0.1, 70.0)]);
        let s = &m.steps["r0100"];
        assert_eq!(s.count, Some(400));
        assert!((s.failed_rate.unwrap() - 0.075).abs() < 1e-9);
        assert_eq!(s.max_ms, Some(70.0));
        assert_eq!(s.p95_ms, None, "percentiles of summaries cannot be merged");
        assert_eq!(s.slo_p95_ms, Some(300.0));
        assert_eq!(m.dropped_iterations, Some(2));
        assert_eq!(m.http_reqs, Some(400));
    }

    #[test]
    fn start_spread() {
        assert_eq!(start_spread_ms(&[Some(1000), Some(1040), None]), Some(40));
        assert_eq!(start_spread_ms(&[Some(1000)]), None);
    }
}
