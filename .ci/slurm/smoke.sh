#!/usr/bin/env bash
# Smoke test of the private Slurm cluster: up.sh, a job array, cancelling one
# running array task and resubmitting only that index, down.sh.
# Exit status 0 only when every check passed; down.sh runs on any exit.
#
#   bash .ci/slurm/smoke.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/lib.sh
. "$HERE/lib.sh"

T_ALL="$(now)"
TIMINGS=()
timing() { TIMINGS+=("$(printf '%-34s %s' "$1" "$2")"); log "$1: $2"; }

FAILS=0
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then
    log "ok   - $what"
  else
    log "FAIL - $what"
    FAILS=$(( FAILS + 1 ))
  fi
}

downed=0
on_exit() {
  local rc=$?
  # Whatever happened, leave no cluster behind.
  if (( ! downed )); then
    bash "$HERE/down.sh" || rc=1
  fi
  exit "$rc"
}
trap on_exit EXIT
# An untrapped SIGTERM/SIGINT kills bash without running the EXIT trap; turn
# them into a normal exit so that a CI timeout or ^C still tears down.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- up
T="$(now)"
bash "$HERE/up.sh"
timing "up.sh (install + startup)" "$(elapsed "$T")"
# shellcheck source=/dev/null
. "$ENV_FILE"

WORK="$CLOTH_SLURM_DIR/smoke/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$WORK"
# One array task: records its start in started-ID, optionally blocks while a
# slow-ID file exists (the "long" task we cancel), then appends its interval
# to done-ID. Appending (>>) means a task that ran twice leaves two lines.
cat >"$WORK/task.sh" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
out="$1" secs="$2" id="$SLURM_ARRAY_TASK_ID"
start="$(date +%s.%N)"
echo "$SLURM_ARRAY_JOB_ID $id $start" >>"$out/started-$id"
if [[ -e "$out/slow-$id" ]]; then sleep 300; fi
sleep "$secs"
echo "$start $(date +%s.%N)" >>"$out/done-$id"
EOF
chmod +x "$WORK/task.sh"

# submit DIR ARRAY SECS: prints the job id.
submit() {
  local dir="$1" array="$2" secs="$3"
  mkdir -p "$dir"
  sbatch --parsable --array="$array" --job-name=cloth-smoke --chdir="$dir" \
    --output="$dir/slurm-%A_%a.out" "$WORK/task.sh" "$dir" "$secs" | cut -d';' -f1
}

# wait_gone JOBID SECONDS: until squeue no longer lists any task of the job.
wait_gone() {
  local jid="$1" limit="$2" t0 out
  t0="$(now)"
  while :; do
    out="$(squeue -h -j "$jid" -o '%i %T' 2>/dev/null || true)"
    [[ -z "$out" ]] && return 0
    if awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
      log "job $jid still queued after ${limit}s:"
      printf '%s\n' "$out" >&2
      show_logs
      return 1
    fi
    sleep 0.2
  done
}

# wait_file PATH SECONDS
wait_file() {
  local f="$1" limit="$2" i
  for (( i = 0; i < limit * 5; i++ )); do
    [[ -e "$f" ]] && return 0
    sleep 0.2
  done
  return 1
}

# task_states JOBID: "INDEX STATE EXITCODE" per array task, from scontrol
# (no accounting database, so no sacct).
task_states() {
  scontrol -o show job "$1" 2>/dev/null | awk '{
    idx = ""; st = ""; ec = ""
    for (i = 1; i <= NF; i++) {
      if ($i ~ /^ArrayTaskId=/) { idx = substr($i, 13) }
      if ($i ~ /^JobState=/)    { st = substr($i, 10) }
      if ($i ~ /^ExitCode=/)    { ec = substr($i, 10) }
    }
    print idx, st, ec
  }' | sort -n
}

# lines_are FILE N: FILE exists and has exactly N lines.
lines_are() { [[ -f "$1" ]] && [[ "$(wc -l <"$1")" -eq "$2" ]]; }

# done_once DIR INDEX...: each listed task wrote done-INDEX exactly once.
done_once() {
  local dir="$1" i
  shift
  for i in "$@"; do lines_are "$dir/done-$i" 1 || return 1; done
}

# all_tasks_once DIR FIRST LAST: each done-I exists exactly once, no others.
all_tasks_once() {
  local dir="$1" first="$2" last="$3" i n
  for (( i = first; i <= last; i++ )); do
    lines_are "$dir/done-$i" 1 || { log "done-$i missing or not exactly one line"; return 1; }
  done
  n="$(find "$dir" -maxdepth 1 -name 'done-*' | wc -l)"
  [[ "$n" -eq $(( last - first + 1 )) ]] || { log "$n done files, expected $(( last - first + 1 ))"; return 1; }
}

# max_overlap DIR: most tasks that ran at the same instant (from done-* intervals).
max_overlap() {
  cat "$1"/done-* | awk '{ print $1, 1; print $2, -1 }' | sort -k1,1n -k2,2n \
    | awk '{ c += $2; if (c > m) m = c } END { print m + 0 }'
}

