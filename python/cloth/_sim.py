"""A simulation stepped frame by frame from Python, its state as NumPy arrays."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _cloth
from ._scene import Scene, SceneSource

__all__ = ["Simulation"]

FrameStats = Dict[str, Any]


class Simulation:
    """A running simulation: the cloth, what holds it and what it touches, and its state.

    ``Simulation(scene)`` builds the simulation of a :class:`~cloth.Scene` (or of anything
    ``Scene`` accepts: a path, TOML text, a dict), exactly as ``cloth run`` builds it;
    ``Simulation(cloth=..., colliders=[...], pins=[...], fps=..., ...)`` builds the scene
    from its parts first (the keyword arguments of :class:`~cloth.Scene`).

    Each :meth:`step_frame` advances to the next output frame (time ``frame / fps``; a
    scene's preroll runs before the first). The state is read as NumPy arrays
    (:attr:`positions`, :attr:`velocities`); between frames the caller may move pins
    (:meth:`set_pin_targets`) and colliders (:meth:`set_collider_pose`).

    The simulator runs with the GIL released, on ``threads`` worker threads (default: all
    cores; the results are the same bits for any count). A simulation is used by one thread
    at a time (calls from other threads wait).

    Raises:
        InputError: The scene is invalid or cannot be built; the error names the key.
    """

    def __init__(
        self,
        scene: Optional[SceneSource] = None,
        *,
        threads: Optional[int] = None,
        **parts: Any,
    ) -> None:
        self.scene: Scene = scene if isinstance(scene, Scene) else Scene(scene, **parts)
        """The scene the simulation was built from."""
        self._native = _cloth.Simulation(self.scene._native, threads)

    # -- stepping --------------------------------------------------------------------------

    def step_frame(self) -> FrameStats:
        """Advances one frame and returns its statistics: ``frame``, ``time`` (s), ``steps``,
        ``rejected_steps``, ``h_min``/``h_max`` (s), ``cg_iterations``, ``max_stretch``,
        ``max_compression``, ``kinetic_energy`` (J), ``contacts``, ``self_intersections``,
        ``timings`` (s per phase), ``wall`` (s), ... (the fields of a frame in
        ``stats.json``). Runs the scene's preroll first if it has not run.

        Raises:
            SimulationError: The step fell below ``h_min`` or the state diverged; the state
                is that of the last good step.
        """
        return self._native.step_frame()

    def step_frames(
        self, frames: int, callback: Optional[Callable[[FrameStats], Any]] = None
    ) -> List[FrameStats]:
        """Advances ``frames`` frames and returns their statistics; ``callback(stats)`` is
        called after each. Ctrl-C stops between two frames with ``KeyboardInterrupt`` (the
        frames done stay done)."""
        return self._native.step_frames(frames, callback)

    def preroll(self) -> FrameStats:
        """Runs the scene's preroll (the settling before frame 0) if it has one and it has not
        run, and returns its statistics (all zero otherwise)."""
        return self._native.preroll()

    # -- state -----------------------------------------------------------------------------

    @property
    def positions(self) -> np.ndarray:
        """Vertex positions (m), an (n, 3) float64 array: a new copy at every access (changing
        it changes nothing in the simulation)."""
        return self._native.positions

    @property
    def velocities(self) -> np.ndarray:
        """Vertex velocities (m/s), an (n, 3) float64 array: a new copy at every access."""
        return self._native.velocities

    @property
    def constraint_forces(self) -> np.ndarray:
        """Forces (N) the constraints (pins, contacts) put on each vertex in the last accepted
        implicit step (paper §5.4), (n, 3); empty for the explicit integrator."""
        return self._native.constraint_forces

    @property
    def time(self) -> float:
        """Simulated time (s): ``frame / fps`` between frames; negative before a preroll."""
        return self._native.time

    @property
    def frame(self) -> int:
        """Frames computed so far (0 before the first :meth:`step_frame`)."""
        return self._native.frame

    @property
    def fps(self) -> float:
        """Output frames per second."""
        return self._native.fps

    @property
    def threads(self) -> int:
        """Worker threads the simulation runs on."""
        return self._native.threads

    # -- the cloth -------------------------------------------------------------------------

    @property
    def num_vertices(self) -> int:
        """Number of cloth vertices (all cloths)."""
        return len(self._native.masses)

    @property
    def triangles(self) -> np.ndarray:
        """Triangles, an (m, 3) int64 array of vertex indices."""
        return self._native.triangles

    @property
    def rest_uv(self) -> np.ndarray:
        """Rest (u, v) coordinates (m) of each triangle corner, (m, 3, 2): the flat shape in
        which the cloth is unstretched."""
        return self._native.rest_uv

    @property
    def masses(self) -> np.ndarray:
        """Lumped vertex masses (kg), (n,)."""
        return self._native.masses

    @property
    def cloths(self) -> List[Dict[str, Any]]:
        """The cloths, in scene order: ``name``, ``vertices`` and ``triangles`` (ranges into
        the arrays above)."""
        return [
            {"name": n, "vertices": range(v0, v1), "triangles": range(t0, t1)}
            for n, v0, v1, t0, t1 in self._native.parts
        ]

    def write_obj(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the current positions as an OBJ file, byte for byte as ``cloth run`` writes
        a frame (rest (u, v) as texture coordinates, normals, one ``o`` group per cloth)."""
        import os

        self._native.write_obj(os.fspath(path))

    # -- pins ------------------------------------------------------------------------------

    @property
    def pins(self) -> List[np.ndarray]:
        """The vertex indices of each pin group (sorted), in scene order."""
        return self._native.pins

    def pin_targets(self, group: int = 0) -> np.ndarray:
        """Where pin group ``group`` holds its vertices now (m), (k, 3), in the order of
        ``pins[group]``."""
        return self._native.pin_targets(group)

    def set_pin_targets(self, group: int, targets: Any) -> None:
        """Moves pin group ``group``'s vertices (in the order of ``pins[group]``) in straight
        lines from where they are held now to ``targets`` ((k, 3), m), reached at the end of
        the next frame and held there after it. From then on the group is a set of moving
        points, no longer a rigid clamp.

        Raises:
            InputError: ``targets`` has the wrong shape or is not finite, or there is no such
                group (the message names ``pin[group]``).
        """
        t = np.ascontiguousarray(targets, dtype=np.float64)
        if t.ndim == 1:
            t = t.reshape(1, -1)
        self._native.set_pin_targets(group, t)

    # -- colliders -------------------------------------------------------------------------

    @property
    def colliders(self) -> List[str]:
        """Collider names in scene order (a collider without a name is ``collider[k]``)."""
        return self._native.colliders

    def collider_pose(self, collider: Union[int, str]) -> Tuple[np.ndarray, np.ndarray]:
        """The pose of a collider (index or name) now: its origin (m), (3,), and its rotation
        matrix (3, 3), mapping local to world coordinates."""
        p, r = self._native.collider_pose(collider)
        return np.array(p), np.array(r)

    def set_collider_pose(
        self,
        collider: Union[int, str],
        position: Sequence[float],
        rotation: Optional[Sequence[float]] = None,
    ) -> None:
        """Moves a collider (index or name) from its pose now to the pose with its origin at
        ``position`` (m) and orientation ``rotation`` (degrees about world x, then y, then z,
        as a scene's ``rotation``; default: the orientation it has now), reached at the end
        of the next frame and held after it.

        The solid moves at constant speed over that frame, so the cloth meets a moving
        surface (contact uses its velocity), not one that jumps. This replaces the collider's
        own rigid motion (a deforming body keeps deforming). During a preroll rigid motions
        hold their t = 0 pose, so a pose set before the preroll has run is reached at the end
        of frame 1.

        Raises:
            InputError: The pose is not finite.
            KeyError, IndexError: No such collider.
        """
        p = [float(x) for x in np.asarray(position, dtype=np.float64).ravel()]
        if rotation is None:
            r = _euler_degrees(self.collider_pose(collider)[1])
        else:
            r = [float(x) for x in np.asarray(rotation, dtype=np.float64).ravel()]
        self._native.set_collider_pose(collider, p, r)

    # -- notes -----------------------------------------------------------------------------

    @property
    def notes(self) -> List[str]:
        """What was done to the mesh colliders as given (welded vertices, open parts)."""
        return self._native.notes

    @property
    def start_crossings(self) -> Tuple[int, int]:
        """Pairs of cloth triangles crossing each other at the start: found, and left after
        the vertices poking through were moved back."""
        return self._native.start_crossings

    def __repr__(self) -> str:
        return (
            f"<cloth.Simulation: {self.num_vertices} vertices, frame {self.frame}, "
            f"t = {self.time:.4f} s>"
        )


def _euler_degrees(m: np.ndarray) -> List[float]:
    """Angles (degrees) about x, then y, then z of the rotation matrix ``m = Rz Ry Rx``."""
    b = np.arcsin(np.clip(-m[2, 0], -1.0, 1.0))
    if abs(m[2, 0]) < 1.0 - 1e-12:
        a = np.arctan2(m[2, 1], m[2, 2])
        c = np.arctan2(m[1, 0], m[0, 0])
    else:  # gimbal lock: the x and z turns are about one axis; put it all on x
        a = np.arctan2(-m[1, 2], m[1, 1])
        c = 0.0
    return [float(np.degrees(x)) for x in (a, b, c)]
