"""Drape a GarmentCode sewing pattern on GarmentCode's body and write the result.

    python python/examples/drape_garmentcode.py [--pattern FILE] [--out DIR] [--seconds S]

The pattern's panels are placed around the body as GarmentCode placed them, sewn together in
the first half second (gravity held off while the seams close), then left to hang. Writes
``DIR/garment.obj`` (the draped garment, rest (u, v) as texture coordinates), the run's
frames and ``stats.json``, and ``DIR/images/frame_NNNN.png`` (the first and the last frame,
front view, with the body).

The default is the flared skirt (``assets/garmentcode/flare_skirt_specification.json``):
1,200 vertices at the default 3 cm edge length, a few seconds on two cores.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import cloth

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "garmentcode"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pattern", type=Path, default=ASSETS / "flare_skirt_specification.json")
    p.add_argument("--body", type=Path, default=ASSETS / "mean_female.obj")
    p.add_argument("--out", type=Path, default=Path("out/drape_garmentcode"))
    p.add_argument("--seconds", type=float, default=2.0, help="simulated time (s)")
    p.add_argument("--edge-length", type=float, default=0.03, help="triangle size (m)")
    a = p.parse_args()

    garment = cloth.Cloth.from_pattern(
        a.pattern,
        edge_length=a.edge_length,
        name="garment",
        material="cotton",
        thickness=0.004,
        sew_time=0.5,
    )
    body = cloth.Collider.obj(a.body, name="body", friction=0.5)
    fps = 30
    scene = cloth.Scene(cloth=garment, colliders=[body], fps=fps, frames=round(a.seconds * fps))

    counts = scene.check()
    print(f"{a.pattern.name}: {counts['vertices']} vertices, {counts['triangles']} triangles")
    print(counts["cloths"][0]["garment"])

    result = cloth.run(scene, out=a.out)
    last = result.frames[-1]
    print(
        f"{len(result.frames)} frames, {1e3 * result.totals['seconds_per_frame']:.0f} ms "
        f"each; at the end: largest "
        f"stretch {100 * last['max_stretch']:.1f} %, widest seam gap "
        f"{1000 * last['seam_gap']:.1f} mm"
    )

    shutil.copyfile(result.frame_path(scene.frames), a.out / "garment.obj")
    images = cloth.render(a.out, a.out / "images", view="front", every=scene.frames)
    print(f"wrote {a.out / 'garment.obj'} and {images} images in {a.out / 'images'}")


if __name__ == "__main__":
    main()
