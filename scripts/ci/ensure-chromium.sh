#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the end-to-end browser test
# (tests/e2e/browser.test.ts drives /usr/bin/chromium through playwright-core;
# no browser is downloaded by npm). Called by .ci/run before `npm test`.
set -euo pipefail

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  echo "chromium: $("$CHROMIUM" --version 2>/dev/null || echo present)"
  exit 0
fi

echo "chromium: not found at $CHROMIUM, installing Debian's package ..."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium: $("$CHROMIUM" --version 2>/dev/null || echo installed)"
