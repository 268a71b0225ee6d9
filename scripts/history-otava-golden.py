#!/usr/bin/env python3
"""Regenerate tests/fixtures/history/otava-golden.json: Apache Otava's change points on the
series of PyPI `otava-test-data` and on perflab's synthetic series, which the tests compare
with perflab's port (`analyze::changepoint`). Run through scripts/history-otava-golden.sh,
which installs apache-otava 0.8.0 and otava-test-data into a scratch venv."""
import json
import sys

import numpy as np
import otava
from importlib.metadata import version
from otava.analysis import compute_change_points, fill_missing
from otava_test_data.generators.combiner import CombinationGenerator

SETTINGS = [
    {"window": 50, "max_pvalue": 0.001},  # Otava's defaults
    {"window": 30, "max_pvalue": 0.001},  # perflab's
    {"window": 10, "max_pvalue": 0.05},  # small windows, many weak points merged
]


def otava_points(values, s):
    v = list(values)
    fill_missing(v)
    cps, _ = compute_change_points(
        v, window_len=s["window"], max_pvalue=s["max_pvalue"], min_magnitude=0.0
    )
    return [
        {
            "index": int(c.index),
            "pvalue": float(c.stats.pvalue),
            "mean_before": float(c.stats.mean_1),
            "mean_after": float(c.stats.mean_2),
        }
        for c in cps
    ]


def synthetic(seed):
    """perflab's noise (2.7 % on busy steps) around 10.0, a 5 % step in half of them."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(12):
        n = [20, 30, 45][i % 3]
        base = 10.0 * (1 + 0.027 * rng.standard_normal(n))
        name = f"perflab-noise-{i}"
        if i % 2 == 0:
            at = n // 2 + (i % 5) - 2
            base[at:] *= 1.05
            name = f"perflab-step5-at{at}-{i}"
        out.append((name, [round(float(x), 6) for x in base]))
    return out


def otava_reads_csv(csv_path, window, pvalue):
    """Otava's own CSV import (what `otava analyze` does with a csv test), then its analysis:
    the change points per metric of each branch of a CSV `perflab history --csv` printed."""
    from datetime import datetime, timezone
    from otava.analysis import compute_change_points as _unused  # noqa: F401 (the same module)
    from otava.data_selector import DataSelector
    from otava.importer import CsvImporter
    from otava.series import AnalysisOptions
    from otava.test_config import CsvMetric, CsvTestConfig

    with open(csv_path) as f:
        head = f.readline().strip().split(",")
        branches = sorted({line.split(",")[1] for line in f})
    metrics = [m for m in head if m not in ("time", "branch", "run", "components")]
    conf = CsvTestConfig(
        name="perflab",
        file=csv_path,
        time_column="time",
        metrics=[CsvMetric(m, 1, 1.0, m) for m in metrics],
        attributes=["run"],
    )
    out = []
    for b in branches:
        sel = DataSelector()
        sel.branch = b
        sel.since_time = datetime(1970, 1, 1, tzinfo=timezone.utc)
        sel.until_time = datetime(2100, 1, 1, tzinfo=timezone.utc)
        series = CsvImporter().fetch_data(conf, sel)
        opts = AnalysisOptions()
        opts.window_len, opts.max_pvalue = window, pvalue
        analyzed = series.analyze(opts)
        for m in metrics:
            out.append(
                {
                    "branch": b,
                    "metric": m,
                    "window": window,
                    "max_pvalue": pvalue,
                    "points": [
                        {
                            "index": int(c.index),
                            "pvalue": float(c.stats.pvalue),
                            "mean_before": float(c.stats.mean_1),
                            "mean_after": float(c.stats.mean_2),
                        }
                        for c in analyzed.change_points.get(m, [])
                    ],
                }
            )
    return out


def main(path, csv_path=None):
    gen = CombinationGenerator(lengths=[50, 500], seed=42)
    series = [
        (ts.generator_name + f" L{len(ts)}", [round(float(x), 4) for x in ts.data])
        for ts in gen.generate_all_test_cases(noise_levels=[0, 2, 5, 10])
    ]
    series += synthetic(2026)
    cases = []
    for name, values in series:
        cases.append(
            {
                "name": name,
                "values": values,
                "otava": [{**s, "points": otava_points(values, s)} for s in SETTINGS],
            }
        )
    doc = {
        "generated_by": "scripts/history-otava-golden.sh",
        "apache_otava": version("apache-otava"),
        "otava_test_data": version("otava-test-data"),
        "cases": cases,
    }
    if csv_path:
        import os

        doc["csv"] = os.path.basename(csv_path)
        doc["csv_points"] = otava_reads_csv(csv_path, 30, 0.0002)
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} series")


if __name__ == "__main__":
    main(*sys.argv[1:3])
