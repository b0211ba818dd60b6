# Shared helpers for the local service scripts (netns.sh, kafka.sh, cassandra.sh, kube.sh,
# node.sh). Sourced, not run. Every service runs inside the stack's own network namespace
# (netns.sh) and listens on its address only, keeps its state in one data directory, records
# its PID in a file there, and is started at most once.

set -euo pipefail

ONCESTREAM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ONCESTREAM_CACHE=${ONCESTREAM_CACHE:-$HOME/.cache/oncestream}
# Default home of the services' data (a relative path is taken from the repository); the test
# suite points this into target/.
ONCESTREAM_LOCAL_DIR=${ONCESTREAM_LOCAL_DIR:-$ONCESTREAM_REPO/.local}
# Absolute, symbolic links resolved (test.env says target/services; a second work tree may link
# its target/services to the first's): every script, from any directory, sees the one stack's
# data at one path, and Cassandra's cluster name, made from that path, stays the same.
case "$ONCESTREAM_LOCAL_DIR" in /*) ;; *) ONCESTREAM_LOCAL_DIR=$ONCESTREAM_REPO/$ONCESTREAM_LOCAL_DIR ;; esac
ONCESTREAM_LOCAL_DIR=$(realpath -m "$ONCESTREAM_LOCAL_DIR")

# The stack's network (netns.sh): its namespace, the one address every service listens on,
# this machine's end of the veth, the pods' range and the Services' virtual range.
NETNS=${ONCESTREAM_NETNS:-oncestream}
STACK_IP=${ONCESTREAM_IP:-198.18.0.2}
GATEWAY_IP=${ONCESTREAM_GATEWAY_IP:-198.18.0.1}
POD_CIDR=${ONCESTREAM_POD_CIDR:-198.18.1.0/24}
SERVICE_CIDR=${ONCESTREAM_SERVICE_CIDR:-198.18.2.0/24}
# Extra service addresses inside the namespace (e.g. the nodes of cassandra-cluster.sh), each
# service on its own address of this range, routed from this machine through the veth.
EXTRA_CIDR=${ONCESTREAM_EXTRA_CIDR:-198.18.3.0/24}
# Dynamically provisioned persistent volumes (the controller-manager's hostPath provisioner
# writes to /tmp/hostpath_pv, which the controller-manager and the node see bound to this).
PV_DIR=$ONCESTREAM_LOCAL_DIR/volumes
# Owner of those volumes: the user the worker image and the worker pods run as.
VOLUME_UID=10001
# The one node's name (kubelet, and its credentials made by kube.sh).
NODE_NAME=${ONCESTREAM_NODE_NAME:-oncestream-node}

log() { printf '[%s] %s\n' "$SERVICE" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$SERVICE" "$*" >&2; exit 1; }

# pid_alive FILE: the process named in FILE is running.
pid_alive() {
  local pid
  [ -f "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# net_up: the stack's network namespace exists (made on first use).
net_up() {
  "$ONCESTREAM_REPO/deploy/local/netns.sh" start
}

# in_netns COMMAND...: run COMMAND in the stack's network namespace (same files, same PID).
in_netns() {
  nsenter --net="/run/netns/$NETNS" -- "$@"
}

# extra_ip N: the Nth address of EXTRA_CIDR (1 is the first after the range's own address).
extra_ip() {
  local a b c d v
  IFS=. read -r a b c d <<< "${EXTRA_CIDR%/*}"
  v=$(( (a << 24) + (b << 16) + (c << 8) + d + $1 ))
  echo "$(( v >> 24 & 255 )).$(( v >> 16 & 255 )).$(( v >> 8 & 255 )).$(( v & 255 ))"
}

# port_open PORT [HOST]: something accepts TCP connections on HOST:PORT (HOST: STACK_IP).
port_open() {
  (exec 3<>"/dev/tcp/${2:-$STACK_IP}/$1") 2>/dev/null
}

# require_free_port PORT WHAT [HOST]: fail clearly when another process holds HOST:PORT (HOST: STACK_IP).
require_free_port() {
  local host=${3:-$STACK_IP}
  if port_open "$1" "$host"; then
    local who
    who=$(in_netns ss -ltnpH "src $host and sport = :$1" 2>/dev/null | sed -n 's/.*users:((\("[^"]*",pid=[0-9]*\).*/\1/p' | head -1)
    die "port $1 ($2) on $host is already taken${who:+ by $who}; stop that process or choose another port (see the variables at the top of $(basename "$0"))"
  fi
}

