#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis the test suite uses are up; start them if not.
# A service that cannot be started is a failure: the suite never skips what needs them.
set -euo pipefail

pg_up()    { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
fi
if ! redis_up; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi

for _ in $(seq 1 30); do
  if pg_up && redis_up; then echo "PostgreSQL and Redis are up"; exit 0; fi
  sleep 1
done
pg_up || echo "PostgreSQL is not reachable on 127.0.0.1:5432" >&2
redis_up || echo "Redis is not reachable on 127.0.0.1:6379" >&2
exit 1
