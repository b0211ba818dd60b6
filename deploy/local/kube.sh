#!/usr/bin/env bash
# A real Kubernetes control plane in the stack's network namespace (netns.sh): etcd +
# kube-apiserver (Node and RBAC authorization, service-account token signing, TLS from a
# local CA) + kube-controller-manager (StatefulSets, garbage collection, service accounts,
# the hostPath volume provisioner behind the default StorageClass "standard") +
# kube-scheduler. The binaries are built once from Go modules by kube-binaries.sh. The node
# that runs the pods (kubelet + containerd) is node.sh.
#
# Usage: kube.sh start | stop | status | clean | env
#   start   build the binaries if needed, start what is not running, wait until ready
#   stop    stop scheduler, controller-manager, apiserver and etcd (SIGTERM, then SIGKILL)
#   status  exit 0 if all four run; print pids, ports and memory
#   clean   stop and delete the data directory (etcd data, certificates, kubeconfig)
#   env     print KUBECONFIG=..., KUBE_BIN=... and KUBE_AUDIT_LOG=... for other tools
#
# The API server writes an audit log (JSON lines, metadata only) of every request except the
# control plane's own (kube-system service accounts, controller-manager, apiserver): tests
# read it to count an operator's writes and to catch any call its RBAC forbids.
#
# Settings (environment):
#   KUBE_APISERVER_PORT=6443  KUBE_ETCD_PORT=2379  KUBE_ETCD_PEER_PORT=2380
#   KUBE_CONTROLLER_MANAGER_PORT=10257  KUBE_SCHEDULER_PORT=10259  KUBE_DATA_DIR=$ONCESTREAM_LOCAL_DIR/kube
#   ONCESTREAM_SERVICE_CIDR=198.18.2.0/24 (virtual Service addresses; the node's kube-proxy routes them)
#   KUBE_READY_TIMEOUT=120  KUBE_STOP_TIMEOUT=20
#   KUBE_CONTROLLER_MANAGER_ARGS= (more flags, e.g. --kube-api-qps=200 for thousands of StatefulSets)
#   KUBE_SCHEDULER=true (false: no kube-scheduler, for a control plane without nodes, whose pods
#     it would only retry, unschedulable, for as long as it runs)
SERVICE=kube
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

api_port=${KUBE_APISERVER_PORT:-6443}
etcd_port=${KUBE_ETCD_PORT:-2379}
etcd_peer_port=${KUBE_ETCD_PEER_PORT:-2380}
kcm_port=${KUBE_CONTROLLER_MANAGER_PORT:-10257}
scheduler_port=${KUBE_SCHEDULER_PORT:-10259}
with_scheduler=${KUBE_SCHEDULER:-true}
data=${KUBE_DATA_DIR:-$ONCESTREAM_LOCAL_DIR/kube}
ready_timeout=${KUBE_READY_TIMEOUT:-120}
stop_timeout=${KUBE_STOP_TIMEOUT:-20}
pki="$data/pki"
kubeconfig="$data/kubeconfig"

