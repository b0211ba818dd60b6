#!/usr/bin/env bash
# Checks model/protocol.pml with Spin: the protocol exhaustively (every interleaving of steps,
# crashes up to MAXCRASH, lost names and in-flight writes), which must hold every property;
# then each mutation, which must yield a counterexample, printed as its sequence of protocol
# steps. Then model/rescale.pml, the hand-off between epochs (docs/protocol.md §11), the same
# way: exhaustively for a rescale 2 -> 1, 2 -> 3 and 2 -> 3 -> 1, then each of its mutations
# (its shortest counterexample printed). Exit 0 only if both models hold and every mutation is
# caught.
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
MUTATIONS=(COMMIT_BEFORE_ACK NO_FSYNC_OFFSETS FRESH_TIMESTAMPS_ON_REPLAY SKIP_OPEN_BATCH GROUP_BEFORE_COMMIT COMMIT_NOT_AWAITED
  NO_COMMIT_IN_WAL NO_FSYNC_AT_START)
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

# --- model/rescale.pml: the hand-off between epochs ---------------------------------------------
# Its searches store states compressed (-DCOLLAPSE: lossless, still exhaustive) to stay well
# under 1 GB; statements are not merged (-o3), so that every unreached assertion is listed.
rescale="$here/rescale.pml"
rescale_status=0
RESCALE_PROPERTIES="table_exact, timestamps_stable, single_owner, group_behind_table, older_epoch_sealed, no invalid end state"
# the shapes checked: name, then Spin's defines (epoch 0 always has 2 workers)
SHAPES=("2 -> 1|-DM1=1 -DMAXCRASH=2" "2 -> 3|-DM1=3 -DMAXCRASH=2" "2 -> 3 -> 1|-DM1=3 -DM2=1 -DMAXCRASH=1")
# each mutation, with the shapes it is checked in (its trail: the last one's, shortest)
RESCALE_MUTATIONS=("NEW_OWNER_RESTARTS_CHAIN|2 -> 1,2 -> 3" "SAVEPOINT_BEFORE_SEAL|2 -> 1,2 -> 3"
  "SEALED_WORKER_PLANS_AGAIN|2 -> 1,2 -> 3" "SEAL_FROM_OFFSETS_NOT_COMMITS|2 -> 1,2 -> 3"
  "REPORT_SEAL_BEFORE_FSYNC|2 -> 1,2 -> 3" "EMPTY_SEAL_FORGETS_SAVEPOINT|2 -> 3 -> 1")

shape_defines() {
  local s
  for s in "${SHAPES[@]}"; do [ "${s%%|*}" = "$1" ] && { echo "${s#*|}"; return; }; done
}

# verify_rescale NAME "DEFINES" GCCOPT PANFLAGS: builds and runs the verifier; its output in $work/NAME.out
verify_rescale() {
  local name=$1 define=$2 opt=$3 flags=$4 dir="$work/$1"
  mkdir -p "$dir" && cp "$rescale" "$dir/rescale.pml"
  (cd "$dir" && spin -a -o3 $define rescale.pml > spin.out 2>&1 && gcc $opt -DSAFETY -DCOLLAPSE -o pan pan.c 2> gcc.out) \
    || { echo "[model] ERROR: cannot build the verifier for $name:"; cat "$dir/spin.out" "$dir/gcc.out"; return 2; }
  local start; start=$(date +%s%N)
  (cd "$dir" && ./pan -m100000 $flags > pan.out 2>&1) || true
  elapsed=$(awk -v ns=$(( $(date +%s%N) - start )) 'BEGIN { printf "%.2f", ns / 1e9 }')
  cp "$dir/pan.out" "$work/$name.out"
}
# the property an assertion of a trail checks: the comment on its line of the model
violated_property() {
  local dir=$1 define=$2 line
  line=$(cd "$dir" && spin -t $define rescale.pml 2>&1 | grep -m1 -oE 'rescale.pml:[0-9]+, Error: assertion violated' | cut -d: -f2 | cut -d, -f1 || true)
  if [ -n "$line" ]; then
    sed -n "${line}p" "$rescale" | grep -oE '/\* [a-z_]+' | tr -d '/* ' || true
  elif grep -q 'invalid end state' "$dir/pan.out"; then
    echo "no invalid end state"
  fi
}

echo "[model] checking $rescale exhaustively"
for s in "${SHAPES[@]}"; do
  shape=${s%%|*}; define=${s#*|}; name="rescale-correct-${shape//[^0-9]/}"
  verify_rescale "$name" "$define" -O2 "" || { rescale_status=1; continue; }
  out="$work/$name.out"
  errors=$(grep -oE 'errors: [0-9]+' "$out" | grep -oE '[0-9]+$' || echo "?")
  # complete only if no depth limit cut it and every property's assertion was reached (the
  # only unreached assertions allowed are the model's own bounds, assert(0))
  unreached=$(sed -n '/unreached in proctype/,$p' "$out" | grep -E '"assert\(' | grep -vF '"assert(0)"' || true)
  if [ "$errors" = "0" ] && ! grep -qE 'max search depth too small|depth limit|search not completed' "$out" && [ -z "$unreached" ]; then
    echo "[model] rescale $shape ($(echo "$define" | grep -oE 'MAXCRASH=[0-9]+' | tr = ' ')): holds — $RESCALE_PROPERTIES; $(figures "$out")"
  else
    echo "[model] FAILED: the rescale model ($shape) does not hold or the search was incomplete ($errors errors)"
    cat "$out"
    if [ "$errors" != "0" ] && [ "$errors" != "?" ]; then
      (cd "$work/$name" && spin -t $define rescale.pml 2>&1 | grep -E 'STEP|assertion violated' | sed 's/^ */    /')
    fi
    rescale_status=1
  fi
done

for entry in "${RESCALE_MUTATIONS[@]}"; do
  m=${entry%%|*}; IFS=, read -r -a shapes <<< "${entry#*|}"
  caught=() missed=() property="" last=""
  for shape in "${shapes[@]}"; do
    define="$(shape_defines "$shape") -DMUTATION_$m"; name="rescale-$m-${shape//[^0-9]/}"
    # the shortest counterexample (-i) of the shape whose trail is printed
    flags=""; [ "$shape" = "${shapes[-1]}" ] && flags="-i"
    verify_rescale "$name" "$define" -O0 "$flags" || { missed+=("$shape (no verifier)"); continue; }
    if grep -qE 'errors: [1-9]' "$work/$name.out"; then
      p=$(violated_property "$work/$name" "$define" || true)
      caught+=("$shape: ${p:-assertion} violated, $(grep -oE '[0-9]+ states, stored' "$work/$name.out" | grep -oE '^[0-9]+' || true) states")
      [ -z "$property" ] && property=${p:-assertion}
      last="$name|$define"
    else
      missed+=("$shape")
    fi
  done
  if [ ${#missed[@]} = 0 ]; then
    echo "[model] rescale MUTATION_$m: counterexample, $property violated; $(IFS=';'; echo "${caught[*]}" | sed 's/;/; /g'); trail ($shape, shortest):"
    (cd "$work/${last%%|*}" && spin -t ${last#*|} rescale.pml 2>&1 | grep -E '^ *STEP' | sed -E 's/^ *STEP/    /')
  else
    echo "[model] FAILED: rescale MUTATION_$m was not caught in ${missed[*]}"
    rescale_status=1
  fi
done
echo "[model] $([ $rescale_status = 0 ] && echo "the rescale hand-off holds and every mutation is caught" || echo "FAILED: the rescale model")"
[ $rescale_status = 0 ] || status=1
exit $status
