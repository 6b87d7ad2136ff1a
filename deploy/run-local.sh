#!/usr/bin/env bash
# The scale-out recipe tried on one machine: migrate once, start N identical instances on
# consecutive ports (one PostgreSQL database, one Redis), and a load balancer in front of them, in
# the foreground: nginx when it is installed, else deploy/balancer.js (node alone). Ctrl-C (or
# SIGTERM) stops everything it started.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/threadline REDIS_URL=redis://127.0.0.1:6379 \
#     deploy/run-local.sh [instances] [balancer port]
#
# Environment (besides what every instance reads, passed on as it is: RATE_LIMIT_MAX, LOG_LEVEL...):
#   DATABASE_URL     required, postgres://...  (SQLite is one process's file: it does not scale out)
#   REDIS_URL        required, redis://...     (shared rate limits and events)
#   INSTANCES        instances to start (default 2; or the first argument)
#   NGINX_PORT       where the balancer (nginx or balancer.js) listens (default 8080; or the second argument)
#   BASE_PORT        the first instance's port (default 3001); the others follow it
#   TRUST_PROXY      what the instances trust for X-Forwarded-For (default 127.0.0.1: this balancer)
#   SEED_DEMO_DATA   true (default) fills a database this run created with the demo data, as
#                    `threadline serve` would; false leaves it empty
#   THREADLINE       the command (default: node <repo>/dist/main.js; run `npm run build` first)
#   BALANCER         nginx or node (default: nginx when it is found, else node: deploy/balancer.js)
#   NGINX            the nginx binary (default: nginx on PATH, else /usr/sbin/nginx)
#   RUN_DIR          where nginx's prefix and every log go (default: a new temporary directory,
#                    removed on exit; a RUN_DIR you name is kept)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

fail() {
  echo "run-local: $*" >&2
  exit 1
}

instances=${1:-${INSTANCES:-2}}
nginx_port=${2:-${NGINX_PORT:-8080}}
base_port=${BASE_PORT:-3001}
[[ $instances =~ ^[1-9][0-9]*$ ]] || fail "the number of instances must be a positive integer, got \"$instances\""
[[ $nginx_port =~ ^[0-9]+$ ]] || fail "the balancer's port must be a number, got \"$nginx_port\""
[[ $base_port =~ ^[0-9]+$ ]] || fail "BASE_PORT must be a number, got \"$base_port\""

# What the recipe needs, checked before anything starts. Without nginx, the balancer in node.
nginx_bin=${NGINX:-$(command -v nginx || true)}
[[ -z $nginx_bin && -x /usr/sbin/nginx ]] && nginx_bin=/usr/sbin/nginx
balancer=${BALANCER:-}
if [[ -z $balancer ]]; then
  if [[ -n $nginx_bin && -x $nginx_bin ]]; then balancer=nginx; else balancer=node; fi
  [[ $balancer == nginx ]] ||
    echo "run-local: nginx is not installed: using deploy/balancer.js in front of the instances (apt-get install -y nginx for the production recipe)"
fi
case $balancer in
  nginx)
    [[ -n $nginx_bin && -x $nginx_bin ]] ||
      fail "nginx is not installed (on Debian or Ubuntu: apt-get install -y nginx; this script runs its own nginx, the system service need not run), or set NGINX=/path/to/nginx, or BALANCER=node"
    ;;
  node) command -v node >/dev/null || fail "node is not on the PATH" ;;
  *) fail "BALANCER must be nginx or node, got \"$balancer\"" ;;
