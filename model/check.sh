#!/usr/bin/env bash
# Checks model/protocol.pml with Spin: the protocol exhaustively (every interleaving of steps,
# crashes up to MAXCRASH, lost names and in-flight writes), which must hold every property;
# then each mutation, which must yield a counterexample, printed as its sequence of protocol
# steps. Exit 0 only if the model holds and every mutation is caught.
#
# Usage: model/check.sh [--keep DIR]   (needs spin and gcc: apt-get install spin gcc)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model="$here/protocol.pml"
work=$(mktemp -d)
if [ "${1:-}" = "--keep" ] && [ -n "${2:-}" ]; then work="$2"; mkdir -p "$work"; else trap 'rm -rf "$work"' EXIT; fi
for tool in spin gcc; do
  command -v "$tool" >/dev/null 2>&1 || { echo "[model] ERROR: $tool is not installed (apt-get install spin gcc)" >&2; exit 2; }
done
MUTATIONS=(COMMIT_BEFORE_ACK NO_FSYNC_OFFSETS FRESH_TIMESTAMPS_ON_REPLAY SKIP_OPEN_BATCH GROUP_BEFORE_COMMIT NO_FSYNC_AT_START)
status=0

# verify NAME [DEFINE]: builds and runs the verifier; its output in $work/NAME.out
verify() {
  local name=$1 define=${2:-} dir="$work/$1"
  mkdir -p "$dir" && cp "$model" "$dir/protocol.pml"
  (cd "$dir" && spin -a $define protocol.pml > spin.out 2>&1 && gcc -O2 -DSAFETY -o pan pan.c 2> gcc.out) \
    || { echo "[model] ERROR: cannot build the verifier for $name:"; cat "$dir/spin.out" "$dir/gcc.out"; return 2; }
  local start; start=$(date +%s%N)
  (cd "$dir" && ./pan -m100000 > pan.out 2>&1) || true
  elapsed=$(awk -v ns=$(( $(date +%s%N) - start )) 'BEGIN { printf "%.2f", ns / 1e9 }')
  cp "$dir/pan.out" "$work/$name.out"
}
figures() {
  local out=$1
  printf '%s states stored, depth %s, %s MB, %s s' \
    "$(grep -oE '[0-9]+ states, stored' "$out" | grep -oE '^[0-9]+')" \
    "$(grep -oE 'depth reached [0-9]+' "$out" | grep -oE '[0-9]+$')" \
    "$(grep -E 'total actual memory usage' "$out" | grep -oE '^ *[0-9.]+' | tr -d ' ')" "$elapsed"
}

echo "[model] checking $model exhaustively (spin $(spin -V | grep -oE '[0-9]+\.[0-9]+\.[0-9]+'))"
verify correct
out="$work/correct.out"
errors=$(grep -oE 'errors: [0-9]+' "$out" | grep -oE '[0-9]+$' || echo "?")
# The search is complete only if no depth limit cut it, and every property is reached: the
# only unreached statement of the worker is the assertion recovery must never get to.
unreached=$(sed -n '/unreached in proctype worker/,/unreached in init/p' "$out" | grep -E 'protocol.pml:' || true)
if [ "$errors" = "0" ] && ! grep -qE 'max search depth too small|depth limit|search not completed' "$out" \
   && [ "$(echo "$unreached" | grep -c .)" = "1" ] && echo "$unreached" | grep -q '"assert(0)"'; then
  echo "[model] protocol: holds — table_exact, timestamps_stable, replay_exact, group_behind_table, recoverable; $(figures "$out")"
else
  echo "[model] FAILED: the protocol model does not hold or the search was incomplete ($errors errors)"
  cat "$out"
  if [ "$errors" != "0" ] && [ "$errors" != "?" ]; then
    (cd "$work/correct" && spin -t protocol.pml 2>&1 | grep -E 'STEP|assertion violated' | sed 's/^ */    /')
  fi
  status=1
fi

for m in "${MUTATIONS[@]}"; do
  verify "$m" "-DMUTATION_$m"
  out="$work/$m.out"
  violated=$(grep -m1 -oE 'assertion violated .*' "$out" || true)
  if [ -n "$violated" ]; then
    property=$(grep -m1 -oE 'assertion violated' "$out" >/dev/null && sed -n "$(grep -m1 -oE 'protocol.pml:[0-9]+' <(cd "$work/$m" && spin -t -DMUTATION_$m protocol.pml 2>&1 | grep -E 'assertion violated') | cut -d: -f2)p" "$model" | grep -oE '/\* [a-z_]+' | tr -d '/* ' || true)
    echo "[model] MUTATION_$m: counterexample, ${property:-assertion} violated; $(figures "$out"); trail:"
    (cd "$work/$m" && spin -t -DMUTATION_$m protocol.pml 2>&1 | grep -E '^ *STEP' | sed -E 's/^ *STEP/    /')
  else
    echo "[model] FAILED: MUTATION_$m was not caught ($(grep -oE 'errors: [0-9]+' "$out"))"
    status=1
  fi
done
echo "[model] $([ $status = 0 ] && echo "the protocol holds and every mutation is caught" || echo FAILED)"
exit $status
