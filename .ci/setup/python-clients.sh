# Sourced by .ci/run: the official OpenAI and Model Context Protocol Python SDKs,
# which the conformance tests of `ragloom serve` drive against the server.
#
# A venv at ~/.cache/ragloom/clients-venv with pinned `openai` and `mcp`; pip's
# cache lives under ~/.cache/ragloom/pip. Idempotent: nothing is installed when
# both packages already import at the pinned versions.
# Exports RAGLOOM_TEST_CLIENTS_PYTHON (the venv's python).

ragloom_clients_setup() {
  local cache="$HOME/.cache/ragloom"
  local venv="$cache/clients-venv"
  local py="$venv/bin/python"
  local openai_version="3.51.0"
  local mcp_version="2.3.0"
  mkdir -p "$cache"

  local check="import sys
from importlib.metadata import version
import openai, mcp, mcp.client.streamable_http, mcp.client.stdio
sys.exit(0 if (version('openai'), version('mcp')) == ('$openai_version', '$mcp_version') else 1)"
  if "$py" -c "$check" 2>/dev/null; then
    echo "python-clients: openai $openai_version and mcp $mcp_version already in $venv"
  else
    echo "python-clients: installing openai==$openai_version and mcp==$mcp_version into $venv"
    python3 -m venv "$venv"
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" install -q --disable-pip-version-check \
      "openai==$openai_version" "mcp==$mcp_version"
    "$py" -c "$check"
  fi
  export RAGLOOM_TEST_CLIENTS_PYTHON="$py"
}

ragloom_clients_setup
unset -f ragloom_clients_setup
