"""Scenes: from a TOML file, TOML text, a dict, or cloths, colliders and pins built in Python.

Every scene is read by the simulator's own scene reader, so a scene built here is checked as
a scene file is (unknown keys, ranges, files) and its errors name the same keys. The keyword
arguments of :class:`Cloth`, :class:`Collider` and :class:`Pin` are the keys of the scene
file's ``[cloth]``, ``[[collider]]`` and ``[[pin]]`` tables (docs/scenes.md).

A cloth or a collider given as arrays is written to a temporary OBJ file that the scene
reader then reads: the mesh goes through the same reader, checks and rest-shape rules as a
mesh file, and its numbers are written so that they read back bit for bit. The file is
removed when the object that made it is no longer used.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _cloth

__all__ = ["Scene", "Cloth", "Collider", "Pin", "SceneSource"]

PathLike = Union[str, "os.PathLike[str]"]
Vec3 = Sequence[float]


class _TempFolder:
    """A temporary folder, removed with its files when this object is garbage collected."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="cloth-"))
        self._remove = weakref.finalize(self, shutil.rmtree, str(self.path), True)


def _vertices(a: Any, what: str) -> "np.ndarray":
    v = np.ascontiguousarray(a, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise _cloth_input(f"{what}.vertices", f"must have shape (n, 3), got {v.shape}")
    return v


def _triangles(a: Any, what: str) -> "np.ndarray":
    t = np.asarray(a)
    if t.dtype.kind not in "iu":
        raise _cloth_input(f"{what}.triangles", f"must be integers, got {t.dtype}")
    t = np.ascontiguousarray(t, dtype=np.int64)
    if t.ndim != 2 or t.shape[1] != 3:
        raise _cloth_input(f"{what}.triangles", f"must have shape (m, 3), got {t.shape}")
    return t


def _cloth_input(key: str, message: str) -> Exception:
    from ._errors import InputError

    return InputError(f"invalid setting `{key}`: {message}", key)


def _write_arrays(
    vertices: Any, triangles: Any, uv: Any, what: str
) -> Tuple[_TempFolder, Path]:
    """Writes the arrays as an OBJ file in a new temporary folder."""
    v = _vertices(vertices, what)
    t = _triangles(triangles, what)
    u = None
    if uv is not None:
        u = np.ascontiguousarray(uv, dtype=np.float64)
    folder = _TempFolder()
    path = folder.path / f"{what}.obj"
    _cloth.write_mesh_obj(str(path), v, t, u, what)
    return folder, path


class Cloth:
    """One cloth of a scene: its mesh and its ``[cloth]`` settings.

    Make one with a constructor (:meth:`grid`, :meth:`disc`, :meth:`from_obj`,
    :meth:`from_arrays`, :meth:`from_pattern`), or from a mesh table as in a scene file:
    ``Cloth({"kind": "grid", "nx": 11, ...}, material="silk")``.

    Settings (keyword arguments, the scene file's keys; defaults as there): ``name``,
    ``position`` (m), ``rotation`` (degrees about x, then y, then z), ``material`` (a preset
    name such as ``"cotton"``, or a dict ``{"preset": "cotton", "bend": 1e-5, ...}``),
    ``thickness`` (m), ``drag``, ``wind``, ``self_collision``, ``friction``, ``self_ccd``,
    ``velocity`` (m/s), and for sewing patterns ``sew_time``, ``sew_start``,
    ``sew_gravity``.
    """

    def __init__(self, mesh: Mapping[str, Any], **settings: Any) -> None:
        self.mesh: Dict[str, Any] = dict(mesh)
        self.settings: Dict[str, Any] = dict(settings)
        self._files: Optional[_TempFolder] = None

    @classmethod
    def grid(
        cls,
        nx: int,
        ny: int,
        width: float,
        height: float,
        pattern: str = "alternating",
        **settings: Any,
    ) -> "Cloth":
        """A rectangular sheet in the x-z plane centred on its ``position``: ``ny`` rows of
        ``nx`` vertices, ``width`` along x and ``height`` along z (m); ``pattern`` is how the
        quads are split (``"alternating"``, ``"uniform"`` or ``"equilateral"``)."""
        mesh = {"kind": "grid", "nx": nx, "ny": ny, "width": width, "height": height}
        return cls({**mesh, "pattern": pattern}, **settings)

    @classmethod
    def disc(cls, radius: float, resolution: int, **settings: Any) -> "Cloth":
        """A disc in the x-z plane of ``resolution`` rings around a centre vertex."""
        return cls({"kind": "disc", "radius": radius, "resolution": resolution}, **settings)

    @classmethod
    def from_obj(
        cls,
        path: PathLike,
        rest: str = "auto",
        uv_scale: float = 1.0,
        rest_angles: Optional[str] = None,
        split_seams: bool = False,
        **settings: Any,
    ) -> "Cloth":
        """A cloth read from a Wavefront OBJ file: one particle per ``v`` line used by a face.

        ``rest`` is where the rest shape comes from: ``"uv"`` (the texture coordinates times
        ``uv_scale``, in metres), ``"mesh"`` (each triangle as modelled) or ``"auto"`` (uv
        when every corner has one). ``rest_angles``: ``"flat"`` or ``"mesh"``.
        """
        mesh = {
            "kind": "obj",
            "path": os.fspath(Path(path).resolve()),
            "rest": rest,
            "uv_scale": uv_scale,
            "rest_angles": rest_angles,
            "split_seams": split_seams,
        }
        return cls(mesh, **settings)

    @classmethod
    def from_arrays(
        cls,
        vertices: Any,
        triangles: Any,
        uv: Any = None,
        rest: Optional[str] = None,
        uv_scale: float = 1.0,
        rest_angles: Optional[str] = None,
        **settings: Any,
    ) -> "Cloth":
        """A cloth from NumPy arrays: ``vertices`` (n, 3) world positions (m), ``triangles``
        (m, 3) 0-based vertex indices, and optional rest coordinates ``uv``: per corner
        (m, 3, 2) or per vertex (n, 2), in metres times ``1 / uv_scale``.

        The rest shape is ``uv`` when given, else each triangle as modelled (``rest`` can
        say otherwise: ``"uv"``, ``"mesh"``, ``"auto"``). The cloth is the same, bit for bit,
        as one read with :meth:`from_obj` from an OBJ file holding the same numbers.
        """
        folder, path = _write_arrays(vertices, triangles, uv, "cloth")
        if rest is None:
            rest = "mesh" if uv is None else "uv"
        c = cls.from_obj(path, rest, uv_scale, rest_angles, **settings)
        c._files = folder
        return c

    @classmethod
    def from_pattern(
        cls,
        pattern: Union[PathLike, Mapping[str, Any]],
        edge_length: float = 0.02,
        sew_edge_length: Optional[float] = None,
        **settings: Any,
    ) -> "Cloth":
        """A garment from a GarmentCode sewing pattern: a JSON file or the same as a dict.

        The panels are triangulated at ``edge_length`` (m), placed around the body as the
        pattern says, and sewn during ``sew_time`` (s, default 0.5). ``sew_edge_length`` sews
        a coarser copy during the scene's preroll first (see docs/garments.md).
        """
        folder = None
        if isinstance(pattern, Mapping):
            import json

            folder = _TempFolder()
            path = folder.path / "pattern.json"
            path.write_text(json.dumps(pattern), encoding="utf-8")
        else:
            path = Path(pattern).resolve()
        mesh = {
            "kind": "garmentcode",
            "path": os.fspath(path),
            "edge_length": edge_length,
            "sew_edge_length": sew_edge_length,
        }
        c = cls(mesh, **settings)
        c._files = folder
        return c

    def to_dict(self) -> Dict[str, Any]:
        """The ``[cloth]`` table of a scene file."""
        return {"mesh": dict(self.mesh), **self.settings}

    def __repr__(self) -> str:
        return f"Cloth({self.mesh!r}, **{self.settings!r})"


class Collider:
    """A solid obstacle of a scene: its shape and its ``[[collider]]`` settings.

    Settings (keyword arguments, the scene file's keys): ``name``, ``position`` (m, the local
    origin), ``rotation`` (degrees about x, then y, then z), ``friction`` (Coulomb, default
    0.4), ``thickness`` (m, default 0.005), and one motion: ``keyframes`` (a list of
    ``{"t": s, "translation": [...], "rotation": [...]}``) or ``velocity`` (m/s) and
    ``angular_velocity`` (degrees/s). A running :class:`~cloth.Simulation` can also move a
    collider between frames (:meth:`~cloth.Simulation.set_collider_pose`).
    """

    def __init__(self, shape: Mapping[str, Any], **settings: Any) -> None:
        self.shape: Dict[str, Any] = dict(shape)
        self.settings: Dict[str, Any] = dict(settings)
        self._files: Optional[_TempFolder] = None

    @classmethod
    def sphere(cls, radius: float, **settings: Any) -> "Collider":
        """A ball of ``radius`` (m) centred on its ``position``."""
        return cls({"shape": "sphere", "radius": radius}, **settings)

    @classmethod
    def box(cls, size: Vec3, **settings: Any) -> "Collider":
        """A box of full edge lengths ``size`` (m, along local x, y, z) centred on its
        ``position``."""
        return cls({"shape": "box", "size": list(size)}, **settings)

    @classmethod
    def plane(cls, **settings: Any) -> "Collider":
        """The half-space below local y = 0 (normal local +y) through its ``position``."""
        return cls({"shape": "plane"}, **settings)

    @classmethod
    def capsule(cls, radius: float, length: float, **settings: Any) -> "Collider":
        """The points within ``radius`` of a segment of ``length`` along local y (m)."""
        return cls({"shape": "capsule", "radius": radius, "length": length}, **settings)

    @classmethod
    def cylinder(cls, radius: float, length: float, **settings: Any) -> "Collider":
        """A solid cylinder with flat caps, axis local y, centred on its ``position``."""
        return cls({"shape": "cylinder", "radius": radius, "length": length}, **settings)

    @classmethod
    def mesh(cls, vertices: Any, triangles: Any, **settings: Any) -> "Collider":
        """A triangle mesh from arrays: ``vertices`` (n, 3) in the local frame (m),
        ``triangles`` (m, 3) 0-based. Closed parts are solids with an inside; open parts keep
        the cloth on the side it is on."""
        folder, path = _write_arrays(vertices, triangles, None, "collider")
        c = cls.obj(path, **settings)
        c._files = folder
        return c

    @classmethod
    def obj(
        cls,
        path: PathLike,
        frames: Optional[str] = None,
        frame_start: int = 0,
        **settings: Any,
    ) -> "Collider":
        """A triangle mesh read from an OBJ file; ``frames`` is an optional pattern of
        per-frame files of the same topology (``"anim/body_{:04}.obj"``), numbered from
        ``frame_start``."""
        shape = {
            "shape": "obj",
            "path": os.fspath(Path(path).resolve()),
            "frames": frames,
            "frame_start": frame_start,
        }
        return cls(shape, **settings)

    @classmethod
    def gltf(
        cls,
        path: PathLike,
        animation: Optional[str] = None,
        scale: float = 1.0,
        time_offset: float = 0.0,
        loop: bool = False,
        **settings: Any,
    ) -> "Collider":
        """A skinned (or rigid) glTF 2.0 body (``.glb``/``.gltf``, metres, y up) played from
        its ``animation`` clip (default the first), scaled by ``scale``, starting at clip time
        ``time_offset`` (s), repeated when ``loop``."""
        shape = {
            "shape": "gltf",
            "path": os.fspath(Path(path).resolve()),
            "animation": animation,
            "scale": scale,
            "time_offset": time_offset,
            "loop": loop,
        }
        return cls(shape, **settings)

    def to_dict(self) -> Dict[str, Any]:
        """The ``[[collider]]`` table of a scene file."""
        return {**self.shape, **self.settings}

    def __repr__(self) -> str:
        return f"Collider({self.shape!r}, **{self.settings!r})"


class Pin:
    """A group of cloth vertices held on prescribed targets (a ``[[pin]]`` table).

    Args:
        vertices: Vertex indices (of the pin's cloth).
        region: A world box ``(min, max)`` selecting the vertices whose initial position is
            inside it.
        cloth: The cloth's name, when the scene has several.
        keyframes: A motion of the group (``[{"t": s, "translation": [...], "rotation":
            [...]}, ...]``); default: held in place.
        attach: The name of a collider the group is glued to (not with ``keyframes``).
        name: A label.

    A running :class:`~cloth.Simulation` can also move a group between frames
    (:meth:`~cloth.Simulation.set_pin_targets`).
    """

    def __init__(
        self,
        vertices: Optional[Iterable[int]] = None,
        region: Optional[Union[Tuple[Vec3, Vec3], Mapping[str, Vec3]]] = None,
        *,
        cloth: Optional[str] = None,
        keyframes: Optional[List[Mapping[str, Any]]] = None,
        attach: Optional[str] = None,
        name: Optional[str] = None,
    ) -> None:
        self.table: Dict[str, Any] = {
            "name": name,
            "cloth": cloth,
            "vertices": None if vertices is None else [int(i) for i in vertices],
            "region": _region(region),
            "keyframes": keyframes,
            "attach": attach,
        }

    def to_dict(self) -> Dict[str, Any]:
        """The ``[[pin]]`` table of a scene file."""
        return {k: v for k, v in self.table.items() if v is not None}

    def __repr__(self) -> str:
        return f"Pin(**{self.to_dict()!r})"


def _region(r: Any) -> Optional[Dict[str, Any]]:
    if r is None or isinstance(r, Mapping):
        return None if r is None else dict(r)
    lo, hi = r
    return {"min": list(lo), "max": list(hi)}


SceneSource = Union["Scene", PathLike, Mapping[str, Any]]


def _table(x: Any) -> Any:
    return x.to_dict() if hasattr(x, "to_dict") else x


class Scene:
    """A scene: what to simulate, validated, every default applied, every path resolved.

    ``Scene(source)`` reads a scene file (a path), TOML text (a string holding a newline or an
    ``=``), or a dict with the scene file's keys (``{"cloth": {...}, "collider": [...]}``;
    keys whose value is None are left out). Relative paths in text and dicts resolve against
    ``base_dir`` (default: the current directory); in a file, against the file's directory.

    ``Scene(cloth=..., colliders=[...], pins=[...], run={...}, solver={...})`` builds one from
    :class:`Cloth`, :class:`Collider` and :class:`Pin` objects (or their tables as dicts);
    ``fps``, ``frames``, ``gravity`` and ``preroll`` are shortcuts for the ``run`` keys.

    Raises:
        InputError: The scene is invalid; the error names the key (``error.key``).
        OutputError: The file cannot be read.
    """

    def __init__(
        self,
        source: Optional[SceneSource] = None,
        *,
        cloth: Union[Cloth, Mapping[str, Any], Sequence[Union[Cloth, Mapping[str, Any]]], None] = None,
        colliders: Iterable[Union[Collider, Mapping[str, Any]]] = (),
        pins: Iterable[Union[Pin, Mapping[str, Any]]] = (),
        run: Optional[Mapping[str, Any]] = None,
        solver: Optional[Mapping[str, Any]] = None,
        fps: Optional[float] = None,
        frames: Optional[int] = None,
        gravity: Optional[Vec3] = None,
        preroll: Optional[float] = None,
        base_dir: Optional[PathLike] = None,
    ) -> None:
        # The objects whose temporary files the scene's paths point to.
        self._keep: List[Any] = []
        base = os.fspath(base_dir) if base_dir is not None else os.getcwd()
        shortcuts = {"fps": fps, "frames": frames, "gravity": gravity, "preroll": preroll}
        if source is not None:
            if cloth is not None or any(v is not None for v in shortcuts.values()):
                raise TypeError("give a scene source or its parts, not both")
            self._native = self._read(source, base)
            return
        if cloth is None:
            raise TypeError("a scene needs a source or a cloth")
        cloths = list(cloth) if isinstance(cloth, (list, tuple)) else [cloth]
        colliders = list(colliders)
        self._keep = [x for x in cloths + colliders if isinstance(x, (Cloth, Collider))]
        tables = [_table(c) for c in cloths]
        run_table = dict(run or {})
        run_table.update({k: v for k, v in shortcuts.items() if v is not None})
        data: Dict[str, Any] = {
            "run": run_table,
            "cloth": tables[0] if len(tables) == 1 else tables,
            "collider": [_table(c) for c in colliders],
            "pin": [_table(p) for p in pins],
            "solver": dict(solver) if solver else None,
        }
        self._native = _cloth.Scene.from_dict(data, base)

    def _read(self, source: SceneSource, base: str) -> "_cloth.Scene":
        if isinstance(source, Scene):
            self._keep = source._keep
            return source._native
        if isinstance(source, Mapping):
            return _cloth.Scene.from_dict(source, base)
        if isinstance(source, str) and ("\n" in source or "=" in source):
            return _cloth.Scene.from_toml(source, base)
        if isinstance(source, (str, os.PathLike)):
            return _cloth.Scene.from_path(os.fspath(source))
        raise TypeError(
            f"a scene is a path, TOML text, a dict or a cloth.Scene, not {type(source).__name__}"
        )

    @property
    def frames(self) -> int:
        """Frames simulated after frame 0 (``run.frames``)."""
        return self._native.frames

    @property
    def fps(self) -> float:
        """Output frames per second (``run.fps``)."""
        return self._native.fps

    @property
    def path(self) -> Optional[Path]:
        """The scene file it was read from, or None."""
        p = self._native.path
        return None if p is None else Path(p)

    def with_frames(self, frames: int) -> "Scene":
        """A copy of the scene that simulates ``frames`` frames after frame 0."""
        s = Scene.__new__(Scene)
        s._keep = self._keep
        s._native = self._native.with_frames(frames)
        return s

    def to_toml(self) -> str:
        """The resolved scene as scene-file TOML, every default written out."""
        return self._native.to_toml()

    def to_dict(self) -> Dict[str, Any]:
        """The resolved scene as a dict with the scene file's keys."""
        return self._native.to_dict()

    def check(self) -> Dict[str, Any]:
        """Builds the simulation and returns what ``cloth check`` prints: ``vertices``,
        ``triangles``, ``edges``, ``bend_edges``, ``area`` (m^2), ``mass`` (kg),
        ``pinned_vertices``, ``pin_groups``, ``colliders``, ``notes`` (what was done to mesh
        colliders), ``frames``, ``fps``, ``crossings`` (found, left) and ``cloths``, one dict
        per cloth (``name``, ``vertices``, ``triangles``, ``rest``, ``boundary_loops``, and
        for garments ``garment``, ``stitches``, ``sewn_boundary_loops``).

        Raises:
            InputError: The scene cannot be built (a mesh or pattern is malformed, a pin
                selects nothing, it is over the memory or time budget).
        """
        return self._native.check()

    def __repr__(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return f"<cloth.Scene{where}: {self.frames} frames at {self.fps:g} fps>"
