#!/usr/bin/env python3
"""Validate the manifests of `perflab export k8s` offline: the TestRun against k6-operator's
TestRun schema vendored in schemas/k6-operator/ (with additionalProperties: false, so a
misspelt field fails), everything else with kubernetes-validate --strict (PyPI). Exit 0 when
all are valid, 1 otherwise (each problem printed with its file)."""
import json
import os
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "schemas", "k6-operator", "testrun.schema.json")


def main():
    vendored = json.load(open(SCHEMA))
    bad, others = 0, []
    files = sorted(f for f in os.listdir(sys.argv[1]) if f.endswith(".yaml"))
    if not files:
        print(f"{sys.argv[1]}: no YAML files", file=sys.stderr)
        return 1
    for name in files:
        path = os.path.join(sys.argv[1], name)
        for doc in yaml.safe_load_all(open(path)):
            if doc.get("kind") == vendored["kind"]:
                if doc.get("apiVersion") != vendored["apiVersion"]:
                    print(f"{path}: apiVersion {doc.get('apiVersion')} is not {vendored['apiVersion']}")
                    bad += 1
                    continue
                errors = list(jsonschema.Draft7Validator(vendored["schema"]).iter_errors(doc))
                for e in errors:
                    print(f"{path}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
                bad += bool(errors)
            else:
                others.append(path)
    if others:
        r = subprocess.run(["kubernetes-validate", "--strict", "--quiet", *others])
        bad += r.returncode != 0
    return 1 if bad else 0


sys.exit(main())
