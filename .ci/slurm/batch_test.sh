#!/usr/bin/env bash
# End-to-end test of `cloth batch` on the private one-node Slurm cluster:
#   plan a 24-task wedge (4 materials x 6 largest step sizes) twice, run one copy locally
#   (`cloth batch run --jobs 2`) and submit the other as a Slurm array; cancel one array
#   element while it runs (scancel), let the rest finish, resubmit (only the cancelled task
#   goes), and check that every task finished exactly once, that the Slurm outputs equal the
#   local ones byte for byte (OBJ frames, and collect's summary.txt, which has no wall times),
#   and that a third submission finds nothing to do. down.sh runs on any exit.
#
#   bash .ci/slurm/batch_test.sh
#
# Optional environment: CLOTH_SLURM_DIR (default /tmp/cloth-slurm-batch, apart from
# smoke.sh's cluster), CLOTH_SLURM_PORT (default 6837), CLOTH_BIN (default: build and use
# target/release/cloth).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export CLOTH_SLURM_DIR="${CLOTH_SLURM_DIR:-/tmp/cloth-slurm-batch}"
export CLOTH_SLURM_PORT="${CLOTH_SLURM_PORT:-6837}"
# shellcheck source=SCRIPTDIR/lib.sh
. "$HERE/lib.sh"

echo "== Slurm: cloth batch end to end (.ci/slurm/batch_test.sh)"
T_ALL="$(now)"
TIMINGS=()
timing() { TIMINGS+=("$(printf '%-40s %s' "$1" "$2")"); log "$1: $2"; }

FAILS=0
PASSES=0
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then
    log "ok   - $what"
    PASSES=$(( PASSES + 1 ))
  else
    log "FAIL - $what"
    FAILS=$(( FAILS + 1 ))
  fi
}

