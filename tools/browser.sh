#!/bin/sh
# The browser the docs' tests (tests/docs) read the built site with: Debian's chromium and
# chromium-driver, never a browser downloaded at test time. `make test` (and so .ci/run) calls this
# first. As root with apt-get (CI, a fresh container) it installs them; elsewhere it says how, and
# the browser tests skip, each saying why.
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "make test: installing Debian's chromium and chromium-driver for the browser tests (tests/docs)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  exit $?
fi
echo "make test: chromium or chromedriver is missing, so the browser tests (tests/docs) will skip;" >&2
echo "           install them (Debian/Ubuntu: sudo apt-get install chromium chromium-driver) and run make test again" >&2
exit 0
