"""The GarmentCode example runs on the vendored GarmentCode files as they come and writes the
garment (OBJ) and the images (PNG)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np


def _obj_vertices(path):
    return np.array(
        [[float(x) for x in line.split()[1:4]] for line in path.read_text().splitlines()
         if line.startswith("v ")]
    )


def test_the_garmentcode_example_drapes_the_skirt_on_the_body(repo, tmp_path):
    out = tmp_path / "drape"
    example = repo / "python" / "examples" / "drape_garmentcode.py"
    # A short run (the seams close in the first half second): the files, not the drape.
    subprocess.run(
        [sys.executable, str(example), "--out", str(out), "--seconds", "0.2"], check=True
    )
    garment = _obj_vertices(out / "garment.obj")
    assert len(garment) > 500
    assert np.all(np.isfinite(garment))
    # The skirt is around the body's hips: its centre within the body's outline, below the
    # body's chest (the body is 1.66 m tall, feet at y = 0 or below).
    body = _obj_vertices(repo / "assets" / "garmentcode" / "mean_female.obj")
    lo, hi = body.min(axis=0), body.max(axis=0)
    c = garment.mean(axis=0)
    assert np.all(c[[0, 2]] > lo[[0, 2]]) and np.all(c[[0, 2]] < hi[[0, 2]]), (c, lo, hi)
    assert lo[1] + 0.3 * (hi[1] - lo[1]) < c[1] < lo[1] + 0.75 * (hi[1] - lo[1]), (c, lo, hi)
    images = sorted((out / "images").glob("*.png"))
    assert len(images) == 2
    for p in images:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
