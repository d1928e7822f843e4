# shellcheck shell=bash
# The path variables are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared paths and helpers for up.sh, down.sh and smoke.sh (sourced, never run).
#
# Everything the private cluster owns lives under one directory so that several
# checkouts (or a developer's own Slurm) cannot collide with it and so that
# down.sh can tell exactly which processes are ours.

CLOTH_SLURM_DIR="${CLOTH_SLURM_DIR:-/tmp/cloth-slurm}"
# Absolute path: it is baked into slurm.conf and into the env file.
case "$CLOTH_SLURM_DIR" in
  /*) ;;
  *) CLOTH_SLURM_DIR="$PWD/$CLOTH_SLURM_DIR" ;;
esac
export CLOTH_SLURM_DIR

SLURM_ETC="$CLOTH_SLURM_DIR/etc"
SLURM_CONF_FILE="$SLURM_ETC/slurm.conf"
SLURM_STATE="$CLOTH_SLURM_DIR/state"   # slurmctld StateSaveLocation
SLURM_SPOOL="$CLOTH_SLURM_DIR/spool"   # slurmd SlurmdSpoolDir
SLURM_LOG="$CLOTH_SLURM_DIR/log"
SLURM_RUN="$CLOTH_SLURM_DIR/run"       # pid files
MUNGE_DIR="$CLOTH_SLURM_DIR/munge"
MUNGE_KEY="$MUNGE_DIR/munge.key"
MUNGE_SOCKET="$MUNGE_DIR/munge.socket.2"
ENV_FILE="$CLOTH_SLURM_DIR/env"

PID_MUNGED="$SLURM_RUN/munged.pid"
PID_SLURMCTLD="$SLURM_RUN/slurmctld.pid"
PID_SLURMD="$SLURM_RUN/slurmd.pid"

# Slurm's client commands and daemons find the config through this variable;
# nothing is written to /etc/slurm, so a system-wide Slurm is left untouched.
export SLURM_CONF="$SLURM_CONF_FILE"

log() { printf '[slurm-ci] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Seconds since the epoch with millisecond precision, for phase timings.
now() { date +%s.%N; }
# elapsed START -> "12.3s"
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# pid_alive PIDFILE COMM: true when PIDFILE names a live process whose command
# name starts with COMM. Checking the name guards against a stale pid file whose
# number was reused by an unrelated process (we must never signal that one).
# /proc/PID/comm is cut to 15 characters and Debian runs slurmd as
# "slurmd-wlm" (via alternatives), hence the prefix match.
pid_alive() {
  local file="$1" comm="$2" pid name
  [[ -s "$file" ]] || return 1
  pid="$(tr -dc '0-9' <"$file")"
  [[ -n "$pid" ]] || return 1
  running "$pid" || return 1
  name="$(cat "/proc/$pid/comm" 2>/dev/null)" || return 1
  [[ "$name" == "$comm"* ]]
}

# running PID: the process exists and is not a zombie. Our daemons fork away
# from us and are reparented to PID 1; in a container whose PID 1 is slow to
# reap (or never reaps), a dead daemon lingers as a zombie that still has a
# /proc entry and its old comm.
running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  # Field 3, after the parenthesised comm (which may itself contain spaces).
  stat="${stat##*) }"
  [[ "${stat%% *}" != [ZX] ]]
}

pid_of() { tr -dc '0-9' <"$1"; }

# Every daemon up.sh starts gets this variable in its environment, and slurmd
# passes it on to each slurmstepd it forks. The callers' own shells never have
# it (unlike SLURM_CONF, which they export from the env file), so it marks
# exactly our processes.
OWNER_MARK="CLOTH_SLURM_OWNER=$CLOTH_SLURM_DIR"

# our_processes: pids of our daemons and slurmstepds, plus job processes of our
# cluster (a job's environment holds SLURM_JOB_ID together with our SLURM_CONF;
# the latter reaches the job because sbatch exports the submitter's
# environment). That catches a job that escaped its slurmstepd, too.
our_processes() {
  # grep -z reads each NUL-separated VAR=value as one record; -l names the
  # matching /proc/PID/environ files (one grep per question keeps this fast).
  local -a envs=(/proc/[0-9]*/environ)
  {
    grep -lzxF "$OWNER_MARK" "${envs[@]}" 2>/dev/null || true
    comm -12 \
      <(grep -lzxF "SLURM_CONF=$SLURM_CONF_FILE" "${envs[@]}" 2>/dev/null | sort || true) \
      <(grep -lz '^SLURM_JOB_ID=' "${envs[@]}" 2>/dev/null | sort || true)
  } | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | sort -un \
    | grep -vxF -e "$$" -e "${BASHPID:-$$}" || true
}

show_logs() {
  local f
  for f in "$SLURM_LOG/slurmctld.log" "$SLURM_LOG/slurmd.log" "$MUNGE_DIR/munged.log"; do
    [[ -f "$f" ]] || continue
    log "---- tail of $f"
    tail -n 25 "$f" >&2 || true
  done
}