downed=0
on_exit() {
  local rc=$?
  if (( ! downed )); then
    bash "$HERE/down.sh" || rc=1
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- the binary
if [[ -z "${CLOTH_BIN:-}" ]]; then
  T="$(now)"
  (cd "$ROOT" && cargo build --release --quiet -p cloth --bin cloth)
  CLOTH_BIN="$ROOT/target/release/cloth"
  timing "cargo build --release (cloth)" "$(elapsed "$T")"
fi
[[ -x "$CLOTH_BIN" ]] || die "no cloth binary at $CLOTH_BIN"

# ---------------------------------------------------------------- the wedge
WORK="$CLOTH_SLURM_DIR/batch/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$WORK/scenes"
# A small sheet pinned at two corners falling onto a plane: 25 x 25 vertices, 40 frames.
# Small steps (h_max down to 2.5 ms) make the last tasks long enough (seconds) to be caught
# running and cancelled.
cat >"$WORK/scenes/sheet.toml" <<'EOF'
[run]
frames = 40
[cloth]
mesh = { kind = "grid", nx = 25, ny = 25, width = 0.6, height = 0.6 }
position = [0, 0.8, 0]
drag = 0.7
[[pin]]
vertices = [0, 24]
[[collider]]
shape = "plane"
position = [0, 0.3, 0]
EOF
cat >"$WORK/batch.toml" <<'EOF'
# The issue's wedge: 4 materials x 6 largest step sizes = 24 tasks.
base = "scenes/sheet.toml"
name = "{cloth.material}-h{solver.h_max}"
[[axis]]
key = "cloth.material"
values = ["cotton", "silk", "denim", "wool"]
[[axis]]
key = "solver.h_max"
values = [0.0333, 0.02, 0.0125, 0.01, 0.005, 0.0025]
EOF
LOCAL="$WORK/local"
ARRAY="$WORK/slurm"
T="$(now)"
"$CLOTH_BIN" batch plan "$WORK/batch.toml" --out "$LOCAL"
"$CLOTH_BIN" batch plan "$WORK/batch.toml" --out "$ARRAY" >/dev/null
timing "plan 24 tasks (x2)" "$(elapsed "$T")"
check "both plans hold the same task scenes" diff -r "$LOCAL/tasks" "$ARRAY/tasks"

# ---------------------------------------------------------------- local run
T="$(now)"
"$CLOTH_BIN" batch run "$LOCAL" --jobs 2 | tail -n 1
timing "local run, --jobs 2" "$(elapsed "$T")"
check "local: 24 tasks done" grep -q 'done             24' <<<"$("$CLOTH_BIN" batch status "$LOCAL")"

# ---------------------------------------------------------------- cluster
T="$(now)"
bash "$HERE/up.sh" >/dev/null
timing "up.sh" "$(elapsed "$T")"
# shellcheck source=/dev/null
. "$ENV_FILE"

# The task to cancel: the last one (smallest step, so the longest), which starts when a core
# frees up near the end of the array.
KILL=23
KILL_DIR="$ARRAY/runs/$(printf '%06d' "$KILL")"

T="$(now)"
out="$("$CLOTH_BIN" batch slurm "$ARRAY" --array-limit 2 --submit)"
printf '%s\n' "$out" >&2
JID="$(tail -n 1 <<<"$out")"
[[ "$JID" =~ ^[0-9]+$ ]] || die "no job id from cloth batch slurm --submit"
log "submitted array job $JID"

wait_until() { # wait_until SECONDS COMMAND...: poll every 0.1 s
  local limit="$1" t0
  shift
  t0="$(now)"
  until "$@"; do
    if awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
      return 1
    fi
    sleep 0.1
  done
}
queue_empty() { [[ -z "$(squeue -h -j "$1" 2>/dev/null || true)" ]]; }
# Mid-run: a few frames written, the run not complete.
mid_run() { [[ -e "$KILL_DIR/frame_0003.obj" ]]; }

check "task $KILL started and wrote frame 3" wait_until 180 mid_run
scancel "${JID}_${KILL}"
log "scancel ${JID}_${KILL}"
check "array job $JID left the queue" wait_until 180 queue_empty "$JID"
timing "array of 24 with one task cancelled" "$(elapsed "$T")"

status="$("$CLOTH_BIN" batch status "$ARRAY")"
printf '%s\n' "$status" >&2
check "23 tasks done after the first submission" grep -q 'done             23' <<<"$status"
check "the cancelled task is interrupted, not done" \
  grep -Eq "^interrupted +1  $KILL\$" <<<"$status"
state="$(scontrol -o show job "${JID}_${KILL}" 2>/dev/null | grep -o 'JobState=[A-Z]*' || true)"
check "Slurm recorded task $KILL as cancelled ($state)" test "$state" = "JobState=CANCELLED"

# ---------------------------------------------------------------- resubmit
T="$(now)"
out="$("$CLOTH_BIN" batch slurm "$ARRAY" --array-limit 2 --submit)"
printf '%s\n' "$out" >&2
JID2="$(tail -n 1 <<<"$out")"
check "the resubmission holds only task $KILL" grep -q "submitted job $JID2: 1 tasks (array $KILL%2" <<<"$out"
check "resubmitted job $JID2 finished" wait_until 180 queue_empty "$JID2"
timing "resubmission of the cancelled task" "$(elapsed "$T")"
check "all 24 tasks done" grep -q 'done             24' <<<"$("$CLOTH_BIN" batch status "$ARRAY")"
check "a third submission finds nothing to do" \
  grep -q 'nothing to submit' <<<"$("$CLOTH_BIN" batch slurm "$ARRAY" --submit)"

# ---------------------------------------------------------------- exactly once, same bytes
exactly_once() {
  local dir="$1" i log ends
  for (( i = 0; i < 24; i++ )); do
    log="$dir/logs/$(printf '%06d' "$i").log"
    ends="$(grep -c ' end exit=0 ' "$log" || true)"
    [[ "$ends" == 1 ]] || { log "task $i: $ends completed runs in $log"; return 1; }
  done
}
check "local: every task ran to completion exactly once" exactly_once "$LOCAL"
check "slurm: every task ran to completion exactly once" exactly_once "$ARRAY"
KILL_LOG="$ARRAY/logs/$(printf '%06d' "$KILL").log"
check "slurm: task $KILL started twice (cancelled, then rerun)" \
  test "$(grep -c ' start ' "$KILL_LOG")" -eq 2
check "slurm: its second start saw the interrupted run" grep -q 'state=interrupted' "$KILL_LOG"
check "slurm: and resumed it from its checkpoint" grep -q 'state=interrupted resume=true' "$KILL_LOG"

same_frames() {
  local n=0 f rel
  while IFS= read -r f; do
    rel="${f#"$LOCAL"/}"
    cmp -s "$f" "$ARRAY/$rel" || { log "differs: $rel"; return 1; }
    n=$(( n + 1 ))
  done < <(find "$LOCAL/runs" -name 'frame_*.obj' | sort)
  local m
  m="$(find "$ARRAY/runs" -name 'frame_*.obj' | wc -l)"
  log "$n OBJ frames compared"
  [[ "$n" -eq $(( 24 * 41 )) && "$m" -eq "$n" ]]
}
T="$(now)"
"$CLOTH_BIN" batch collect "$LOCAL" >/dev/null
out="$("$CLOTH_BIN" batch collect "$ARRAY")"
printf '%s\n' "${out%%$'\n'*}"
timing "collect (x2)" "$(elapsed "$T")"
check "every OBJ frame of the Slurm run equals the local run's" same_frames
check "collect's deterministic summaries are equal" diff "$LOCAL/summary.txt" "$ARRAY/summary.txt"
check "results.csv has a row per task" test "$(wc -l <"$ARRAY/results.csv")" -eq 25
check "contact sheet written" test -s "$ARRAY/contact_sheet.png"

# ---------------------------------------------------------------- down
T="$(now)"
downed=1
check "down.sh succeeded" bash "$HERE/down.sh"
timing "down.sh" "$(elapsed "$T")"
check "no process of our cluster is left" test -z "$(our_processes)"

timing "batch_test.sh total" "$(elapsed "$T_ALL")"
log "timings:"
printf '  %s\n' "${TIMINGS[@]}" >&2
echo "$PASSES passed, $FAILS failed"
if (( FAILS )); then
  log "work dir kept: $WORK"
  exit 1
fi
rm -rf "$WORK"