# Job processes that are still alive: everything of ours except the daemons
# (munged, slurmctld with its slurmscriptd child, slurmd), i.e. slurmstepd and
# job scripts.
stray_job_processes() {
  local p comm
  for p in $(our_processes); do
    comm="$(cat "/proc/$p/comm" 2>/dev/null)" || continue
    case "$comm" in
      munged | slurmctld* | slurmscriptd | slurmd | slurmd-wlm) ;;
      *) printf '%s %s\n' "$p" "$comm" ;;
    esac
  done
}

# ---------------------------------------------------------------- 1. array of 6
A="$WORK/array"
T="$(now)"
jid_a="$(submit "$A" 0-5 2)"
log "submitted array job $jid_a (tasks 0-5, 2 s each, $CLOTH_SLURM_CPUS CPUs)"
check "array job $jid_a finished within 120 s" wait_gone "$jid_a" 120
timing "array 0-5 (6 x 2 s) submit->done" "$(elapsed "$T")"
check "every task wrote its file exactly once" all_tasks_once "$A" 0 5
states="$(task_states "$jid_a")"
printf '%s\n' "$states" >&2
check "all 6 tasks COMPLETED with exit 0:0" \
  test "$(grep -c ' COMPLETED 0:0$' <<<"$states")" -eq 6
overlap="$(max_overlap "$A")"
want=$(( CLOTH_SLURM_CPUS < 6 ? CLOTH_SLURM_CPUS : 6 ))
log "max tasks running at once: $overlap (CPUs: $CLOTH_SLURM_CPUS)"
check "tasks ran concurrently up to the core count ($overlap == $want)" test "$overlap" -eq "$want"
# jobcomp lines name each task by its own JobId plus ArrayJobId/ArrayTaskId.
check "jobcomp file has a COMPLETED line per task" \
  test "$(grep -c "JobState=COMPLETED .*ArrayJobId=$jid_a ArrayTaskId=" "$CLOTH_SLURM_JOBCOMP" 2>/dev/null || true)" -eq 6

# ---------------------------------------------------------------- 2. cancel one task
B="$WORK/cancel"
mkdir -p "$B"
touch "$B/slow-2"   # task 2 blocks (sleep 300) until cancelled
T="$(now)"
jid_b="$(submit "$B" 0-3 1)"
log "submitted array job $jid_b (tasks 0-3; task 2 hangs)"
check "task 2 started" wait_file "$B/started-2" 60
scancel "${jid_b}_2"
log "scancel ${jid_b}_2"
check "array job $jid_b finished after the cancel" wait_gone "$jid_b" 90
timing "array 0-3 with task 2 cancelled" "$(elapsed "$T")"
states="$(task_states "$jid_b")"
printf '%s\n' "$states" >&2
check "task 2 is CANCELLED" grep -q '^2 CANCELLED' <<<"$states"
check "tasks 0, 1, 3 COMPLETED" test "$(grep -cE '^[013] COMPLETED 0:0$' <<<"$states")" -eq 3
check "task 2 left no done file" test ! -e "$B/done-2"
check "tasks 0, 1, 3 wrote their files exactly once" \
  done_once "$B" 0 1 3
# slurmstepd reaps the task right after reporting it; allow it a moment.
no_strays_within() {
  local i
  for (( i = 0; i < $1 * 5; i++ )); do
    [[ -z "$(stray_job_processes)" ]] && return 0
    sleep 0.2
  done
  stray_job_processes >&2
  return 1
}
check "the cancelled task's processes are gone" no_strays_within 10

# ---------------------------------------------------------------- 3. resubmit index 2
rm -f "$B/slow-2"
T="$(now)"
jid_c="$(submit "$B" 2 1)"
log "resubmitted index 2 as job $jid_c"
check "resubmitted job $jid_c finished" wait_gone "$jid_c" 60
timing "resubmit of index 2" "$(elapsed "$T")"
check "resubmitted task 2 COMPLETED" grep -q '^2 COMPLETED 0:0$' <<<"$(task_states "$jid_c")"
check "now every task 0-3 wrote its file exactly once" all_tasks_once "$B" 0 3
check "task 2 started twice (cancelled run + rerun)" lines_are "$B/started-2" 2

# ---------------------------------------------------------------- down
T="$(now)"
downed=1
check "down.sh succeeded" bash "$HERE/down.sh"
timing "down.sh" "$(elapsed "$T")"
no_daemons() {
  ! pid_alive "$PID_MUNGED" munged && ! pid_alive "$PID_SLURMCTLD" slurmctld \
    && ! pid_alive "$PID_SLURMD" slurmd
}
check "no daemon from our pid files is alive" no_daemons
check "no process of our cluster is left" test -z "$(our_processes)"
# Anything slurm/munge-named still running is worth a look even if it is not
# ours (another cluster on the machine), but it does not fail the test.
others="$(ps -eo pid=,comm= | awk '$2 ~ /^(slurm|munged)/' || true)"
[[ -z "$others" ]] || log "note: other slurm/munge processes on this machine: $others"

timing "smoke.sh total" "$(elapsed "$T_ALL")"
log "timings:"
printf '  %s\n' "${TIMINGS[@]}" >&2
if (( FAILS )); then
  log "$FAILS check(s) FAILED (work dir: $WORK)"
  exit 1
fi
log "all checks passed"
