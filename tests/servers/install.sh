#!/usr/bin/env bash
# Installs the real servers of the tests/llama_cpp_python.rs and tests/gateway.rs tiers
# into a per-machine cache outside any clone, so the compile happens once per machine:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sitegen/llama-cpp-python-<version>   (from PyPI's sdist)
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sitegen/litellm-<version>            (PyPI wheels)
# Idempotent: an installed and importable venv is kept as it is.
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/sitegen"
LCP_VERSION=0.3.36
# The newest whose [proxy] extra resolves on PyPI: from 1.108.8 on it needs an
# unpublished litellm-proxy.
LITELLM_VERSION=1.108.7
mkdir -p "$cache"

lcp="$cache/llama-cpp-python-$LCP_VERSION"
if "$lcp/bin/python" -c "import llama_cpp.server.app, llama_cpp; assert llama_cpp.__version__ == '$LCP_VERSION'" 2>/dev/null; then
  echo "llama-cpp-python $LCP_VERSION: already in $lcp"
else
  echo "llama-cpp-python $LCP_VERSION: building into $lcp (about 4 min on two cores, once per machine)"
  rm -rf "$lcp"
  python3 -m venv "$lcp"
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  "$lcp/bin/pip" download --disable-pip-version-check --quiet --no-deps --no-binary llama-cpp-python \
    -d "$src" "llama-cpp-python==$LCP_VERSION"
  tar xzf "$src/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$src"
  # llama.cpp's "common" library is half the compile and the Python package
  # never loads it (its own CMakeLists leaves it out for Emscripten); where the
  # line is not found the build is the plain one.
  cml="$src/llama_cpp_python-$LCP_VERSION/CMakeLists.txt"
  sed -i 's/set(LLAMA_BUILD_COMMON ON CACHE BOOL/set(LLAMA_BUILD_COMMON OFF CACHE BOOL/' "$cml"
  # CPU only, portable, no multimodal library.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
    "$lcp/bin/pip" install --disable-pip-version-check --quiet --no-cache-dir \
    "$src/llama_cpp_python-${LCP_VERSION}[server]"
fi

litellm="$cache/litellm-$LITELLM_VERSION"
if "$litellm/bin/python" -c "
import importlib.metadata as m
assert m.version('litellm') == '$LITELLM_VERSION'
import fastapi, uvicorn, apscheduler, orjson, litellm_proxy_extras" 2>/dev/null; then
  echo "litellm $LITELLM_VERSION: already in $litellm"
else
  echo "litellm $LITELLM_VERSION: installing into $litellm (about 1 min)"
  rm -rf "$litellm"
  python3 -m venv "$litellm"
  "$litellm/bin/pip" install --disable-pip-version-check --quiet "litellm[proxy]==$LITELLM_VERSION"
fi
