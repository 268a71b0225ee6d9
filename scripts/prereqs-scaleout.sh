#!/usr/bin/env bash
# What the scale-out tests need (tests/matrix_*.rs, tests/export_k8s.rs), on top of
# scripts/prereqs.sh: GNU parallel, sshd and rsync (a matrix over ssh logins to this machine),
# Slurm and munge (a single-node cluster the test starts), and the Kubernetes manifests'
# offline validators from PyPI (kubernetes-validate for the Jobs, jsonschema for the TestRun
# against the vendored k6-operator schema).
set -euo pipefail
missing=()
command -v parallel >/dev/null 2>&1 || missing+=(parallel)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
command -v rsync >/dev/null 2>&1 || missing+=(rsync)
[ -x /usr/sbin/slurmctld ] || missing+=(slurmctld)
[ -x /usr/sbin/slurmd ] || missing+=(slurmd)
command -v sbatch >/dev/null 2>&1 || missing+=(slurm-client)
[ -x /usr/sbin/munged ] || missing+=(munge)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! python3 -c 'import kubernetes_validate, jsonschema, yaml' >/dev/null 2>&1; then
  echo "installing: kubernetes-validate (PyPI)" >&2
  python3 -m pip install --quiet kubernetes-validate jsonschema pyyaml
fi
