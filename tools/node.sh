#!/bin/sh
# Node, for the vectors' consumer in another language (tests/consumer/vectors_consumer.mjs, run by
# tests/test_node_consumer.py): Debian's nodejs, never a runtime downloaded at test time, and no npm
# package. `make test` (and so .ci/run) calls this first. As root with apt-get (CI, a fresh container) it
# installs nodejs; elsewhere it says how, and the consumer's test skips, saying why.
if command -v node >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "make test: installing Debian's nodejs for the vectors' JavaScript consumer (tests/consumer)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null
  exit $?
fi
echo "make test: node is missing, so the vectors' JavaScript consumer test (tests/test_node_consumer.py) will skip;" >&2
echo "           install it (Debian/Ubuntu: sudo apt-get install nodejs) and run make test again" >&2
exit 0
