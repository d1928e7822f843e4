#!/usr/bin/env bash
# Stop the private Slurm cluster that up.sh started (idempotent).
#
#   bash .ci/slurm/down.sh           # cancel jobs, stop daemons, keep state
#   bash .ci/slurm/down.sh --purge   # ... and delete $CLOTH_SLURM_DIR
#
# Only processes that belong to this cluster are signalled: the daemons named
# by our pid files, and processes carrying our owner mark or our job
# environment (see our_processes in lib.sh). Never pkill by name: a machine may
# run another Slurm.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/lib.sh
. "$HERE/lib.sh"

purge=0
case "${1:-}" in
  "") ;;
  --purge) purge=1 ;;
  *) die "usage: down.sh [--purge]" ;;
esac
# up.sh sets this when it only restarts the Slurm daemons after a config change.
keep_munge="${CLOTH_SLURM_KEEP_MUNGE:-0}"
T0="$(now)"

# stop_pids SECONDS PIDFILE:COMM...: SIGTERM to each live daemon at once, wait
# for all of them (each takes 1-2 s to save state and exit, so stopping them
# in parallel keeps down.sh short), then SIGKILL whatever is left.
stop_pids() {
  local limit="$1" spec file comm i alive p
  shift
  local -a pids=()
  for spec in "$@"; do
    file="${spec%%:*}" comm="${spec##*:}"
    if pid_alive "$file" "$comm"; then
      pids+=("$(pid_of "$file")")
      kill -TERM "${pids[-1]}" 2>/dev/null || true
    fi
  done
  for (( i = 0; i < limit * 10 && ${#pids[@]}; i++ )); do
    alive=0
    for p in "${pids[@]}"; do running "$p" && alive=1; done
    (( alive )) || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do
    if running "$p"; then
      log "pid $p ignored SIGTERM for ${limit}s: SIGKILL"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  # A daemon that exited stays a zombie until PID 1 reaps it (about a second
  # here; never, under a PID 1 that does not reap). It is dead either way, but
  # wait a little so that `ps` right after down.sh shows nothing.
  for (( i = 0; i < 100 && ${#pids[@]}; i++ )); do
    alive=0
    for p in "${pids[@]}"; do [[ -d "/proc/$p" ]] && alive=1; done
    (( alive )) || break
    sleep 0.1
  done
  for spec in "$@"; do rm -f "${spec%%:*}"; done
}

# 1. Cancel every job while slurmctld and slurmd can still clean up after them
#    (slurmd signals each job's processes; stopping slurmd alone would leave
#    slurmstepd and the jobs running).
if pid_alive "$PID_SLURMCTLD" slurmctld; then
  # %F is the array job id (the plain id for other jobs): scancel of an array
  # task's own record id is rejected as "invalid job id", while scancel of the
  # array id cancels all of its tasks.
  mapfile -t jobs < <(squeue -h -o '%F' 2>/dev/null | sort -u)
  if (( ${#jobs[@]} )); then
    log "cancelling ${#jobs[@]} job(s)"
    scancel "${jobs[@]}" 2>/dev/null || true
    # KillWait is 5 s, so 20 s covers SIGTERM -> SIGKILL -> epilog.
    for (( i = 0; i < 200; i++ )); do
      [[ -z "$(squeue -h -o '%F' 2>/dev/null)" ]] && break
      sleep 0.1
    done
  fi
fi

# 2. The daemons. Jobs are gone, so nothing needs them in any order.
daemons=("$PID_SLURMD:slurmd" "$PID_SLURMCTLD:slurmctld")
[[ "$keep_munge" == 1 ]] || daemons+=("$PID_MUNGED:munged")
stop_pids 15 "${daemons[@]}"

# 3. Stragglers: slurmstepd or job processes that outlived the cancel (e.g. a
#    job that ignored SIGTERM while slurmd was going away).
keep_pid=""
if [[ "$keep_munge" == 1 ]] && pid_alive "$PID_MUNGED" munged; then
  keep_pid="$(pid_of "$PID_MUNGED")"
fi
for sig in TERM KILL; do
  mapfile -t left < <(our_processes | grep -vxF "${keep_pid:-none}" || true)
  (( ${#left[@]} )) || break
  log "SIG$sig to leftover processes: ${left[*]}"
  kill "-$sig" "${left[@]}" 2>/dev/null || true
  for (( i = 0; i < 30; i++ )); do
    mapfile -t left < <(our_processes | grep -vxF "${keep_pid:-none}" || true)
    (( ${#left[@]} )) || break
    sleep 0.1
  done
done
mapfile -t left < <(our_processes | grep -vxF "${keep_pid:-none}" || true)
(( ${#left[@]} == 0 )) || die "processes still running after SIGKILL: ${left[*]}"

if (( purge )) && [[ -d "$CLOTH_SLURM_DIR" ]]; then
  # Guard against deleting something that is not a cluster directory.
  [[ -f "$SLURM_CONF_FILE" || -d "$MUNGE_DIR" ]] \
    || die "$CLOTH_SLURM_DIR does not look like a cloth slurm dir; not deleting"
  rm -rf -- "$CLOTH_SLURM_DIR"
  log "purged $CLOTH_SLURM_DIR"
fi
log "down: $(elapsed "$T0")"
