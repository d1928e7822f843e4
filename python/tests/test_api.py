"""Cloths and colliders from arrays, pins and colliders driven between frames, and errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import cloth


def _sheet_arrays(n: int = 9, size: float = 0.5, seed: int = 1):
    """A wavy sheet with per-corner rest coordinates (a seam down the middle), as arrays."""
    rng = np.random.default_rng(seed)
    s = np.linspace(-size / 2, size / 2, n)
    xx, zz = np.meshgrid(s, s)
    y = 0.6 + 0.01 * np.sin(7 * xx) * np.cos(5 * zz) + 1e-4 * rng.standard_normal(xx.shape)
    v = np.stack([xx.ravel(), y.ravel(), zz.ravel()], axis=1)
    tris = []
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1
            tris += [[a, b, d], [a, d, c]]
    t = np.array(tris)
    # Rest (u, v) per corner: the flat layout, stretched by 2 % on one half (a seam).
    uv = v[t][:, :, [0, 2]] * np.where(v[t][:, :, :1] > 0, 1.02, 1.0)
    return v, t, uv


def _write_obj(path: Path, v, t, uv) -> None:
    """The test's own OBJ writer: repr() of a float reads back to the same float."""
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in v.tolist()]
    lines += [f"vt {a!r} {b!r}" for a, b in uv.reshape(-1, 2).tolist()]
    for k, (a, b, c) in enumerate(t.tolist()):
        u = 3 * k + 1
        lines.append(f"f {a + 1}/{u} {b + 1}/{u + 1} {c + 1}/{u + 2}")
    path.write_text("\n".join(lines) + "\n")


def test_a_cloth_from_arrays_is_the_cloth_read_from_obj(tmp_path):
    v, t, uv = _sheet_arrays()
    _write_obj(tmp_path / "sheet.obj", v, t, uv)
    ball = cloth.Collider.sphere(0.2, position=[0, 0.3, 0])
    settings = dict(material="silk", thickness=0.004)
    a = cloth.Simulation(cloth=cloth.Cloth.from_arrays(v, t, uv, **settings), colliders=[ball])
    b = cloth.Simulation(
        cloth=cloth.Cloth.from_obj(tmp_path / "sheet.obj", rest="uv", **settings),
        colliders=[ball],
    )
    assert np.array_equal(a.positions, v)
    assert np.array_equal(a.rest_uv, b.rest_uv)
    assert np.array_equal(a.triangles, t)
    for _ in range(15):
        a.step_frame()
        b.step_frame()
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.velocities, b.velocities)
    # It fell onto the ball: not a trivial comparison of two sheets at rest.
    assert a.positions[:, 1].min() < 0.5


def test_a_collider_from_arrays_is_the_collider_read_from_obj(tmp_path):
    # A box as 12 triangles, wound outward.
    c = np.array([[x, y, z] for x in (-0.2, 0.2) for y in (0.0, 0.3) for z in (-0.2, 0.2)])
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in c.tolist()]
    lines += [f"f {a + 1} {b + 1} {d + 1}" for a, b, d in faces]
    (tmp_path / "box.obj").write_text("\n".join(lines) + "\n")
    sheet = cloth.Cloth.grid(11, 11, 0.6, 0.6, position=[0, 0.4, 0])
    a = cloth.Simulation(cloth=sheet, colliders=[cloth.Collider.mesh(c, faces)])
    b = cloth.Simulation(cloth=sheet, colliders=[cloth.Collider.obj(tmp_path / "box.obj")])
    for _ in range(10):
        a.step_frame()
        b.step_frame()
    assert np.array_equal(a.positions, b.positions)
    # The sheet lies on the box's top (y = 0.3) over the box, not inside it.
    over = (np.abs(a.positions[:, 0]) < 0.15) & (np.abs(a.positions[:, 2]) < 0.15)
    assert np.all(a.positions[over, 1] > 0.3)


def test_a_sphere_moved_between_frames_pushes_the_sheet_and_never_swallows_a_vertex():
    # A sheet hanging in the x-y plane from its top edge; a ball starts behind it (z < 0) and
    # is driven through the sheet's plane, 1.5 cm a frame.
    r, top = 0.12, 1.0
    sheet = cloth.Cloth.grid(
        15, 15, 0.6, 0.6, rotation=[90, 0, 0], position=[0, top - 0.3, 0], material="cotton"
    )
    pin = cloth.Pin(region=([-1, top - 1e-6, -1], [1, top + 1e-6, 1]))
    ball = cloth.Collider.sphere(r, name="ball", position=[0, top - 0.35, -0.2], friction=0.2)
    sim = cloth.Simulation(cloth=sheet, colliders=[ball], pins=[pin])
    centre = np.array([0, top - 0.35, -0.2])
    for _ in range(25):
        centre = centre + [0, 0, 0.015]
        sim.set_collider_pose("ball", centre)
        sim.step_frame()
        p, rot = sim.collider_pose("ball")
        assert np.allclose(p, centre, atol=1e-12)
        assert np.allclose(rot, np.eye(3), atol=1e-12)
        # The test's own geometry: no vertex closer to the centre than the radius.
        d = np.linalg.norm(sim.positions - centre, axis=1)
        assert d.min() >= r, (sim.frame, d.min())
    # The ball went 17.5 cm past the sheet's plane: the sheet in front of it went with it.
    assert centre[2] > 0.15
    ahead = sim.positions[:, 2].max()
    assert ahead > centre[2] + r - 0.01, ahead


