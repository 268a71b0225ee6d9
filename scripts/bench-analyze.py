#!/usr/bin/env python3
"""Baseline for scripts/bench-analyze.sh: a straightforward k6 CSV analyzer with the csv module.

Per step tag (stage=/step= in extra_tags): request count, failed count, p50/p95/p99/max of
http_req_duration (k6's interpolated percentiles over the sorted list), dropped iterations.
Usage: bench-analyze.py FILE.csv[.gz]
"""
import csv
import gzip
import sys


def pct(sorted_vals, p):
    if not sorted_vals:
        return 0.0
    i = p * (len(sorted_vals) - 1)
    lo, hi = int(i), min(int(i) + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (i - lo)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    steps, failed, dropped = {}, {}, 0
    with opener(path, "rt", newline="") as f:
        r = csv.reader(f)
        h = next(r)
        iname, ival, iexp, iextra = h.index("metric_name"), h.index("metric_value"), h.index("expected_response"), h.index("extra_tags")
        for row in r:
            name = row[iname]
            if name == "http_req_duration":
                tag = None
                for kv in row[iextra].split("&"):
                    if kv.startswith("stage=") or kv.startswith("step="):
                        tag = kv.split("=", 1)[1]
                if tag is None or tag in ("ramp", "warmup"):
                    continue
                steps.setdefault(tag, []).append(float(row[ival]))
                if row[iexp] == "false":
                    failed[tag] = failed.get(tag, 0) + 1
            elif name == "dropped_iterations":
                dropped += int(float(row[ival]))
    for tag in sorted(steps):
        v = sorted(steps[tag])
        print(f"{tag} n={len(v)} failed={failed.get(tag, 0)} p50={pct(v, .5):.2f} p95={pct(v, .95):.2f} p99={pct(v, .99):.2f} max={v[-1]:.2f}")
    print(f"dropped={dropped}")


if __name__ == "__main__":
    main(sys.argv[1])
