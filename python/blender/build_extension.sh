#!/usr/bin/env bash
# Builds the Blender extension: a zip of cloth_blender/ with a wheel of the `cloth` package
# inside (Blender installs an extension's wheels into its own Python).
#
#   python/blender/build_extension.sh [OUT_DIR]     # default: python/blender/dist
#
# Needs Python >= 3.9 with pip, and the Rust toolchain (the wheel is built from source; it is
# an abi3 wheel, so it loads in Blender's Python 3.11 or later). The wheel is for the machine
# that builds it (`platforms` in the manifest says linux-x64: change it when building on
# another platform).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/dist}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/cloth_blender" "$work/"
rm -rf "$work/cloth_blender/__pycache__"
mkdir -p "$work/cloth_blender/wheels"
python3 -m pip wheel --no-deps -w "$work/cloth_blender/wheels" "$here/.."
wheel="$(cd "$work/cloth_blender" && ls wheels/cloth-*.whl | head -n1)"
sed -i "s|^wheels = \[\]|wheels = [\"./$wheel\"]|" "$work/cloth_blender/blender_manifest.toml"
mkdir -p "$out"
(cd "$work/cloth_blender" && python3 -m zipfile -c "$out/cloth_blender.zip" .)
echo "$out/cloth_blender.zip"
