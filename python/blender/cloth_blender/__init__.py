"""Cloth (Baraff-Witkin): simulate the selected mesh in Blender with the `cloth` package.

The active mesh object is the cloth: its mesh as modelled (triangulated; modifiers are not
applied) is the rest shape, a vertex group (default ``pin``) holds vertices in place (they
follow the object's own animation), and every other visible mesh object with a Collision
modifier, or with the custom property ``cloth_collider`` set, is a solid it collides with (a
collider that moves or deforms is exported frame by frame). The result is loaded back as one
shape key per frame (``cloth_0001``, ...) keyed on the scene's frames, so it plays back,
renders and exports like any shape-key animation.

Units: Blender's metres and seconds (set the scene's unit scale to 1); gravity is the scene's
(Scene > Gravity). A collider's ``thickness`` is its Collision modifier's outer thickness
(``collision.thickness_outer``) and its Coulomb friction its custom property
``cloth_friction`` (default 0.4).

Three ways to use it:

- as an add-on (Blender 4.2 and later): zip this folder with a wheel of the ``cloth``
  package inside (``python/blender/build_extension.sh`` does both) and install the zip as an
  extension; then View3D > Sidebar > Cloth BW > Simulate;
- as a script: ``blender --background scene.blend --python cloth_blender/__init__.py --
  --object Plane --save out.blend`` (the ``cloth`` package must be importable by Blender's
  Python, e.g. installed with ``pip install --target`` into its site-packages);
- from Python with Blender as a module (``pip install bpy``): ``import cloth_blender;
  cloth_blender.simulate(bpy.data.objects["Plane"])``.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import bpy
import numpy as np
from mathutils import Matrix

bl_info = {
    "name": "Cloth (Baraff-Witkin)",
    "author": "cloth project",
    "version": (0, 1, 0),
    "blender": (4, 2, 0),
    "location": "View3D > Sidebar > Cloth BW",
    "description": "Simulate the selected mesh against the scene's collision objects with "
    "the cloth package (Baraff & Witkin 1998) and load the result as shape keys",
    "category": "Physics",
}

SHAPE_KEY_PREFIX = "cloth_"
"""Shape keys this add-on makes are named ``cloth_0001``, ... (the simulated frame)."""

PRESETS = ("cotton", "denim", "silk", "polyester", "wool")


def _import_cloth():
    try:
        import cloth  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "the `cloth` Python package is not installed in Blender's Python "
            f"({sys.executable}): install the extension built with build_extension.sh, or "
            "`pip install ./python` into Blender's Python"
        ) from e
    return cloth


# -- reading Blender data ------------------------------------------------------------------


def _matrix(obj) -> np.ndarray:
    return np.array(obj.matrix_world, dtype=np.float64)


def _transform(m: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ m[:3, :3].T + m[:3, 3]


def _mesh_arrays(mesh) -> Tuple[np.ndarray, np.ndarray]:
    """Vertex coordinates (object space) and triangles of a mesh datablock."""
    mesh.calc_loop_triangles()
    v = np.empty(3 * len(mesh.vertices), dtype=np.float64)
    mesh.vertices.foreach_get("co", v)
    t = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", t)
    return v.reshape(-1, 3), t.reshape(-1, 3)


def _corner_uv(mesh, layer: str) -> Optional[np.ndarray]:
    """Per-corner texture coordinates (triangles, 3, 2) of a UV layer, or None."""
    uv_layer = mesh.uv_layers.get(layer) if layer else mesh.uv_layers.active
    if uv_layer is None:
        return None
    loops = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
    mesh.loop_triangles.foreach_get("loops", loops)
    uv = np.empty(2 * len(mesh.loops), dtype=np.float64)
    uv_layer.data.foreach_get("uv", uv)
    return uv.reshape(-1, 2)[loops].reshape(-1, 3, 2)


def _evaluated_world_mesh(obj, depsgraph) -> Tuple[np.ndarray, np.ndarray]:
    """The object's evaluated mesh (modifiers, shape keys, armatures applied) in world space."""
    ev = obj.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    try:
        v, t = _mesh_arrays(mesh)
        return _transform(np.array(ev.matrix_world, dtype=np.float64), v), t
    finally:
        ev.to_mesh_clear()