def test_pins_moved_between_frames_carry_the_cloth():
    sheet = cloth.Cloth.grid(9, 9, 0.4, 0.4, position=[0, 1, 0])
    sim = cloth.Simulation(cloth=sheet, pins=[cloth.Pin([0, 8])])
    group = sim.pins[0]
    assert group.tolist() == [0, 8]
    start = sim.pin_targets(0)
    for k in range(1, 11):
        target = start + [0.0, 0.02 * k, 0.0]
        sim.set_pin_targets(0, target)
        sim.step_frame()
        assert np.allclose(sim.positions[group], target, atol=1e-12)
        assert np.allclose(sim.pin_targets(0), target, atol=1e-12)
    # Lifted by 20 cm, the pinned corners are 20 cm up and the cloth hangs below them.
    assert np.allclose(sim.positions[group, 1], 1.2)
    assert sim.positions[:, 1].min() < 1.0


def test_a_bad_input_raises_an_error_naming_the_key(tmp_path, cloth_cli):
    text = (
        "[cloth]\n"
        'mesh = { kind = "grid", nx = 5, ny = 5, width = 1.0, height = 1.0 }\n'
        "thickness = -0.01\n"
    )
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(cloth.InputError) as e:
        cloth.Scene(path)
    assert isinstance(e.value, ValueError) and isinstance(e.value, cloth.ClothError)
    assert e.value.key == "cloth.thickness"
    assert (e.value.line, e.value.column) == (3, 13)
    # The message is the one the command prints.
    cli = subprocess.run([str(cloth_cli), "check", str(path)], capture_output=True, text=True)
    assert cli.returncode != 0
    assert cli.stderr.strip() == f"error: {e.value}"


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda: cloth.Scene({"cloth": {"mesh": {"kind": "disc", "radius": -1, "resolution": 3}}}),
         "cloth.mesh.radius"),
        (lambda: cloth.Simulation(cloth=cloth.Cloth.grid(3, 3, 1, 1, frobnicate=1)), "cloth"),
        (lambda: cloth.Simulation(cloth=cloth.Cloth.grid(3, 3, 1, 1), pins=[cloth.Pin([99])]),
         "pin[0].vertices"),
        (lambda: cloth.Scene(cloth=cloth.Cloth.from_obj("/nonexistent/shirt.obj")),
         "cloth.mesh.path"),
        (lambda: cloth.Simulation(cloth=cloth.Cloth.grid(3, 3, 1, 1), fps=-30), "run.fps"),
        (lambda: cloth.Cloth.from_arrays(np.zeros((4, 2)), [[0, 1, 2]]), "cloth.vertices"),
        (lambda: cloth.Simulation(cloth=cloth.Cloth.grid(3, 3, 1, 1), pins=[cloth.Pin([0])])
         .set_pin_targets(0, np.zeros((2, 3))), "pin[0]"),
    ],
)
def test_bad_inputs_name_their_key(make, key):
    with pytest.raises(cloth.InputError) as e:
        make()
    assert e.value.key is not None and e.value.key.startswith(key), (e.value.key, str(e.value))
    assert key in str(e.value)


def test_scene_check_counts_the_cloth():
    s = cloth.Scene(cloth=cloth.Cloth.grid(7, 5, 0.6, 0.4, material={"preset": "cotton", "density": 0.5}))
    c = s.check()
    assert (c["vertices"], c["triangles"]) == (35, 2 * 6 * 4)
    assert c["area"] == pytest.approx(0.24)
    assert c["mass"] == pytest.approx(0.5 * 0.24)
    assert c["cloths"][0]["boundary_loops"] == 1


def test_a_collider_moved_without_a_rotation_keeps_its_orientation():
    box = cloth.Collider.box([0.2, 0.1, 0.3], name="box", position=[0, 0.2, 0], rotation=[10, 30, -20])
    sim = cloth.Simulation(cloth=cloth.Cloth.grid(5, 5, 0.5, 0.5, position=[0, 0.6, 0]), colliders=[box])
    _, r0 = sim.collider_pose("box")
    # R = Rz Ry Rx for the scene's angles, built here from the angles.
    a, b, c = np.radians([10, 30, -20])
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    assert np.allclose(r0, rz @ ry @ rx, atol=1e-12)
    sim.set_collider_pose("box", [0.1, 0.2, 0])
    sim.step_frame()
    p, r = sim.collider_pose(0)
    assert np.allclose(p, [0.1, 0.2, 0], atol=1e-12)
    assert np.allclose(r, r0, atol=1e-9)
    sim.set_collider_pose("box", [0.1, 0.2, 0], rotation=[0, 0, 90])
    sim.step_frame()
    assert np.allclose(sim.collider_pose("box")[1], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-9)
    with pytest.raises(KeyError):
        sim.set_collider_pose("ball", [0, 0, 0])
