#!/usr/bin/env bash
# The Python package's CI, for .ci/run (after `cargo test --workspace --release`): builds
# `cloth` with `pip install ./python` in a fresh virtual environment, imports it, runs
# python/tests with pytest, then the Blender add-on's test in a second environment that holds
# Blender's Python module (`bpy`, a 374 MB download that unpacks to about 1 GB). bpy is
# installed while the package compiles (one is network, the other CPU). Where bpy cannot be
# installed (no registry, a Python other than the one Blender's release uses) the Blender
# test is skipped and the reason printed.
#
# Environment:
#   CARGO_TARGET_DIR     the package's Cargo target directory (default <repo>/target, the
#                        workspace's: crates compiled there with the same versions, features
#                        and profile are reused).
#   CLOTH_PYTHON_CACHE   where the bpy environment is kept between runs (default
#                        ~/.cache/cloth-python).
#   CLOTH_BPY=0          skip the Blender test (no download).
#   CLOTH_BIN            the `cloth` command for the byte-for-byte comparison (default
#                        target/release/cloth; the test is skipped without one).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${CLOTH_PYTHON_CACHE:-$HOME/.cache/cloth-python}"
mkdir -p "$cache"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
work="$(mktemp -d)"
bpy_pid=""
cleanup() {
  if [ -n "$bpy_pid" ]; then kill "$bpy_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
start=$SECONDS
lap() { echo "   ($((SECONDS - start)) s so far)"; }

# The bpy environment, made in the background: exit status 0 when bpy imports.
bpy_env="$cache/bpy-venv"
setup_bpy() {
  if [ -x "$bpy_env/bin/python" ] && "$bpy_env/bin/python" -c "import bpy, pytest" 2>/dev/null; then
    echo "bpy environment reused from $bpy_env"
    return 0
  fi
  rm -rf "$bpy_env"
  python3 -m venv "$bpy_env"
  if ! "$bpy_env/bin/python" -m pip install --quiet bpy pytest; then
    rm -rf "$bpy_env"
    echo "bpy could not be installed (its wheels are for one Python version; this is $(python3 --version))"
    return 1
  fi
}
if [ "${CLOTH_BPY:-1}" != "0" ]; then
  echo "== python: installing bpy in the background ($bpy_env)"
  setup_bpy >"$work/bpy.log" 2>&1 &
  bpy_pid=$!
fi

echo "== python: pip install ./python in a fresh virtual environment (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet "$repo/python" pytest
lap

echo "== python: import cloth"
(cd "$work" && "$py" -c "import cloth; print('cloth', cloth.__version__, 'from', cloth.__file__)")

echo "== python: pytest python/tests"
# Run from the repository so that the tests find scenes/ and target/release/cloth.
(cd "$repo" && "$py" -m pytest -q -p no:cacheprovider python/tests)
lap

if [ -z "$bpy_pid" ]; then
  echo "== python: Blender test skipped (CLOTH_BPY=0)"
  exit 0
fi
echo "== python: the Blender add-on in headless Blender (bpy)"
bpy_ok=0
wait "$bpy_pid" || bpy_ok=$?
bpy_pid=""
cat "$work/bpy.log"
if [ "$bpy_ok" != "0" ]; then
  echo "the Blender test is skipped: bpy is not installable here"
  exit 0
fi
# The same build (the target directory is shared): cargo finds everything fresh, maturin
# only packs the wheel again.
"$bpy_env/bin/python" -m pip install --quiet --no-deps --force-reinstall "$repo/python"
(cd "$repo" && "$bpy_env/bin/python" -m pytest -q -p no:cacheprovider python/tests/test_blender.py)
lap
