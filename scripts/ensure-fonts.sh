#!/usr/bin/env bash
# The screenshots the OCR tests draw (tests/helpers/screenshots.py) need a Chinese font: Debian's
# WenQuanYi Micro Hei, installed when missing. A machine that cannot install it fails here, with
# this message, rather than in the middle of the slow tier.
set -euo pipefail

if [ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then exit 0; fi
echo "installing Debian's fonts-wqy-microhei for the screenshots of the OCR tests"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! { $sudo apt-get update -q && $sudo apt-get install -y -q fonts-wqy-microhei; }; then
  echo "could not install fonts-wqy-microhei: install Debian's 'fonts-wqy-microhei' package" >&2
  exit 1
fi
