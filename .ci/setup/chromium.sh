# Sourced by .ci/run: a headless browser for the tests of the static page that
# `ragloom serve` serves (Debian's chromium and its WebDriver, chromedriver).
#
# Installed with apt-get only when either binary is missing, so a second run
# does nothing. Run as root, chromium needs `--no-sandbox`.
# Exports RAGLOOM_TEST_CHROMIUM and RAGLOOM_TEST_CHROMEDRIVER (their paths).

ragloom_chromium_setup() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "chromium.sh: installing chromium and chromium-driver"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
  else
    echo "chromium.sh: chromium and chromedriver already installed"
  fi
  RAGLOOM_TEST_CHROMIUM="$(command -v chromium)"
  RAGLOOM_TEST_CHROMEDRIVER="$(command -v chromedriver)"
  export RAGLOOM_TEST_CHROMIUM RAGLOOM_TEST_CHROMEDRIVER
}

ragloom_chromium_setup
unset -f ragloom_chromium_setup
