#!/usr/bin/env bash
# Syntax-checks the WordPress companion plugin with Debian's php-cli
# (installed when missing), so a broken plugin never ships. Called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v php >/dev/null 2>&1; then
  echo "php: not found, installing Debian's php-cli ..."
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends php-cli >/dev/null
fi

status=0
while IFS= read -r -d '' file; do
  php -l "$file" || status=1
done < <(find wordpress -name '*.php' -print0)
exit "$status"
