#!/usr/bin/env python3
"""Vendor k6-operator's TestRun schema for the offline check of `perflab export k8s`.

Usage: scripts/vendor-k6-operator-schema.py CRD.yaml COMMIT > schemas/k6-operator/testrun.schema.json

CRD.yaml is config/crd/bases/k6.io_testruns.yaml of grafana/k6-operator at COMMIT. The
openAPIV3Schema of its served version is kept with the descriptions dropped, and every object
that lists its properties gets `additionalProperties: false`, so a misspelt field fails (the
API server would prune it silently)."""
import json
import sys

import yaml


def close(node):
    if isinstance(node, dict):
        node.pop("description", None)
        for v in node.values():
            close(v)
        if (
            node.get("type") == "object"
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
    elif isinstance(node, list):
        for v in node:
            close(v)


def main():
    crd = yaml.safe_load(open(sys.argv[1]))
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served")]
    schema = version["schema"]["openAPIV3Schema"]
    close(schema)
    # metadata is an ObjectMeta the API server checks: its own fields are allowed here
    schema["properties"]["metadata"].pop("additionalProperties", None)
    out = {
        "$comment": f"k6-operator {crd['metadata']['name']} {version['name']} openAPIV3Schema, grafana/k6-operator commit {sys.argv[2]} (Apache-2.0), descriptions dropped, additionalProperties: false added (scripts/vendor-k6-operator-schema.py)",
        "apiVersion": f"{crd['spec']['group']}/{version['name']}",
        "kind": crd["spec"]["names"]["kind"],
        "schema": schema,
    }
    json.dump(out, sys.stdout, indent=None, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


main()