# The first address of the Service range: the "kubernetes" Service's, named in the certificate.
service_ip() { local base=${SERVICE_CIDR%/*}; echo "${base%.*}.$(( ${base##*.} + 1 ))"; }

# The users of the control plane's own components: name, groups.
component_users=(
  "admin,system:masters"
  "system:kube-controller-manager,"
  "system:kube-scheduler,"
  "system:node:$NODE_NAME,system:nodes"
  "system:kube-proxy,"
)

# token_line "NAME,GROUPS": a new line of the API server's token file for that user.
token_line() { printf '%s,%s,%s,%s\n' "$(openssl rand -hex 24)" "${1%%,*}" "${1%%,*}" "${1#*,}"; }

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
    printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' "$STACK_IP" "$(service_ip)" > apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    : > tokens.csv.tmp
    for user in "${component_users[@]}"; do token_line "$user" >> tokens.csv.tmp; done
    chmod 600 tokens.csv.tmp ca.key apiserver.key sa.key
    mv tokens.csv.tmp tokens.csv
  ) || die "creating certificates with openssl failed"
}

# Tokens for component users added after the data directory was made (read by the API server at start).
add_missing_tokens() {
  local user added=0
  for user in "${component_users[@]}"; do
    if [ -z "$(token_of "${user%%,*}")" ]; then
      token_line "$user" >> "$pki/tokens.csv"
      added=1
    fi
  done
  if (( added )) && pid_alive "$data/kube-apiserver.pid"; then
    die "new component users were added to $pki/tokens.csv; restart the control plane (kube.sh stop; kube.sh start)"
  fi
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
    server: https://$STACK_IP:$api_port
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

etcd_ready() { curl -sf "http://$STACK_IP:$etcd_port/health" | grep -q '"health":"true"'; }
api_ready() {
  curl -sf --cacert "$pki/ca.crt" -H "Authorization: Bearer $(token_of admin)" \
    "https://$STACK_IP:$api_port/readyz" | grep -q '^ok$'
}
kcm_ready() { curl -sfk "https://$STACK_IP:$kcm_port/healthz" | grep -q '^ok$'; }
scheduler_ready() { curl -sfk "https://$STACK_IP:$scheduler_port/healthz" | grep -q '^ok$'; }

start_etcd() {
  pid_alive "$data/etcd.pid" && return 0
  require_free_port "$etcd_port" "etcd clients, KUBE_ETCD_PORT"
  require_free_port "$etcd_peer_port" "etcd peers, KUBE_ETCD_PEER_PORT"
  log "starting etcd on $STACK_IP:$etcd_port"
  : > "$data/etcd.log"
  # --unsafe-no-fsync: a throw-away local store; Kubernetes state is not what we test for durability.
  start_daemon "$data/etcd.pid" "$data/etcd.log" "$bin/etcd" --name local --data-dir "$data/etcd" \
    --listen-client-urls "http://$STACK_IP:$etcd_port" --advertise-client-urls "http://$STACK_IP:$etcd_port" \
    --listen-peer-urls "http://$STACK_IP:$etcd_peer_port" --initial-advertise-peer-urls "http://$STACK_IP:$etcd_peer_port" \
    --initial-cluster "local=http://$STACK_IP:$etcd_peer_port" --listen-metrics-urls "" \
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
    users: ["system:apiserver", "system:kube-controller-manager", "system:kube-scheduler"]
  - level: Metadata
POLICY
}

start_apiserver() {
  pid_alive "$data/kube-apiserver.pid" && return 0
  write_audit_policy
  require_free_port "$api_port" "kube-apiserver, KUBE_APISERVER_PORT"
  log "starting kube-apiserver on https://$STACK_IP:$api_port"
  : > "$data/kube-apiserver.log"
  start_daemon "$data/kube-apiserver.pid" "$data/kube-apiserver.log" "$bin/kube-apiserver" \
    --etcd-servers "http://$STACK_IP:$etcd_port" \
    --bind-address "$STACK_IP" --advertise-address "$STACK_IP" --secure-port "$api_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
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
  # The hostPath provisioner creates volumes under /tmp/hostpath_pv (fixed in its code) with
  # mode 0750, and the kubelet applies no fsGroup to hostPath volumes. So the controller-manager
  # runs as VOLUME_UID (the user the worker image and pods run as), owning what it creates,
  # in a mount namespace of its own where /tmp/hostpath_pv is PV_DIR (the node binds the same).
  local own="$data/kcm"
  mkdir -p "$PV_DIR" /tmp/hostpath_pv "$own/certs"
  cp "$pki/sa.key" "$pki/ca.key" "$pki/ca.crt" "$kc" "$own/"
  chown -R "$VOLUME_UID:$VOLUME_UID" "$own" "$PV_DIR"
  chmod 700 "$own"
  start_daemon "$data/kube-controller-manager.pid" "$data/kube-controller-manager.log" \
    unshare -m --propagation private sh -c 'mount --bind "$0" /tmp/hostpath_pv && exec "$@"' "$PV_DIR" \
    setpriv --reuid "$VOLUME_UID" --regid "$VOLUME_UID" --clear-groups \
    "$bin/kube-controller-manager" \
    --kubeconfig "$own/${kc##*/}" --authentication-kubeconfig "$own/${kc##*/}" --authorization-kubeconfig "$own/${kc##*/}" \
    --bind-address "$STACK_IP" --secure-port "$kcm_port" --cert-dir "$own/certs" \
    --enable-hostpath-provisioner \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$own/sa.key" --root-ca-file "$own/ca.crt" \
    --cluster-signing-cert-file "$own/ca.crt" --cluster-signing-key-file "$own/ca.key" \
    --cluster-name oncestream-local --profiling=false --v=1 ${KUBE_CONTROLLER_MANAGER_ARGS:-}
  wait_until "$ready_timeout" "kube-controller-manager" "$data/kube-controller-manager.pid" \
    "$data/kube-controller-manager.log" -- kcm_ready
}

start_scheduler() {
  pid_alive "$data/kube-scheduler.pid" && return 0
  require_free_port "$scheduler_port" "kube-scheduler, KUBE_SCHEDULER_PORT"
  write_kubeconfig "$data/kube-scheduler.kubeconfig" system:kube-scheduler
  log "starting kube-scheduler"
  : > "$data/kube-scheduler.log"
  local kc="$data/kube-scheduler.kubeconfig"
  start_daemon "$data/kube-scheduler.pid" "$data/kube-scheduler.log" "$bin/kube-scheduler" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address "$STACK_IP" --secure-port "$scheduler_port" --leader-elect=false --profiling=false --v=1
  wait_until "$ready_timeout" "kube-scheduler" "$data/kube-scheduler.pid" "$data/kube-scheduler.log" -- scheduler_ready
}

# The default StorageClass: volumes made by the controller-manager's hostPath provisioner
# (test and development only), bound when the first pod that uses them is scheduled.
apply_storage_class() {
  KUBECONFIG="$kubeconfig" "$bin/kubectl" apply --server-side --field-manager oncestream-local -f - >/dev/null <<'YAML' \
    || die "could not create the StorageClass"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
YAML
}

start() {
  net_up
  bin=$("$ONCESTREAM_REPO/deploy/local/kube-binaries.sh" build) || die "the Kubernetes binaries are not available (see above); no mock is used instead"
  command -v curl >/dev/null 2>&1 || die "curl is not on PATH (apt-get install curl)"
  mkdir -p "$data"
  make_pki
  add_missing_tokens
  start_etcd
  start_apiserver
  write_kubeconfig "$kubeconfig" admin
  write_kubeconfig "$data/kubelet.kubeconfig" "system:node:$NODE_NAME"
  write_kubeconfig "$data/kube-proxy.kubeconfig" "system:kube-proxy"
  start_controller_manager
  if [ "$with_scheduler" = true ]; then start_scheduler; fi
  apply_storage_class
  log "ready; admin kubeconfig: $kubeconfig"
}

stop() {
  stop_pid "$data/kube-scheduler.pid" "kube-scheduler" "$stop_timeout"
  stop_pid "$data/kube-controller-manager.pid" "kube-controller-manager" "$stop_timeout"
  stop_pid "$data/kube-apiserver.pid" "kube-apiserver" "$stop_timeout"
  stop_pid "$data/etcd.pid" "etcd" "$stop_timeout"
}

status() {
  local rc=0 p
  local parts=(etcd kube-apiserver kube-controller-manager)
  if [ "$with_scheduler" = true ]; then parts+=(kube-scheduler); fi
  for p in "${parts[@]}"; do
    if pid_alive "$data/$p.pid"; then
      echo "$p: running, pid $(cat "$data/$p.pid"), rss $(rss_mb "$data/$p.pid") MB"
    else
      echo "$p: not running"
      rc=3
    fi
  done
  echo "apiserver https://$STACK_IP:$api_port, kubeconfig $kubeconfig, data $data"
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
