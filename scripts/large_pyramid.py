"""Writes Box2D v3's large pyramid (shared/benchmarks.c, CreateLargePyramid) in 3D as a world file.

    /usr/bin/python3 scripts/large_pyramid.py BASE [GAP] > pyramid.xml
    build/bin/impulse run pyramid.xml --steps 1000 --json

Cubes of 1 m and 1 kg, row i (from 0) of BASE - i cubes resting on the row below, each cube on
two, mu = 0.6 (Box2D's default), 1 ms. GAP (m, default 0) opens that much space between the
neighbours of a row (0: their side faces exactly touching, Box2D's layout). `bench scenes
--scene pyramid210` is BASE 20, GAP 0 (docs/benchmarks.md, "Box2D's large pyramid").
"""
import sys


def main():
    base = int(sys.argv[1])
    gap = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    if base < 1 or gap < 0:
        sys.exit("large_pyramid.py: BASE must be >= 1 and GAP >= 0")
    half, pitch = 0.5, 1.0 + gap
    print('<world dt="0.001" gravity="0 0 -9.81">')
    print('  <default_material friction="0.6" restitution="0"/>')
    print('  <ground/>')
    for i in range(base):
        for j in range(i, base):
            # (Box2D's x = (i + 1) a + 2 (j - i) a - a base, its a = 0.5 m the half pitch)
            x = ((i + 1) * half + 2 * (j - i) * half - half * base) * pitch
            print('  <box name="cube_%d_%d" size="1 1 1" mass="1" pos="%.6f 0 %.6f"/>' % (i, j, x, (2 * i + 1) * half))
    print('</world>')


if __name__ == "__main__":
    main()
