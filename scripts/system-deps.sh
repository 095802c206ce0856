#!/usr/bin/env bash
# System packages the tests need: bubblewrap (sandbox for model-written code) and chromium (browser test of
# the leaderboard Space). Installed with apt when running as root; otherwise we say what is missing.
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "warning: missing system packages: ${missing[*]} (sudo apt-get install ${missing[*]}); the sandbox and" \
       "browser tests need them" >&2
fi
