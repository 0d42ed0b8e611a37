# Sourced by .ci/run: the services' published API descriptions that the
# Google and Slack tools' tests check every request against — Google's
# discovery documents as google-api-python-client ships them, and Slack's
# Web API methods as slack-sdk defines them (both from PyPI, no service).
#
# Unpacked under ~/.cache/ragloom/api-descriptions. Exports
# RAGLOOM_TEST_GOOGLE_DISCOVERY_DIR (gmail.v1.json, calendar.v3.json) and
# RAGLOOM_TEST_SLACK_SDK_CLIENT (slack_sdk/web/client.py).

ragloom_api_descriptions_setup() {
  local cache="$HOME/.cache/ragloom"
  local dir="$cache/api-descriptions"
  local google="google_api_python_client-2.202.0-py3-none-any.whl"
  local slack="slack_sdk-3.48.0-py2.py3-none-any.whl"
  if ! [ -f "$dir/googleapiclient/discovery_cache/documents/gmail.v1.json" ] \
    || ! [ -f "$dir/slack_sdk/web/client.py" ]; then
    echo "api-descriptions: fetching google-api-python-client 2.202.0 and slack-sdk 3.48.0"
    local tmp
    tmp=$(mktemp -d)
    PIP_CACHE_DIR="$cache/pip" python3 -m pip download -q --disable-pip-version-check \
      --no-deps --only-binary :all: -d "$tmp" \
      google-api-python-client==2.202.0 slack-sdk==3.48.0
    mkdir -p "$dir"
    python3 - "$tmp/$google" "$tmp/$slack" "$dir" <<'PY'
import sys, zipfile
google, slack, out = sys.argv[1:]
with zipfile.ZipFile(google) as z:
    for name in ("gmail.v1.json", "calendar.v3.json"):
        z.extract("googleapiclient/discovery_cache/documents/" + name, out)
with zipfile.ZipFile(slack) as z:
    z.extract("slack_sdk/web/client.py", out)
PY
    rm -rf "$tmp"
  fi
  export RAGLOOM_TEST_GOOGLE_DISCOVERY_DIR="$dir/googleapiclient/discovery_cache/documents"
  export RAGLOOM_TEST_SLACK_SDK_CLIENT="$dir/slack_sdk/web/client.py"
}

ragloom_api_descriptions_setup
unset -f ragloom_api_descriptions_setup
