#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1: etcd + kube-apiserver (RBAC, service-account
# token signing, TLS from a local CA) + kube-controller-manager (StatefulSets, garbage
# collection, service accounts). The binaries are built once from Go modules by
# kube-binaries.sh. There are no nodes and no scheduler: the e2e harness binds pods itself.
#
# Usage: kube.sh start | stop | status | clean | env
#   start   build the binaries if needed, start what is not running, wait until ready
#   stop    stop controller-manager, apiserver and etcd (SIGTERM, then SIGKILL)
#   status  exit 0 if all three run; print pids, ports and memory
#   clean   stop and delete the data directory (etcd data, certificates, kubeconfig)
#   env     print KUBECONFIG=..., KUBE_BIN=... and KUBE_AUDIT_LOG=... for other tools
#
# The API server writes an audit log (JSON lines, metadata only) of every request except the
# control plane's own (kube-system service accounts, controller-manager, apiserver): tests
# read it to count an operator's writes and to catch any call its RBAC forbids.
#
# Settings (environment):
#   KUBE_APISERVER_PORT=6443  KUBE_ETCD_PORT=2379  KUBE_ETCD_PEER_PORT=2380
#   KUBE_CONTROLLER_MANAGER_PORT=10257  KUBE_DATA_DIR=$ONCESTREAM_LOCAL_DIR/kube
#   KUBE_READY_TIMEOUT=120  KUBE_STOP_TIMEOUT=20
SERVICE=kube
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

api_port=${KUBE_APISERVER_PORT:-6443}
etcd_port=${KUBE_ETCD_PORT:-2379}
etcd_peer_port=${KUBE_ETCD_PEER_PORT:-2380}
kcm_port=${KUBE_CONTROLLER_MANAGER_PORT:-10257}
data=${KUBE_DATA_DIR:-$ONCESTREAM_LOCAL_DIR/kube}
ready_timeout=${KUBE_READY_TIMEOUT:-120}
stop_timeout=${KUBE_STOP_TIMEOUT:-20}
pki="$data/pki"
kubeconfig="$data/kubeconfig"

# Certificates, signing keys and tokens: made once per data directory.
make_pki() {
  [ -f "$pki/tokens.csv" ] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl is not on PATH (apt-get install openssl)"
  mkdir -p "$pki"
  log "creating a local CA, serving certificate and service-account keys in $pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=oncestream-local-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' > apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    admin=$(openssl rand -hex 24)
    kcm=$(openssl rand -hex 24)
    printf '%s,admin,admin,system:masters\n%s,system:kube-controller-manager,system:kube-controller-manager\n' \
      "$admin" "$kcm" > tokens.csv.tmp
    chmod 600 tokens.csv.tmp ca.key apiserver.key sa.key
    mv tokens.csv.tmp tokens.csv
  ) || die "creating certificates with openssl failed"
}

token_of() { awk -F, -v u="$1" '$2 == u {print $1}' "$pki/tokens.csv"; }

write_kubeconfig() {
  local file=$1 user=$2
  cat > "$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: oncestream-local
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: $user
  user:
    token: $(token_of "$user")
contexts:
- name: oncestream-local
  context: {cluster: oncestream-local, user: $user, namespace: default}
current-context: oncestream-local
EOF
  chmod 600 "$file.tmp"
  mv "$file.tmp" "$file"
}

etcd_ready() { curl -sf "http://127.0.0.1:$etcd_port/health" | grep -q '"health":"true"'; }
api_ready() {
  curl -sf --cacert "$pki/ca.crt" -H "Authorization: Bearer $(token_of admin)" \
    "https://127.0.0.1:$api_port/readyz" | grep -q '^ok$'
}
kcm_ready() { curl -sfk "https://127.0.0.1:$kcm_port/healthz" | grep -q '^ok$'; }

