# Sourced by .ci/run: a Redis for the tests against a real Redis server.
#
# ensure_redis installs Debian's redis-server when it is missing (the outage
# tests start disposable servers of their own with it), then uses the Redis
# REDIS_URL names when one answers there, or else starts redis-server on
# 127.0.0.1 and a free port and exports REDIS_URL for it. stop_redis stops
# only the server started here; .ci/run calls it from its EXIT trap.

CI_REDIS_PID=""
CI_REDIS_DIR=""

redis_answers() {
  local url="$1"
  if command -v redis-cli >/dev/null 2>&1; then
    [ "$(redis-cli -u "$url" ping 2>/dev/null)" = "PONG" ]
    return
  fi
  # Without redis-cli: does anything listen on the URL's host and port?
  local rest="${url#*://}"
  rest="${rest#*@}"
  rest="${rest%%/*}"
  local host="${rest%%:*}" port="${rest##*:}"
  [ "$port" = "$rest" ] && port=6379
  (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close();})"
}

ensure_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis: redis-server not found, installing Debian's package ..."
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  fi
  export REDIS_SERVER_BIN="$(command -v redis-server)"

  if [ -n "${REDIS_URL:-}" ] && redis_answers "$REDIS_URL"; then
    echo "redis: using the Redis at REDIS_URL"
    return
  fi
  [ -n "${REDIS_URL:-}" ] && echo "redis: nothing answers at REDIS_URL, starting a local redis-server instead"

  local port
  port="$(free_port)"
  CI_REDIS_DIR="$(mktemp -d)"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$CI_REDIS_DIR/redis.pid" --dir "$CI_REDIS_DIR" --logfile "$CI_REDIS_DIR/redis.log"
  for _ in $(seq 1 50); do
    [ -s "$CI_REDIS_DIR/redis.pid" ] && redis_answers "redis://127.0.0.1:$port" && break
    sleep 0.1
  done
  CI_REDIS_PID="$(cat "$CI_REDIS_DIR/redis.pid")"
  export REDIS_URL="redis://127.0.0.1:$port"
  echo "redis: started redis-server $("$REDIS_SERVER_BIN" --version | grep -o 'v=[0-9.]*') on 127.0.0.1:$port"
}

stop_redis() {
  if [ -n "$CI_REDIS_PID" ]; then
    kill "$CI_REDIS_PID" 2>/dev/null || true
    CI_REDIS_PID=""
  fi
  if [ -n "$CI_REDIS_DIR" ]; then
    rm -rf "$CI_REDIS_DIR"
    CI_REDIS_DIR=""
  fi
}
