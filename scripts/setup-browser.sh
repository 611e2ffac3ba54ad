#!/usr/bin/env bash
# `npm run setup:browser`: the headless Chromium the browser tests drive.
# Installs Debian's `chromium` package with apt-get when no Chromium is found;
# the tests themselves never install anything. Elsewhere, install Chromium or
# Chrome yourself, or point PAYGATE_CHROMIUM_PATH at one.
set -euo pipefail

usual_paths=(/usr/bin/chromium /usr/bin/chromium-browser /snap/bin/chromium /usr/bin/google-chrome-stable /usr/bin/google-chrome)

if [[ -n "${PAYGATE_CHROMIUM_PATH:-}" ]]; then
  if [[ -x "$PAYGATE_CHROMIUM_PATH" ]]; then
    echo "setup:browser: using PAYGATE_CHROMIUM_PATH=$PAYGATE_CHROMIUM_PATH"
    exit 0
  fi
  echo "setup:browser: PAYGATE_CHROMIUM_PATH is set to \"$PAYGATE_CHROMIUM_PATH\", which is not an executable file" >&2
  exit 1
fi
for path in "${usual_paths[@]}"; do
  if [[ -x "$path" ]]; then
    echo "setup:browser: Chromium is installed: $path"
    exit 0
  fi
done

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup:browser: no Chromium found (looked for ${usual_paths[*]}) and no apt-get here:" >&2
  echo "  install Chromium or Chrome with your system's package manager, or set PAYGATE_CHROMIUM_PATH to its executable." >&2
  exit 1
fi
if [[ "$(id -u)" -ne 0 ]]; then
  echo "setup:browser: no Chromium found; installing Debian's chromium package needs root. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y chromium" >&2
  echo "  (or set PAYGATE_CHROMIUM_PATH to a Chromium or Chrome executable)" >&2
  exit 1
fi

echo "setup:browser: installing Debian's chromium package with apt-get (about a minute)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
for path in "${usual_paths[@]}"; do
  if [[ -x "$path" ]]; then
    echo "setup:browser: Chromium installed: $path"
    exit 0
  fi
done
echo "setup:browser: Debian's chromium package was installed but no executable appeared at ${usual_paths[*]}" >&2
exit 1
