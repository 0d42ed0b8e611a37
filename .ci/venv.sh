# Sourced by the .ci/setup scripts that need Python packages at pinned versions.
#
# ragloom_pinned_venv VENV LABEL MODULES PKG==VERSION...: VENV holds each
# package at its version and MODULES (comma-separated) import; pip (its cache
# under ~/.cache/ragloom/pip) runs only when that is not so already, so a
# broken venv mends itself. Returns non-zero when the install fails.
ragloom_pinned_venv() {
  local venv="$1" label="$2" modules="$3"
  shift 3
  local wanted="" pkg
  for pkg in "$@"; do
    wanted="$wanted('${pkg%%==*}', '${pkg#*==}'), "
  done
  local check="import sys
from importlib.metadata import version
import $modules
sys.exit(0 if all(version(n) == v for n, v in [$wanted]) else 1)"
  if "$venv/bin/python" -c "$check" 2>/dev/null; then
    echo "$label: $* already in $venv"
    return 0
  fi
  echo "$label: installing $* into $venv"
  python3 -m venv "$venv" &&
    PIP_CACHE_DIR="$HOME/.cache/ragloom/pip" "$venv/bin/pip" install -q --disable-pip-version-check "$@" &&
    "$venv/bin/python" -c "$check"
}
