#!/usr/bin/env bash
# Installs Debian's chromium for the browser test of the documentation site
# (tests/test_docs_rendered.py renders every page headless). Idempotent: does nothing when
# /usr/bin/chromium (or chromium on PATH) is there. Soft: when it cannot install (no apt-get,
# not root and no sudo, no network), it says why and exits 0, and the test then skips.
set -u
if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium.sh: no apt-get here; install chromium by hand to run the browser test" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install_chromium.sh: not root and no sudo; run: apt-get install -y chromium" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if $sudo apt-get update -qq >/dev/null 2>&1 \
    && $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1; then
  echo "install_chromium.sh: installed $(chromium --version 2>/dev/null)"
else
  echo "install_chromium.sh: apt-get could not install chromium; the browser test will skip" >&2
fi
exit 0