start_etcd() {
  pid_alive "$data/etcd.pid" && return 0
  require_free_port "$etcd_port" "etcd clients, KUBE_ETCD_PORT"
  require_free_port "$etcd_peer_port" "etcd peers, KUBE_ETCD_PEER_PORT"
  log "starting etcd on 127.0.0.1:$etcd_port"
  : > "$data/etcd.log"
  # --unsafe-no-fsync: a throw-away local store; Kubernetes state is not what we test for durability.
  start_daemon "$data/etcd.pid" "$data/etcd.log" "$bin/etcd" --name local --data-dir "$data/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "local=http://127.0.0.1:$etcd_peer_port" --listen-metrics-urls "" \
    --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn
  wait_until "$ready_timeout" "etcd" "$data/etcd.pid" "$data/etcd.log" -- etcd_ready
}

write_audit_policy() {
  cat > "$data/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    userGroups: ["system:serviceaccounts:kube-system", "system:nodes"]
  - level: None
    users: ["system:apiserver", "system:kube-controller-manager"]
  - level: Metadata
POLICY
}

start_apiserver() {
  pid_alive "$data/kube-apiserver.pid" && return 0
  write_audit_policy
  require_free_port "$api_port" "kube-apiserver, KUBE_APISERVER_PORT"
  log "starting kube-apiserver on https://127.0.0.1:$api_port"
  : > "$data/kube-apiserver.log"
  start_daemon "$data/kube-apiserver.pid" "$data/kube-apiserver.log" "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none \
    --allow-privileged=true --profiling=false --v=1 \
    --audit-policy-file "$data/audit-policy.yaml" --audit-log-path "$data/audit.log" \
    --audit-log-format json --audit-log-maxsize 200 --audit-log-maxbackup 1 --audit-log-mode blocking
  wait_until "$ready_timeout" "kube-apiserver" "$data/kube-apiserver.pid" "$data/kube-apiserver.log" -- api_ready
}

start_controller_manager() {
  pid_alive "$data/kube-controller-manager.pid" && return 0
  require_free_port "$kcm_port" "kube-controller-manager, KUBE_CONTROLLER_MANAGER_PORT"
  write_kubeconfig "$data/kube-controller-manager.kubeconfig" system:kube-controller-manager
  log "starting kube-controller-manager"
  : > "$data/kube-controller-manager.log"
  local kc="$data/kube-controller-manager.kubeconfig"
  start_daemon "$data/kube-controller-manager.pid" "$data/kube-controller-manager.log" "$bin/kube-controller-manager" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --secure-port "$kcm_port" --cert-dir "$data/kcm-certs" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --cluster-name oncestream-local --profiling=false --v=1
  wait_until "$ready_timeout" "kube-controller-manager" "$data/kube-controller-manager.pid" \
    "$data/kube-controller-manager.log" -- kcm_ready
}

start() {
  bin=$("$ONCESTREAM_REPO/deploy/local/kube-binaries.sh" build) || die "the Kubernetes binaries are not available (see above); no mock is used instead"
  command -v curl >/dev/null 2>&1 || die "curl is not on PATH (apt-get install curl)"
  mkdir -p "$data"
  make_pki
  start_etcd
  start_apiserver
  write_kubeconfig "$kubeconfig" admin
  start_controller_manager
  log "ready; admin kubeconfig: $kubeconfig"
}

stop() {
  stop_pid "$data/kube-controller-manager.pid" "kube-controller-manager" "$stop_timeout"
  stop_pid "$data/kube-apiserver.pid" "kube-apiserver" "$stop_timeout"
  stop_pid "$data/etcd.pid" "etcd" "$stop_timeout"
}

status() {
  local rc=0 p
  for p in etcd kube-apiserver kube-controller-manager; do
    if pid_alive "$data/$p.pid"; then
      echo "$p: running, pid $(cat "$data/$p.pid"), rss $(rss_mb "$data/$p.pid") MB"
    else
      echo "$p: not running"
      rc=3
    fi
  done
  echo "apiserver https://127.0.0.1:$api_port, kubeconfig $kubeconfig, data $data"
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  clean) stop; rm -rf "$data"; log "removed $data" ;;
  env) echo "KUBECONFIG=$kubeconfig"; echo "KUBE_AUDIT_LOG=$data/audit.log"; echo "KUBE_BIN=$("$ONCESTREAM_REPO/deploy/local/kube-binaries.sh" path)" ;;
  *) echo "usage: $0 start|stop|status|clean|env" >&2; exit 2 ;;
esac
