#!/usr/bin/env bash
# The whole test suite on a fresh machine (Debian 12, Python 3.11, run as root or with sudo for
# the system packages): installs what the tests need, starts the services they talk to, runs
# pytest. The README's test command; `.ci/run` calls it too. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  if [ -z "${_SLOWAVE_APT_UPDATED:-}" ]; then apt-get update -qq; _SLOWAVE_APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Celery over Redis: a real Redis on loopback.
if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server redis-tools
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
fi

# The acceptance scenarios also run on PostgreSQL (127.0.0.1:5432, user postgres, trust auth).
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    apt_install postgresql
    hba="$(ls /etc/postgresql/*/main/pg_hba.conf | head -n1)"
    sed -i -E 's/^(host|local)(.*)(peer|md5|scram-sha-256)$/\1\2trust/' "$hba"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

# The admin's browser tests drive Debian's headless Chromium.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  apt_install chromium chromium-driver
fi

# The MCP Inspector tests run the inspector pinned in tests/inspector/package-lock.json.
if [ ! -x tests/inspector/node_modules/.bin/mcp-inspector ]; then
  npm ci --prefix tests/inspector --no-audit --no-fund --loglevel=error
fi

# A home of its own, so the suite never touches ~/.slowave.
export SLOWAVE_HOME="${SLOWAVE_TEST_HOME:-$(mktemp -d)}"
pip install -q -e '.[test]'
exec python -m pytest "$@"
