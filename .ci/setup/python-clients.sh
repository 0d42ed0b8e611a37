# Sourced by .ci/run: the official OpenAI and Model Context Protocol Python SDKs,
# which the conformance tests of `ragloom serve` drive against the server.
#
# A venv at ~/.cache/ragloom/clients-venv with pinned `openai` and `mcp`; pip's
# cache lives under ~/.cache/ragloom/pip. Idempotent: nothing is installed when
# both packages already import at the pinned versions (.ci/venv.sh).
# Exports RAGLOOM_TEST_CLIENTS_PYTHON (the venv's python).

source "$(dirname "${BASH_SOURCE[0]}")/../venv.sh"

ragloom_clients_setup() {
  local venv="$HOME/.cache/ragloom/clients-venv"
  mkdir -p "$HOME/.cache/ragloom"
  ragloom_pinned_venv "$venv" python-clients \
    "openai, mcp, mcp.client.streamable_http, mcp.client.stdio" \
    openai==3.51.0 mcp==2.3.0 || return 1
  export RAGLOOM_TEST_CLIENTS_PYTHON="$venv/bin/python"
}

ragloom_clients_setup
unset -f ragloom_clients_setup
