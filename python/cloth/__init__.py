"""Cloth simulation after Baraff & Witkin, *Large Steps in Cloth Simulation* (1998).

The Python face of the simulator (a Rust workspace): the same scenes, the same integrators
and the same output files as the ``cloth`` command, with NumPy arrays in and out.

- :func:`run` simulates a scene into an output directory, as ``cloth run``;
  :func:`resume` continues one from its checkpoint; :func:`render` renders its frames.
- :class:`Scene` is a validated scene, from a TOML file, TOML text, a dict, or from
  :class:`Cloth`, :class:`Collider` and :class:`Pin` objects (cloths and colliders from
  arrays, OBJ and glTF files, GarmentCode sewing patterns).
- :class:`Simulation` steps a scene frame by frame: positions and velocities as (n, 3)
  arrays, pins and colliders driven between frames, each frame's statistics as a dict.

Units are SI (m, kg, s), angles in degrees, y is up. Errors are :class:`ClothError`
subclasses carrying the ``cloth`` command's messages; :class:`InputError` (a ``ValueError``)
names the scene key at fault.

Example::

    import cloth
    sim = cloth.Simulation(
        cloth=cloth.Cloth.grid(21, 21, 1.0, 1.0, position=[0, 1, 0], material="silk"),
        colliders=[cloth.Collider.sphere(0.3, position=[0, 0.5, 0])],
        fps=30,
    )
    for _ in range(30):
        stats = sim.step_frame()
    print(sim.positions.shape, stats["max_stretch"])
"""

from __future__ import annotations

from . import _cloth
from ._errors import ClothError, InputError, OutputError, SimulationError
from ._run import RunResult, render, resume, run
from ._scene import Cloth, Collider, Pin, Scene
from ._sim import Simulation

__version__: str = _cloth.__version__
"""The package's version (that of the simulator's crates)."""

MATERIAL_PRESETS: tuple = tuple(_cloth.MATERIAL_PRESETS)
"""Names of the material presets (``"cotton"``, ``"denim"``, ``"silk"``, ...)."""

__all__ = [
    "run",
    "resume",
    "render",
    "RunResult",
    "Scene",
    "Cloth",
    "Collider",
    "Pin",
    "Simulation",
    "ClothError",
    "InputError",
    "SimulationError",
    "OutputError",
    "MATERIAL_PRESETS",
    "__version__",
]