# wait_until TIMEOUT_S DESCRIPTION PID_FILE LOG_FILE -- COMMAND...: poll COMMAND once a
# second until it succeeds; fail early if the process died, or when the time is up.
wait_until() {
  local timeout=$1 what=$2 pidfile=$3 logfile=$4
  shift 5
  local start=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if ! pid_alive "$pidfile"; then
      log "last lines of $logfile:"
      tail -n 30 "$logfile" >&2 || true
      die "$what exited before it was ready (log: $logfile)"
    fi
    if (( SECONDS - start >= timeout )); then
      log "last lines of $logfile:"
      tail -n 30 "$logfile" >&2 || true
      die "$what was not ready after ${timeout}s (log: $logfile)"
    fi
    sleep 1
  done
  log "$what ready after $((SECONDS - start))s"
}

# stop_pid FILE WHAT [GRACE_S]: SIGTERM, wait, then SIGKILL; removes the PID file.
stop_pid() {
  local pidfile=$1 what=$2 grace=${3:-30}
  if ! pid_alive "$pidfile"; then
    rm -f "$pidfile"
    return 0
  fi
  local pid start=$SECONDS
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if (( SECONDS - start >= grace )); then
      log "$what (pid $pid) did not stop in ${grace}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  rm -f "$pidfile"
  log "$what stopped (pid $pid) in $((SECONDS - start))s"
}

# keep_log FILE: before a service starts again, moves what FILE says of its earlier runs to
# FILE.1 (FILE.1 to FILE.2, and so on, the five newest kept), so that what a service said
# before an outage or a crash is still there after its restart, and FILE holds this run only.
keep_log() {
  local file=$1 i
  [ -s "$file" ] || return 0
  for i in 4 3 2 1; do
    [ -f "$file.$i" ] && mv -f "$file.$i" "$file.$((i + 1))"
  done
  mv -f "$file" "$file.1"
}

# start_daemon PID_FILE LOG_FILE COMMAND...: run COMMAND in the stack's network namespace,
# detached from this shell (its own session, so a terminal's Ctrl-C or the caller's exit
# does not reach it). nsenter --net does not fork: the PID is the command's.
start_daemon() {
  local pidfile=$1 logfile=$2
  shift 2
  setsid nsenter --net="/run/netns/$NETNS" -- "$@" >>"$logfile" 2>&1 < /dev/null &
  echo $! > "$pidfile"
}

# maven_classpath NAME POM: the runtime class path of the small pom POM (jars from Maven
# Central), resolved once and cached by the pom's content.
maven_classpath() {
  local name=$1 pom=$2 hash file
  hash=$(sha256sum "$pom" | cut -c1-16)
  file="$ONCESTREAM_CACHE/classpath/$name-$hash.txt"
  if [ ! -s "$file" ]; then
    command -v mvn >/dev/null 2>&1 || die "mvn is not on PATH; it is needed to fetch the $name jars from Maven Central"
    mkdir -p "$(dirname "$file")"
    log "resolving $name jars from Maven Central (first time only)"
    if ! mvn -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$file.tmp" -Dmdep.includeScope=runtime \
        > "$file.log" 2>&1; then
      tail -n 40 "$file.log" >&2
      die "could not resolve the $name jars with Maven (pom: $pom, log: $file.log)"
    fi
    mv "$file.tmp" "$file"
  fi
  cat "$file"
}

# rss_mb PID_FILE: resident memory of the process in MB (for status output).
rss_mb() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  awk '/VmRSS/ {printf "%d", $2/1024}' "/proc/$pid/status" 2>/dev/null || true
}
