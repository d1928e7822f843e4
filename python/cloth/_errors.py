"""The exceptions of the ``cloth`` package.

Every error the simulator reports is a :class:`ClothError` carrying the message the ``cloth``
command prints for the same mistake, and, when the mistake is in a scene, the scene key it
concerns (``cloth.thickness``, ``pin[1].region.min``) and its place in the TOML text.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["ClothError", "InputError", "SimulationError", "OutputError"]


class ClothError(Exception):
    """Base class of the package's errors.

    Attributes:
        key: The scene key path the error concerns (e.g. ``"cloth.mesh.radius"``), or None.
        line: 1-based line of that key in the scene's TOML text, when the text was written
            by the user (a file or a string, not a dict) and the key is in it; else None.
        column: 1-based column, likewise.
    """

    def __init__(
        self,
        message: str,
        key: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.key = key
        self.line = line
        self.column = column


class InputError(ClothError, ValueError):
    """A scene, a setting or an array is wrong (out of range, missing, unknown, malformed)."""


class SimulationError(ClothError, RuntimeError):
    """The simulation failed: it diverged, or the adaptive step fell below ``h_min``.

    The frames before the failure are valid (and written, for a run).
    """


class OutputError(ClothError, OSError):
    """A file could not be read or written (a scene, a mesh, an output directory)."""
