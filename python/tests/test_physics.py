"""Physics from Python, checked against what physics says (not against the simulator's own
numbers): free fall and the hanging sheet's elongation under its own weight."""

from __future__ import annotations

import numpy as np

import cloth

G = 9.81


def test_free_fall_follows_g_t2_over_2():
    # A tilted sheet in vacuum: no pins, no colliders, no drag.
    sim = cloth.Simulation(
        cloth=cloth.Cloth.grid(11, 11, 0.5, 0.5, position=[0, 2, 0], rotation=[20, 0, 0]),
        fps=30,
        gravity=[0, -G, 0],
        solver={"cg_tolerance": 1e-6},
    )
    x0 = sim.positions
    steps = 0
    for _ in range(30):
        steps += sim.step_frame()["steps"]
    t = sim.time
    assert abs(t - 1.0) < 1e-12
    drop = x0[:, 1].mean() - sim.positions[:, 1].mean()
    exact = 0.5 * G * t * t
    # Backward Euler with a constant force falls x_n = g h^2 n (n + 1) / 2: g t h / 2 more
    # than the parabola after time t = n h, with h the (constant) step.
    h = t / steps
    assert abs(drop - (exact + 0.5 * G * t * h)) < 1e-4 * exact
    # Its velocity is exactly g t (each step adds g h).
    v = sim.velocities
    assert np.allclose(v[:, 1], -G * t, rtol=1e-4)
    assert np.allclose(v[:, [0, 2]], 0.0, atol=1e-6)
    # A uniform force does not deform: the sheet is translated rigidly.
    d = sim.positions - x0
    assert np.allclose(d[:, [0, 2]], 0.0, atol=1e-6)
    assert np.ptp(d[:, 1]) < 1e-4 * drop


def test_hanging_sheet_stretches_by_rho_g_l2_over_2k():
    # A sheet of height L hanging from its whole top edge: at height s above the bottom the
    # membrane carries the weight below it, rho g s per unit width, so its strain is
    # rho g s / k and the sheet lengthens by the integral, rho g L^2 / (2 k).
    L, W, rho, k = 1.0, 0.4, 0.2, 20.0
    top = 2.0
    sheet = cloth.Cloth.grid(
        5,
        21,
        W,
        L,
        # Local z (the grid's height) turned to -y: a vertical sheet from y = top down.
        rotation=[90, 0, 0],
        position=[0, top - L / 2, 0],
        material={
            "preset": "cotton",
            "density": rho,
            "stretch": [k, k],
            "shear": 5.0,
            "bend": 1e-8,
        },
    )
    pins = [cloth.Pin(region=([-1, top - 1e-6, -1], [1, top + 1e-6, 1]))]
    sim = cloth.Simulation(
        cloth=sheet, pins=pins, fps=30, gravity=[0, -G, 0], solver={"cg_tolerance": 1e-8}
    )
    assert len(sim.pins[0]) == 5
    y0 = sim.positions[:, 1]
    peak = 0.0
    for _ in range(150):
        st = sim.step_frame()
        peak = max(peak, st["kinetic_energy"])
    assert st["kinetic_energy"] < 1e-6 * peak, "the sheet has not come to rest"
    y = sim.positions[:, 1]
    expected = rho * G * L * L / (2 * k)
    bottom = np.isclose(y0, top - L)
    elongation = (y0[bottom] - y[bottom]).mean()
    assert abs(elongation - expected) < 2e-3 * expected, (elongation, expected)
    # The strain grows linearly from the bottom: the middle row has come down by the
    # stretch of the upper half, 3/4 of the whole (the integral of s from L/2 to L over the
    # integral from 0 to L).
    mid = np.isclose(y0, top - L / 2)
    assert mid.sum() == 5
    drop_mid = (y0[mid] - y[mid]).mean()
    assert abs(drop_mid - 0.75 * expected) < 2e-3 * expected, (drop_mid, expected)
