"""A cloth scene of the benchmark suite in Blender's cloth simulator, timed.

Run by `cargo xtask bench` (xtask/src/peer.rs), which writes the scene as JSON:

    blender -b --factory-startup -t THREADS --python-exit-code 1 --python drape.py -- CASE.json

CASE.json holds the cloth's vertices (Blender's frame: z up) and triangles, the colliders
(kind, size, 4x4 world matrix, thickness), the frame rate, the number of frames and the cloth
modifier's settings. The script builds the scene in an empty file, steps the frames in order
(`frame_set`, which runs the cloth modifier once per frame) and prints one line,
`CLOTH_PEER {json}`, with the wall time of the frame loop, the vertex count and where the
sheet ended (its lowest and highest z), so the caller can check that the cloth moved.
"""

import json
import sys
import time

import bmesh
import bpy
from mathutils import Matrix


def collider_mesh(col):
    """A mesh for one collider, in its local frame (cylinders along z, planes normal to z)."""
    bm = bmesh.new()
    kind = col["kind"]
    if kind == "cylinder":
        bmesh.ops.create_cone(
            bm,
            cap_ends=True,
            cap_tris=False,
            segments=col["segments"],
            radius1=col["radius"],
            radius2=col["radius"],
            depth=col["length"],
        )
    elif kind == "sphere":
        bmesh.ops.create_uvsphere(
            bm,
            u_segments=col["segments"],
            v_segments=col["segments"] // 2,
            radius=col["radius"],
        )
    elif kind == "plane":
        bmesh.ops.create_grid(bm, x_segments=1, y_segments=1, size=0.5 * col["size"])
    else:
        raise ValueError("unknown collider kind " + kind)
    mesh = bpy.data.meshes.new(kind)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def build(case):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    frames = case["frames"]
    # Blender's frame rate is an integer over a base: fps / fps_base is the scene's rate.
    scene.render.fps = max(1, round(case["fps"]))
    scene.render.fps_base = scene.render.fps / case["fps"]
    scene.frame_start = 1
    scene.frame_end = frames + 1

    mesh = bpy.data.meshes.new("cloth")
    mesh.from_pydata(case["vertices"], [], case["triangles"])
    mesh.update()
    cloth_obj = bpy.data.objects.new("cloth", mesh)
    scene.collection.objects.link(cloth_obj)
    cloth = cloth_obj.modifiers.new("Cloth", "CLOTH")
    for key, value in case["cloth_settings"].items():
        setattr(cloth.settings, key, value)
    for key, value in case["collision_settings"].items():
        setattr(cloth.collision_settings, key, value)
    cloth.point_cache.frame_start = 1
    cloth.point_cache.frame_end = frames + 1

    for i, col in enumerate(case["colliders"]):
        obj = bpy.data.objects.new("collider%d" % i, collider_mesh(col))
        scene.collection.objects.link(obj)
        m = col["matrix"]
        obj.matrix_world = Matrix([m[4 * r : 4 * r + 4] for r in range(4)])
        obj.modifiers.new("Collision", "COLLISION")
        obj.collision.thickness_outer = max(col["thickness"], 0.001)
    return scene, cloth_obj


def main():
    case = json.load(open(sys.argv[sys.argv.index("--") + 1]))
    t0 = time.perf_counter()
    scene, cloth_obj = build(case)
    scene.frame_set(1)
    setup = time.perf_counter() - t0
    start = time.perf_counter()
    for f in range(2, case["frames"] + 2):
        scene.frame_set(f)
    seconds = time.perf_counter() - start
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = cloth_obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    zs = [(evaluated.matrix_world @ v.co).z for v in mesh.vertices]
    result = {
        "version": bpy.app.version_string,
        "seconds": seconds,
        "setup_seconds": setup,
        "frames": case["frames"],
        "vertices": len(mesh.vertices),
        "lowest": min(zs),
        "highest": max(zs),
    }
    evaluated.to_mesh_clear()
    print("CLOTH_PEER " + json.dumps(result), flush=True)


main()
