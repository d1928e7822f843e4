"""Writes tube.obj: an open cloth tube (radius 0.05 m, length 0.3 m, axis y, centred at the
origin), 40 vertices around and 41 rings, each quad split along alternating diagonals.
Used by scenes/twisting_tube.toml. Run: python3 make_tube.py"""
import math

AROUND, RINGS = 40, 41
RADIUS, LENGTH = 0.05, 0.3

lines = [
    "# cloth tube: radius 0.05 m, length 0.3 m, axis y, 40 vertices around, 41 rings",
    "# written by assets/tube/make_tube.py",
]
for j in range(RINGS):
    y = -LENGTH / 2 + LENGTH * j / (RINGS - 1)
    for i in range(AROUND):
        a = 2 * math.pi * i / AROUND
        lines.append("v %.6f %.6f %.6f" % (RADIUS * math.cos(a), y, RADIUS * math.sin(a)))
for j in range(RINGS - 1):
    for i in range(AROUND):
        a = j * AROUND + i + 1
        b = j * AROUND + (i + 1) % AROUND + 1
        c = (j + 1) * AROUND + (i + 1) % AROUND + 1
        d = (j + 1) * AROUND + i + 1
        if (i + j) % 2 == 0:
            lines += ["f %d %d %d" % (a, d, c), "f %d %d %d" % (a, c, b)]
        else:
            lines += ["f %d %d %d" % (a, d, b), "f %d %d %d" % (b, d, c)]
with open("tube.obj", "w") as f:
    f.write("\n".join(lines) + "\n")
