"""`cloth.run` writes what `cloth run` writes, byte for byte, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

import cloth

FRAMES = 8


def _frame_files(d: Path):
    return sorted(p.name for p in d.glob("frame_*.obj"))


def test_a_scene_run_from_python_gives_the_frames_of_the_cli(repo, cloth_cli, tmp_path):
    scene = repo / "scenes" / "drape_sphere.toml"
    cli_out, py_out = tmp_path / "cli", tmp_path / "py"
    subprocess.run(
        [str(cloth_cli), "run", str(scene), "--out", str(cli_out), "--frames", str(FRAMES), "--quiet"],
        check=True,
    )
    result = cloth.run(scene, out=py_out, frames=FRAMES, progress=False)
    assert result.out == py_out
    assert result.report["complete"] is True
    assert len(result.frames) == FRAMES
    names = _frame_files(cli_out)
    assert names == [f"frame_{k:04d}.obj" for k in range(FRAMES + 1)]
    assert _frame_files(py_out) == names
    for name in names + ["colliders.json", "checkpoint.json"]:
        assert (py_out / name).read_bytes() == (cli_out / name).read_bytes(), name
    # stats.json differs only in wall times: the same steps and iterations frame by frame.
    cli_stats = json.loads((cli_out / "stats.json").read_text())
    for a, b in zip(cli_stats["frames"], result.frames):
        assert (a["steps"], a["cg_iterations"], a["time"]) == (b["steps"], b["cg_iterations"], b["time"])
    assert cli_stats["settings"] == result.report["settings"]


def test_a_scene_given_as_a_dict_or_as_text_runs_as_its_file(repo, tmp_path):
    path = repo / "scenes" / "fold_on_plane.toml"
    from_file = cloth.Scene(path)
    as_dict = cloth.Scene(from_file.to_dict())
    as_text = cloth.Scene(from_file.to_toml())
    runs = []
    for k, s in enumerate([from_file, as_dict, as_text]):
        runs.append(cloth.run(s, out=tmp_path / str(k), frames=4, progress=False).out)
    for name in _frame_files(runs[0]):
        data = (runs[0] / name).read_bytes()
        assert (runs[1] / name).read_bytes() == data
        assert (runs[2] / name).read_bytes() == data


def test_simulation_frames_written_with_write_obj_are_the_run_frames(repo, tmp_path):
    scene = cloth.Scene(repo / "scenes" / "fixed_sheet.toml").with_frames(3)
    out = cloth.run(scene, out=tmp_path / "run", progress=False).out
    sim = cloth.Simulation(scene)
    for k in range(4):
        if k > 0:
            sim.step_frame()
        sim.write_obj(tmp_path / "frame.obj")
        assert (tmp_path / "frame.obj").read_bytes() == (out / f"frame_{k:04d}.obj").read_bytes()


def test_ctrl_c_stops_a_run_between_frames_and_keeps_the_frames(repo, tmp_path):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    scene = cloth.Scene(repo / "scenes" / "drape_sphere.toml").with_frames(400)
    out = tmp_path / "run"
    # SIGINT once the run has written a few frames.
    def interrupt():
        while len(list(out.glob("frame_*.obj"))) < 3:
            threading.Event().wait(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt, daemon=True)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        cloth.run(scene, out=out, progress=False, checkpoint_every=0)
    t.join(timeout=5)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["complete"] is False
    assert stats["error"] == "interrupted"
    frames = _frame_files(out)
    assert 3 <= len(frames) < 401
    # Every frame written is listed and whole; the run directory is unlocked.
    assert len(stats["frames"]) == len(frames) - 1
    assert not (out / ".cloth-run.lock").exists()
    last = (out / frames[-1]).read_text()
    assert last.count("\nv ") == cloth.Scene(scene).check()["vertices"]


def test_the_gil_is_released_while_a_frame_is_computed(repo):
    sim = cloth.Simulation(repo / "scenes" / "drape_sphere.toml")
    done = threading.Event()
    ticks = 0

    def step():
        sim.step_frames(6)
        done.set()

    t = threading.Thread(target=step)
    t.start()
    while not done.is_set():
        ticks += 1
        threading.Event().wait(0.001)
    t.join()
    # The main thread kept running Python while the other thread simulated.
    assert ticks > 20, ticks
    assert sim.frame == 6


def test_two_threads_stepping_one_simulation_take_turns(repo):
    sim = cloth.Simulation(repo / "scenes" / "drape_sphere.toml")
    threads = [threading.Thread(target=sim.step_frames, args=(3,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert sim.frame == 6
