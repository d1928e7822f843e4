#!/usr/bin/env bash
# The Python package's CI, for .ci/run: builds `cloth` with `pip install ./python` in a fresh
# virtual environment, imports it, and runs python/tests with pytest. The Blender test runs
# in a second environment that holds Blender's Python module (`bpy`, a 374 MB download that
# unpacks to about 1 GB), kept between runs in a cache folder; where bpy cannot be installed
# (no registry, a Python other than the one Blender's release uses) that test is skipped.
#
# Environment:
#   CLOTH_PYTHON_CACHE   cache folder (default ~/.cache/cloth-python): the package's Cargo
#                        target directory (compiled dependencies, kept between runs: a build
#                        from scratch takes several minutes, see docs/python.md) and the bpy
#                        environment.
#   CLOTH_BPY=0          skip the Blender test (no download).
#   CLOTH_BIN            the `cloth` command for the byte-for-byte comparison (default
#                        target/release/cloth; the test is skipped without one).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${CLOTH_PYTHON_CACHE:-$HOME/.cache/cloth-python}"
mkdir -p "$cache"
export CARGO_TARGET_DIR="$cache/target"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
lap() { echo "   ($((SECONDS - start)) s so far)"; }

echo "== python: pip install ./python in a fresh virtual environment"
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

if [ "${CLOTH_BPY:-1}" = "0" ]; then
  echo "== python: Blender test skipped (CLOTH_BPY=0)"
  exit 0
fi
echo "== python: the Blender add-on in headless Blender (bpy)"
bpy_env="$cache/bpy-venv"
if [ ! -x "$bpy_env/bin/python" ] || ! "$bpy_env/bin/python" -c "import bpy" 2>/dev/null; then
  rm -rf "$bpy_env"
  python3 -m venv "$bpy_env"
  if ! "$bpy_env/bin/python" -m pip install --quiet bpy pytest; then
    rm -rf "$bpy_env"
    echo "bpy could not be installed (it exists for one Python version: $(python3 --version)); the Blender test is skipped"
    exit 0
  fi
fi
# The same build (the target directory is shared): only the wheel is made again.
"$bpy_env/bin/python" -m pip install --quiet --no-deps --force-reinstall "$repo/python"
(cd "$repo" && "$bpy_env/bin/python" -m pytest -q -p no:cacheprovider python/tests/test_blender.py)
lap
