# Sourced by .ci/run: a real FastAPI application (the notes service under
# integrations/tools/openapi/tests/data/notes_app.py) on 127.0.0.1, serving its
# own /openapi.json, and the Petstore specs of openapi-spec-validator 0.9.0's
# source distribution, for ragloom-tools-openapi's tests.
#
# A venv at ~/.cache/ragloom/openapi-venv with pinned fastapi and uvicorn; the
# sdist unpacked under ~/.cache/ragloom/openapi-spec-validator-0.9.0.
# Exports RAGLOOM_TEST_OPENAPI_URL and RAGLOOM_TEST_PETSTORE_DIR.

source "$(dirname "${BASH_SOURCE[0]}")/../venv.sh"

ragloom_openapi_setup() {
  local cache="$HOME/.cache/ragloom"
  local venv="$cache/openapi-venv"
  local port=18472
  mkdir -p "$cache"
  ragloom_pinned_venv "$venv" openapi "fastapi, uvicorn" fastapi==0.165.0 uvicorn==0.55.0 || return 1

  local sdist="$cache/openapi-spec-validator-0.9.0"
  if ! [ -f "$sdist/tests/integration/data/v3.1/petstore.yaml" ]; then
    echo "openapi: fetching openapi-spec-validator 0.9.0's source distribution"
    local tmp
    tmp=$(mktemp -d)
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" download -q --disable-pip-version-check \
      --no-binary :all: --no-deps -d "$tmp" openapi-spec-validator==0.9.0
    tar xzf "$tmp"/openapi_spec_validator-0.9.0.tar.gz -C "$cache"
    mv "$cache/openapi_spec_validator-0.9.0" "$sdist"
    rm -rf "$tmp"
  fi
  export RAGLOOM_TEST_PETSTORE_DIR="$sdist/tests/integration/data"

  local up="import sys, urllib.request
try:
    urllib.request.urlopen('http://127.0.0.1:$port/openapi.json', timeout=2)
except Exception:
    sys.exit(1)"
  if ! "$venv/bin/python" -c "$up" 2>/dev/null; then
    echo "openapi: starting the notes service on 127.0.0.1:$port"
    setsid nohup "$venv/bin/uvicorn" --app-dir "$PWD/integrations/tools/openapi/tests/data" \
      notes_app:app --host 127.0.0.1 --port "$port" >"$cache/openapi-notes.log" 2>&1 </dev/null &
    local i
    for i in $(seq 1 50); do
      "$venv/bin/python" -c "$up" 2>/dev/null && break
      sleep 0.2
    done
    "$venv/bin/python" -c "$up" \
      || { echo "openapi: the notes service did not start"; cat "$cache/openapi-notes.log"; return 1; }
  fi
  export RAGLOOM_TEST_OPENAPI_URL="http://127.0.0.1:$port/"
}

ragloom_openapi_setup
unset -f ragloom_openapi_setup
