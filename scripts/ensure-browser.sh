#!/usr/bin/env bash
# The console's browser test (tests/console/test_console_browser.py) drives Debian's Chromium, with
# an emoji font for its screenshots: installed from the distribution when missing, never a browser
# downloaded by Playwright. A machine that cannot install it fails here, with this message, rather
# than in the middle of the slow tier.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "installing Debian's chromium and fonts-noto-color-emoji for the console's browser test"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! { $sudo apt-get update -q && $sudo apt-get install -y -q chromium fonts-noto-color-emoji; }; then
  echo "could not install chromium: install Debian's 'chromium' and 'fonts-noto-color-emoji' packages" >&2
  exit 1
fi
