"""Whole runs into an output directory, as the ``cloth run`` and ``cloth render`` commands."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _cloth
from ._scene import Scene, SceneSource

__all__ = ["run", "resume", "render", "RunResult"]

log = logging.getLogger("cloth")

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class RunResult:
    """What a run wrote: its output directory and its statistics (``stats.json``)."""

    out: Path
    """The output directory: ``frame_0000.obj``, ... (frame k at time k / fps),
    ``stats.json``, ``colliders.json`` (when the scene has colliders), ``checkpoint.json``,
    and ``animation.usda`` / ``preview.gif`` when asked for."""
    report: Dict[str, Any] = field(repr=False)
    """The contents of ``stats.json``: ``settings`` (the resolved scene), ``fps``,
    ``vertices``, ``triangles``, ``threads``, ``preroll``, ``frames`` (one dict per frame),
    ``totals``, ``complete``, ``error``."""

    @property
    def frames(self) -> List[Dict[str, Any]]:
        """The statistics of each frame after frame 0."""
        return self.report.get("frames", [])

    @property
    def totals(self) -> Dict[str, Any]:
        """The run's totals (steps, CG iterations, time split, largest stretch, ...)."""
        return self.report.get("totals", {})

    def frame_path(self, k: int) -> Path:
        """The OBJ file of frame ``k``."""
        return self.out / f"frame_{k:04d}.obj"


class _Progress:
    """A progress bar fed by the run's events: tqdm's (``tqdm.auto``: a widget in Jupyter, a
    text bar in a terminal) when tqdm is installed, else one line on stderr, rewritten in
    place on a terminal and printed every few seconds elsewhere."""

    def __init__(self, total: int, done: int, enabled: bool) -> None:
        self.total, self.done = total, done
        self.enabled = enabled
        self.bar: Any = None
        self.last = 0.0
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self.tty = sys.stderr.isatty()
            return
        self.bar = tqdm(total=total, initial=done, unit="frame", desc="cloth", leave=False)

    def __call__(self, event: str, value: Any) -> None:
        if event == "warning":
            warnings.warn(value, RuntimeWarning, stacklevel=3)
        elif event == "note":
            log.info("%s", value)
            if self.enabled:
                self._write(f"note: {value}")
        elif event == "preroll":
            self._show(f"preroll, t = {value:.3f} s")
        elif event == "frame":
            self.done += 1
            msg = f"t = {value['time']:.3f} s  steps {value['steps']}  CG {value['cg_iterations']}"
            if self.bar is not None:
                self.bar.update(1)
            self._show(msg)

    def _write(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def _show(self, msg: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(msg, refresh=True)
            return
        now = time.monotonic()
        line = f"cloth: frame {self.done}/{self.total}  {msg}"
        if self.tty:
            sys.stderr.write("\r" + line[:120].ljust(120))
            sys.stderr.flush()
        elif now - self.last >= 5.0 or self.done == self.total:
            print(line, file=sys.stderr)
            self.last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and getattr(self, "tty", False):
            sys.stderr.write("\r" + " " * 120 + "\r")
            sys.stderr.flush()


def _result(out: Union[str, Path]) -> RunResult:
    out = Path(out)
    with open(out / "stats.json", encoding="utf-8") as f:
        return RunResult(out=out, report=json.load(f))


def run(
    scene: SceneSource,
    out: Optional[PathLike] = None,
    *,
    frames: Optional[int] = None,
    threads: Optional[int] = None,
    progress: bool = True,
    checkpoint_every: int = 10,
    format: str = "obj",
    render: bool = False,
) -> RunResult:
    """Simulates a scene into an output directory, as ``cloth run SCENE --out OUT``.

    The directory gets the files ``cloth run`` writes, with the same bytes for the same
    scene: ``frame_0000.obj`` (frame 0, after any preroll), ``frame_0001.obj``, ...,
    ``stats.json`` (every 10 frames and at the end), ``colliders.json``, ``checkpoint.json``
    every ``checkpoint_every`` frames (0: none; :func:`resume` continues from it), and
    ``animation.usda`` (``format="usd"`` or ``"both"``; ``"usd"`` removes the OBJ frames at
    the end) and ``preview.gif`` (``render=True``) after a complete run.

    Args:
        scene: A :class:`~cloth.Scene`, a scene file, TOML text or a dict.
        out: The output directory; default ``out/<scene file name>`` for a scene file
            (required otherwise). Files of an earlier run there are replaced; other files
            are left alone.
        frames: Frames to compute instead of the scene's ``run.frames``.
        threads: Worker threads (default all cores; the results are the same for any count).
        progress: Show a progress bar (tqdm's when installed, else a line on stderr).

    Returns:
        The output directory and the run's statistics.

    Raises:
        InputError: The scene is invalid (the error names the key).
        SimulationError: The run failed; the frames before the failure are written and
            ``stats.json`` says ``"complete": false`` with the error.
        KeyboardInterrupt: Ctrl-C, acted on between two frames (and at the end of a
            preroll); the frames so far are valid and ``stats.json`` says ``"interrupted"``.
    """
    s = scene if isinstance(scene, Scene) else Scene(scene)
    if frames is not None:
        s = s.with_frames(frames)
    if out is None:
        if s.path is None:
            raise TypeError("out= is required for a scene that is not read from a file")
        out = Path("out") / s.path.stem
    bar = _Progress(s.frames, 0, progress)
    try:
        options = {
            "checkpoint_every": checkpoint_every,
            "threads": threads,
            "format": format,
            "render": render,
            "callback": bar,
        }
        path = _cloth.run(s._native, os.fspath(out), options)
    finally:
        bar.close()
    return _result(path)


def resume(
    out: PathLike,
    *,
    frames: Optional[int] = None,
    threads: Optional[int] = None,
    progress: bool = True,
    checkpoint_every: int = 10,
) -> RunResult:
    """Continues the interrupted or finished run in ``out`` from its last checkpoint, as
    ``cloth run --resume OUT``: the frames after the checkpoint are computed again, to the
    same bits as an uninterrupted run; ``frames`` extends or shortens the run."""
    done = _result(out).report if (Path(out) / "stats.json").exists() else {}
    total = frames if frames is not None else done.get("settings", {}).get("run", {}).get(
        "frames", 0
    )
    bar = _Progress(total, len(done.get("frames", [])), progress)
    try:
        path = _cloth.resume(os.fspath(out), frames, checkpoint_every, threads, bar)
    finally:
        bar.close()
    return _result(path)


def render(
    run_dir: PathLike,
    out: Optional[PathLike] = None,
    *,
    view: str = "iso",
    size: tuple = (800, 600),
    every: int = 1,
) -> int:
    """Renders the frames of a run to an animated GIF or PNG images, as ``cloth render``.

    Args:
        run_dir: The output directory of a run.
        out: A ``.gif`` file, or a directory for ``frame_NNNN.png`` images (default
            ``run_dir/preview.gif``).
        view: Camera: ``"front"``, ``"side"``, ``"top"`` or ``"iso"``.
        size: Image width and height in pixels.
        every: Render every ``every``-th frame.

    Returns:
        The number of images rendered.
    """
    target = Path(out) if out is not None else Path(run_dir) / "preview.gif"
    w, h = size
    return _cloth.render(os.fspath(run_dir), os.fspath(target), view, int(w), int(h), every)