def is_collider(obj) -> bool:
    """Whether ``obj`` is a solid for the cloth: a mesh with a Collision modifier, or with the
    custom property ``cloth_collider`` set."""
    if obj.type != "MESH":
        return False
    if "cloth_collider" in obj.keys():
        return bool(obj["cloth_collider"])
    return any(m.type == "COLLISION" for m in obj.modifiers)


def _pinned(obj, group: str) -> List[int]:
    """Vertices of the vertex group ``group`` with weight at least 0.5."""
    vg = obj.vertex_groups.get(group) if group else None
    if vg is None:
        return []
    out = []
    for v in obj.data.vertices:
        for g in v.groups:
            if g.group == vg.index and g.weight >= 0.5:
                out.append(v.index)
    return out


def _write_obj(path: str, v: np.ndarray, t: np.ndarray) -> None:
    with open(path, "w", encoding="ascii") as f:
        np.savetxt(f, v, fmt="v %.17g %.17g %.17g")
        np.savetxt(f, t + 1, fmt="f %d %d %d")


# -- the simulation ------------------------------------------------------------------------


def simulate(
    cloth_obj,
    colliders: Optional[Sequence[Any]] = None,
    *,
    frame_start: Optional[int] = None,
    frame_end: Optional[int] = None,
    material: Any = "cotton",
    thickness: float = 0.005,
    self_collision: bool = False,
    pin_group: str = "pin",
    rest: str = "mesh",
    uv_layer: str = "",
    uv_scale: float = 1.0,
    friction: float = 0.4,
    threads: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> int:
    """Simulates ``cloth_obj`` from ``frame_start`` to ``frame_end`` (default: the scene's
    range) and stores the result as shape keys. Returns the number of frames simulated.

    Args:
        cloth_obj: The mesh object to simulate.
        colliders: The solid objects (default: every visible object for which
            :func:`is_collider` holds, but the cloth).
        material: A preset name (``"cotton"``, ``"silk"``, ...) or a material table
            (``{"preset": "cotton", "bend": 1e-5}``; see the scene files' ``material``).
        thickness: The cloth's collision thickness (m).
        self_collision: Whether the cloth collides with itself.
        pin_group: The vertex group of pinned vertices (weight >= 0.5).
        rest: ``"mesh"`` (each triangle as modelled is unstretched) or ``"uv"`` (the UV layer
            ``uv_layer``, default the active one, times ``uv_scale`` metres per unit).
        friction: Coulomb friction against colliders without a ``cloth_friction`` property.
        threads: Worker threads (default all cores).
        progress: ``progress(done, total)`` after each frame.

    Raises:
        RuntimeError: The ``cloth`` package is not installed.
        cloth.ClothError: The simulation could not be built or failed (the message says
            why; the shape keys of the frames before a failure are kept).
    """
    cloth = _import_cloth()
    scene = bpy.context.scene
    f0 = scene.frame_start if frame_start is None else frame_start
    f1 = scene.frame_end if frame_end is None else frame_end
    frames = f1 - f0
    if frames < 1:
        raise ValueError(f"nothing to simulate from frame {f0} to frame {f1}")
    fps = scene.render.fps / scene.render.fps_base
    if colliders is None:
        colliders = [
            o for o in scene.objects if o is not cloth_obj and is_collider(o) and o.visible_get()
        ]
    scene.frame_set(f0)
    depsgraph = bpy.context.evaluated_depsgraph_get()

    # The cloth, in world space at the first frame.
    mesh = cloth_obj.data
    local, tris = _mesh_arrays(mesh)
    world = _transform(_matrix(cloth_obj), local)
    uv = _corner_uv(mesh, uv_layer) if rest == "uv" else None
    if rest == "uv" and uv is None:
        raise ValueError(f"{cloth_obj.name} has no UV layer for rest = 'uv'")
    cl = cloth.Cloth.from_arrays(
        world,
        tris,
        uv,
        rest=rest,
        uv_scale=uv_scale,
        name=cloth_obj.name,
        material=material,
        thickness=thickness,
        self_collision=self_collision,
    )
    pinned = _pinned(cloth_obj, pin_group)
    pins = [cloth.Pin(pinned)] if pinned else []

    folder = tempfile.mkdtemp(prefix="cloth-blender-")
    try:
        solids = _collider_objects(cloth, colliders, f0, f1, folder, friction)
        g = scene.gravity if scene.use_gravity else (0.0, 0.0, 0.0)
        sim = cloth.Simulation(
            cloth=cl,
            colliders=solids,
            pins=pins,
            fps=fps,
            frames=frames,
            gravity=list(g),
            threads=threads,
        )
        _clear_shape_keys(cloth_obj)
        basis = cloth_obj.shape_key_add(name="Basis", from_mix=False) if mesh.shape_keys is None else None
        del basis
        for k in range(1, frames + 1):
            frame = f0 + k
            if pinned:
                scene.frame_set(frame)
                m = _matrix(cloth_obj)
                sim.set_pin_targets(0, _transform(m, local[sim.pins[0]]))
            sim.step_frame()
            scene.frame_set(frame)
            inv = np.linalg.inv(_matrix(cloth_obj))
            _add_frame_key(cloth_obj, frame, f0, f1, _transform(inv, sim.positions))
            if progress is not None:
                progress(k, frames)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        scene.frame_set(f0)
    return frames


def _collider_objects(cloth, objs, f0: int, f1: int, folder: str, friction: float) -> list:
    """The colliders of ``objs``: a static mesh when the evaluated world mesh is the same at
    every frame, else a sequence of OBJ files, one per frame."""
    scene = bpy.context.scene
    out = []
    for i, obj in enumerate(objs):
        frames = []
        for f in range(f0, f1 + 1):
            scene.frame_set(f)
            frames.append(_evaluated_world_mesh(obj, bpy.context.evaluated_depsgraph_get()))
        v0, t0 = frames[0]
        settings = dict(
            name=obj.name,
            friction=float(obj.get("cloth_friction", friction)),
            thickness=float(obj.collision.thickness_outer) if obj.collision else 0.0,
        )
        moving = any(len(v) != len(v0) or not np.array_equal(v, v0) for v, _ in frames[1:])
        if not moving:
            out.append(cloth.Collider.mesh(v0, t0, **settings))
            continue
        pattern = os.path.join(folder, f"collider{i}_{{:05}}.obj")
        for k, (v, t) in enumerate(frames):
            if len(v) != len(v0) or not np.array_equal(t, t0):
                raise ValueError(f"collider {obj.name} changes its topology at frame {f0 + k}")
            _write_obj(pattern.format(k), v, t)
        out.append(cloth.Collider.obj(pattern.format(0), frames=pattern, **settings))
    scene.frame_set(f0)
    return out


def _clear_shape_keys(obj) -> None:
    """Removes the shape keys an earlier simulation made (and their animation)."""
    keys = obj.data.shape_keys
    if keys is None:
        return
    for kb in list(keys.key_blocks):
        if kb.name.startswith(SHAPE_KEY_PREFIX):
            obj.shape_key_remove(kb)
    keys = obj.data.shape_keys
    if keys is not None and keys.animation_data and keys.animation_data.action:
        action = keys.animation_data.action
        for fc in list(_fcurves(action)):
            if f'"{SHAPE_KEY_PREFIX}' in fc.data_path:
                _remove_fcurve(action, fc)


def _fcurves(action):
    """The F-curves of an action (Blender 5's layered actions keep them in channelbags)."""
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    out = []
    for layer in getattr(action, "layers", []):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", []):
                out.extend(bag.fcurves)
    return out


def _remove_fcurve(action, fc) -> None:
    if hasattr(action, "fcurves"):
        action.fcurves.remove(fc)
        return
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if fc in list(bag.fcurves):
                    bag.fcurves.remove(fc)
                    return


def _add_frame_key(obj, frame: int, f0: int, f1: int, local: np.ndarray) -> None:
    """A shape key holding ``local`` (object space), at 1 on ``frame`` and 0 on its
    neighbours."""
    kb = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{frame:04d}", from_mix=False)
    kb.data.foreach_set("co", np.ascontiguousarray(local, dtype=np.float32).ravel())
    for f, value in ((frame - 1, 0.0), (frame, 1.0), (frame + 1, 0.0)):
        if f0 <= f <= f1 + 1:
            kb.value = value
            kb.keyframe_insert("value", frame=f)
    kb.value = 0.0


# -- the user interface --------------------------------------------------------------------


class ClothBWSettings(bpy.types.PropertyGroup):
    """The add-on's settings, per scene."""

    material: bpy.props.EnumProperty(
        name="Material",
        items=[(p, p.capitalize(), f"The {p} preset") for p in PRESETS],
        default="cotton",
    )
    thickness: bpy.props.FloatProperty(
        name="Thickness", default=0.005, min=0.0, unit="LENGTH", description="Collision thickness (m)"
    )
    self_collision: bpy.props.BoolProperty(name="Self Collision", default=False)
    pin_group: bpy.props.StringProperty(name="Pin Group", default="pin")
    friction: bpy.props.FloatProperty(
        name="Friction", default=0.4, min=0.0, description="Coulomb friction against colliders"
    )


class CLOTHBW_OT_simulate(bpy.types.Operator):
    """Simulate the active mesh over the scene's frame range with the cloth package"""

    bl_idname = "cloth_bw.simulate"
    bl_label = "Simulate Cloth (Baraff-Witkin)"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH"

    def execute(self, context):
        s = context.scene.cloth_bw
        wm = context.window_manager
        total = context.scene.frame_end - context.scene.frame_start
        wm.progress_begin(0, max(total, 1))
        try:
            n = simulate(
                context.active_object,
                material=s.material,
                thickness=s.thickness,
                self_collision=s.self_collision,
                pin_group=s.pin_group,
                friction=s.friction,
                progress=lambda done, _: wm.progress_update(done),
            )
        except Exception as e:  # shown to the user, whatever failed
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        self.report({"INFO"}, f"simulated {n} frames")
        return {"FINISHED"}


class CLOTHBW_PT_panel(bpy.types.Panel):
    """The add-on's panel in the 3D view's sidebar."""

    bl_label = "Cloth (Baraff-Witkin)"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Cloth BW"

    def draw(self, context):
        s = context.scene.cloth_bw
        col = self.layout.column()
        for prop in ("material", "thickness", "self_collision", "pin_group", "friction"):
            col.prop(s, prop)
        col.operator(CLOTHBW_OT_simulate.bl_idname)


_classes = (ClothBWSettings, CLOTHBW_OT_simulate, CLOTHBW_PT_panel)


def register() -> None:
    """Registers the operator, the panel and the scene settings."""
    for c in _classes:
        bpy.utils.register_class(c)
    bpy.types.Scene.cloth_bw = bpy.props.PointerProperty(type=ClothBWSettings)


def unregister() -> None:
    """Removes what :func:`register` added."""
    del bpy.types.Scene.cloth_bw
    for c in reversed(_classes):
        bpy.utils.unregister_class(c)


def main(argv: Sequence[str]) -> int:
    """``blender --background FILE --python __init__.py -- --object NAME [--save OUT]``."""
    import argparse

    p = argparse.ArgumentParser(prog="cloth_blender")
    p.add_argument("--object", required=True, help="the cloth object")
    p.add_argument("--material", default="cotton")
    p.add_argument("--thickness", type=float, default=0.005)
    p.add_argument("--self-collision", action="store_true")
    p.add_argument("--pin-group", default="pin")
    p.add_argument("--save", help="save the .blend file here afterwards")
    a = p.parse_args(argv)
    n = simulate(
        bpy.data.objects[a.object],
        material=a.material,
        thickness=a.thickness,
        self_collision=a.self_collision,
        pin_group=a.pin_group,
        progress=lambda done, total: print(f"cloth: frame {done}/{total}", flush=True),
    )
    if a.save:
        bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(a.save))
    print(f"cloth: simulated {n} frames of {a.object}")
    return 0


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    sys.exit(main(args))
