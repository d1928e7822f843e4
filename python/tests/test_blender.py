"""The Blender add-on in headless Blender (the `bpy` module from PyPI): a sheet dropped on a
sphere drapes over it, read back from Blender's evaluated mesh.

Skipped where `bpy` is not installed (it is large and exists for one Python version only:
`pip install bpy` on the Python that Blender's release uses, 3.11 for Blender 4.x and 5.0).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

bpy = pytest.importorskip(
    "bpy", reason="bpy (Blender as a Python module) is not installed: `pip install bpy`"
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blender"))
import cloth_blender  # noqa: E402

R, CENTRE_Z, THICKNESS, COLLIDER_THICKNESS = 0.3, 0.5, 0.005, 0.005


@pytest.fixture
def scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    s = bpy.context.scene
    s.frame_start, s.frame_end = 1, 61
    s.render.fps, s.render.fps_base = 30, 1.0
    # A 1 m sheet of 31 x 31 vertices 15 cm above a sphere's top (Blender is z up).
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=30, y_subdivisions=30, size=1.0,
                                    location=(0, 0, CENTRE_Z + R + 0.15))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    bpy.ops.mesh.primitive_uv_sphere_add(radius=R, segments=48, ring_count=24,
                                         location=(0, 0, CENTRE_Z))
    ball = bpy.context.active_object
    ball.name = "Ball"
    bpy.ops.object.modifier_add(type="COLLISION")
    ball.collision.thickness_outer = COLLIDER_THICKNESS
    bpy.ops.object.shade_smooth()
    bpy.context.view_layer.objects.active = sheet
    cloth_blender.register()
    yield s, sheet, ball
    cloth_blender.unregister()


def _world_vertices(obj) -> np.ndarray:
    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    mesh = ev.to_mesh()
    v = np.array([ev.matrix_world @ p.co for p in mesh.vertices])
    ev.to_mesh_clear()
    return v


def test_the_add_on_drapes_a_plane_over_a_sphere(scene):
    s, sheet, ball = scene
    assert cloth_blender.is_collider(ball) and not cloth_blender.is_collider(sheet)
    result = bpy.ops.cloth_bw.simulate()
    assert result == {"FINISHED"}
    keys = [k.name for k in sheet.data.shape_keys.key_blocks]
    assert keys[0] == "Basis" and keys[1:] == [f"cloth_{f:04d}" for f in range(2, 62)]

    s.frame_set(1)
    start = _world_vertices(sheet)
    assert np.allclose(start[:, 2], CENTRE_Z + R + 0.15)
    s.frame_set(61)
    v = _world_vertices(sheet)
    # The sheet's own geometry, measured here: the vertex nearest the axis rests on the top of
    # the sphere, a thickness (the cloth's plus the collider's) above it ...
    centre = np.argmin(np.hypot(start[:, 0], start[:, 1]))
    top = CENTRE_Z + R
    assert abs(v[centre, 2] - (top + THICKNESS + COLLIDER_THICKNESS)) < 0.01, v[centre]
    # ... no vertex is inside the sphere ...
    d = np.linalg.norm(v - [0, 0, CENTRE_Z], axis=1)
    assert d.min() > R - 0.005
    # ... and the corners hang well below the top.
    corners = np.argsort(np.hypot(start[:, 0], start[:, 1]))[-4:]
    assert np.all(v[corners, 2] < top - 0.2), v[corners]
    # Between frames the keys blend: frame 30 shows frame 30's shape alone.
    s.frame_set(30)
    mid = _world_vertices(sheet)
    assert not np.allclose(mid, v) and not np.allclose(mid, start)
