#!/usr/bin/env bash
# Start the services the tests use when they are down: PostgreSQL (127.0.0.1:5432, trust auth,
# database `test`), MariaDB (127.0.0.1:3306, user hbs_test) and Redis (127.0.0.1:6379). Under CI=true a service that is not installed is
# installed from Debian's packages first (CONTRACT §1), and one that cannot be reached is an
# error; outside CI it only makes its tests skip with a printed reason. The Redis Cluster tests
# start their own six redis-server processes and join them with redis-cli (Debian's redis-server
# package depends on redis-tools, which ships redis-cli), so those two must be installed even when
# another Redis already answers on 6379.
set -u
fail=0
ci=false
[ "${CI:-}" = "true" ] && ci=true

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# CI only: install Debian packages (quietly; the caller reports what is still missing)
install_packages() {
  $ci && command -v apt-get >/dev/null || return 1
  echo "services: installing $*" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@") >/dev/null 2>&1
}

if ! { command -v redis-server && command -v redis-cli; } >/dev/null; then
  install_packages redis-server
  for tool in redis-server redis-cli; do
    command -v "$tool" >/dev/null || { echo "services: $tool is not installed" >&2; fail=1; }
  done
fi

if ! port_open 6379; then
  command -v redis-server >/dev/null || install_packages redis-server
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null || fail=1
  else
    echo "services: redis-server is not installed" >&2; fail=1
  fi
fi

if ! port_open 5432; then
  if ! { command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; } && install_packages postgresql; then
    # a fresh cluster: the tests connect as postgres over TCP without a password
    for hba in /etc/postgresql/*/main/pg_hba.conf; do
      grep -q "^host all all 127.0.0.1/32 trust" "$hba" || sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    done
  fi
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    version=$(ls /etc/postgresql | head -1)
    if port_open 5432; then  # a fresh install started it: reload for the trust line
      pg_ctlcluster --skip-systemctl-redirect "$version" main reload || fail=1
    else
      pg_ctlcluster --skip-systemctl-redirect "$version" main start || fail=1
    fi
  else
    echo "services: PostgreSQL is not installed" >&2; fail=1
  fi
fi

# MariaDB (Debian's mariadb-server) for the MySQL stored-data tests: started as this kind of machine
# starts it (the package's postinst has initialised /var/lib/mysql), no systemd needed.
if ! port_open 3306; then
  command -v mariadbd >/dev/null || install_packages mariadb-server
  if command -v mariadbd >/dev/null; then
    install -d -o mysql -g mysql /run/mysqld 2>/dev/null
    start-stop-daemon --start --oknodo --background --exec "$(command -v mariadbd)" || fail=1
  else
    echo "services: MariaDB (mariadb-server) is not installed" >&2; fail=1
  fi
fi

ready=false
for _ in $(seq 1 100); do
  if port_open 6379 && port_open 5432 && port_open 3306; then ready=true; break; fi
  sleep 0.2
done

# the tests' database, created when the server has none yet
if $ready && command -v psql >/dev/null; then
  has_db=$(psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null)
  if [ "$has_db" != "1" ]; then
    psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test" >/dev/null 2>&1 || fail=1
  fi
fi

# the MySQL tests' user (loopback only, password hbs_test): database `test` and one database per
# test named hbs_test_* (tests/stores/mysql.py)
if $ready && command -v mariadb >/dev/null; then
  mariadb -uroot -e "CREATE DATABASE IF NOT EXISTS test;
    CREATE USER IF NOT EXISTS 'hbs_test'@'127.0.0.1' IDENTIFIED BY 'hbs_test';
    GRANT ALL PRIVILEGES ON test.* TO 'hbs_test'@'127.0.0.1';
    GRANT ALL PRIVILEGES ON \`hbs\\_test\\_%\`.* TO 'hbs_test'@'127.0.0.1';" >/dev/null 2>&1 || fail=1
fi

$ready && [ "$fail" = 0 ] && exit 0
echo "services: PostgreSQL, MariaDB or Redis is not reachable, or redis-server/redis-cli is missing" >&2
$ci && exit 1
exit 0