esac
# A URL as it may be printed: its password (if any) replaced by ***.
redact() { sed -E 's#(://[^:/@]*:)[^@]*@#\1***@#' <<<"$1"; }
[[ ${DATABASE_URL:-} =~ ^postgres(ql)?:// ]] ||
  fail "DATABASE_URL must be a postgres:// URL that every instance shares (e.g. postgres://postgres@127.0.0.1:5432/threadline); got \"$(redact "${DATABASE_URL:-(unset)}")\". SQLite is a file of one process and does not scale out."
[[ -n ${REDIS_URL:-} ]] ||
  fail "REDIS_URL is not set (e.g. redis://127.0.0.1:6379): the instances share their rate limits and events through Redis"
if [[ -n ${THREADLINE:-} ]]; then
  read -r -a threadline <<<"$THREADLINE"
else
  [[ -f $root/dist/main.js ]] || fail "$root/dist/main.js is missing: run npm run build first (or set THREADLINE)"
  threadline=(node "$root/dist/main.js")
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=()
for ((i = 0; i < instances; i++)); do ports+=($((base_port + i))); done
for port in "${ports[@]}" "$nginx_port"; do
  ! port_in_use "$port" || fail "port $port is taken already (set BASE_PORT or NGINX_PORT)"
done

export DATABASE_URL REDIS_URL
export TRUST_PROXY=${TRUST_PROXY:-127.0.0.1}
export SEED_DEMO_DATA=${SEED_DEMO_DATA:-true}

if [[ -n ${RUN_DIR:-} ]]; then
  run_dir=$RUN_DIR
  keep_run_dir=1
  mkdir -p "$run_dir"
else
  run_dir=$(mktemp -d "${TMPDIR:-/tmp}/threadline-local.XXXXXX")
  keep_run_dir=0
fi
run_dir=$(cd "$run_dir" && pwd)
# Run as root, nginx's workers are `nobody`: they must reach their temp directories in here.
chmod 755 "$run_dir"
mkdir -p "$run_dir/nginx/logs" "$run_dir/nginx/tmp"

pids=()
stopping=0
stop_all() {
  local status=${1:-0}
  ((stopping)) && return
  stopping=1
  trap - INT TERM EXIT
  if ((${#pids[@]})); then
    echo "run-local: stopping the balancer and ${#ports[@]} instance(s)..." >&2
    kill -TERM "${pids[@]}" 2>/dev/null || true
    # Instances close their WebSockets and finish what is in flight; give them a few seconds.
    for _ in $(seq 50); do
      local alive=0
      for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
      ((alive)) || break
      sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  if ((keep_run_dir)); then
    echo "run-local: logs kept in $run_dir" >&2
  else
    rm -rf "$run_dir"
  fi
  exit "$status"
}
trap 'stop_all 130' INT
trap 'stop_all 143' TERM
trap 'stop_all $?' EXIT

# 1. Migrations, once, before any instance starts (a release step in production; the instances
#    would also migrate on start, one at a time under a lock, and find nothing left to do).
echo "run-local: migrating $(redact "$DATABASE_URL")"
migrated=$("${threadline[@]}" migrate) || fail "threadline migrate failed (is PostgreSQL up, and does the database exist?)"
echo "  $migrated"
if [[ $migrated == *0001-initial* && $SEED_DEMO_DATA =~ ^(true|1)$ ]]; then
  # A new database: the demo data, as `threadline serve` would have added (tokens: threadline tokens create --user 1).
  "${threadline[@]}" seed >/dev/null
  echo "  new database: filled with the demo data (set SEED_DEMO_DATA=false to keep it empty)"
fi

# 2. The instances: the same environment, consecutive ports, logs to files.
for port in "${ports[@]}"; do
  HOST=127.0.0.1 PORT=$port "${threadline[@]}" serve >"$run_dir/instance-$port.log" 2>&1 &
  pids+=($!)
done
for i in "${!ports[@]}"; do
  port=${ports[$i]}
  for ((tries = 0; ; tries++)); do
    # Listening: the port (free before) accepts a connection. (The log line needs LOG_LEVEL=info.)
    port_in_use "$port" && break
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      tail -n 20 "$run_dir/instance-$port.log" >&2
      fail "the instance on port $port stopped while starting (its log is above)"
    fi
    ((tries < 300)) || fail "the instance on port $port did not listen within 30 s (log: $run_dir/instance-$port.log)"
    sleep 0.1
  done
  echo "run-local: instance $((i + 1)) listening on http://127.0.0.1:$port (pid ${pids[$i]}, log $run_dir/instance-$port.log)"
done

# 3. The balancer: nginx, from deploy/nginx.conf with this run's instances and port; or balancer.js.
if [[ $balancer == nginx ]]; then
  conf=$run_dir/nginx/nginx.conf
  upstreams=""
  for port in "${ports[@]}"; do upstreams+="        server 127.0.0.1:$port max_fails=3 fail_timeout=5s;"$'\n'; done
  awk -v servers="$upstreams" -v port="$nginx_port" '
    /# BEGIN threadline instances/ { print; printf "%s", servers; skipping = 1; next }
    /# END threadline instances/ { skipping = 0 }
    skipping { next }
    /^[[:space:]]*listen[[:space:]]+8080;/ { sub(/8080/, port) }
    { print }
  ' "$here/nginx.conf" >"$conf"
  "$nginx_bin" -t -q -p "$run_dir/nginx" -c "$conf" -e stderr || fail "nginx refused the configuration $conf"
  "$nginx_bin" -p "$run_dir/nginx" -c "$conf" -e stderr -g 'daemon off;' &
  access_log=$run_dir/nginx/logs/access.log
  balancer_name=nginx
else
  access_log=$run_dir/balancer.log
  balancer_name=deploy/balancer.js
  instance_addresses=()
  for port in "${ports[@]}"; do instance_addresses+=("127.0.0.1:$port"); done
  node "$here/balancer.js" "$nginx_port" "${instance_addresses[@]}" >"$access_log" &
fi
pids+=($!)
for ((tries = 0; ; tries++)); do
  port_in_use "$nginx_port" && break
  kill -0 "${pids[-1]}" 2>/dev/null || fail "the balancer ($balancer) did not start (see its messages above)"
  ((tries < 100)) || fail "the balancer ($balancer) did not listen on port $nginx_port within 10 s"
  sleep 0.1
done
cat <<EOF
run-local: $balancer_name on http://127.0.0.1:$nginx_port, spreading over ${#ports[@]} instance(s); access log $access_log
  curl http://127.0.0.1:$nginx_port/api/v1/users?limit=2
  TOKEN=\$(DATABASE_URL='$(redact "$DATABASE_URL")' ${threadline[*]} tokens create --user 1)
Ctrl-C stops everything.
EOF

# 4. In the foreground until Ctrl-C or until the balancer stops. An instance that stops is reported
#    and the others carry on: the balancer sends its requests to them (try: kill <an instance's pid>).
balancer_pid=${pids[-1]}
running=("${pids[@]}")
while :; do
  set +e
  wait -n -p exited "${running[@]}"
  status=$?
  set -e
  ((stopping)) && exit "$status"
  if [[ ${exited:-} == "$balancer_pid" ]]; then
    # Ctrl-C reaches the balancer too (the whole foreground group gets it), and it may exit first.
    echo "run-local: the balancer exited (status $status); stopping the instances" >&2
    stop_all $((status == 0 ? 0 : 1))
  fi
  remaining=()
  for pid in "${running[@]}"; do [[ $pid == "${exited:-}" ]] || remaining+=("$pid"); done
  running=("${remaining[@]}")
  echo "run-local: the instance with pid ${exited:-?} stopped (exit status $status); ${#running[@]} process(es) left, the balancer included" >&2
  if ((${#running[@]} <= 1)); then
    echo "run-local: no instance left; stopping the balancer" >&2
    stop_all 1
  fi
done
