#!/usr/bin/python3
"""Write the layered two-material mesh of issue 32 (finding 9) as MSH 2.2:
NX x NY x NZ unit hexahedra on [0, NX] x [0, NY] x [0, NZ] (default 6 x 3 x 3),
the element layers along x alternating between the volume groups "soft"
(even layers) and "hard" (odd layers); surface groups "left" (x = 0),
"right" (x = NX) and "wall" (the other four sides).
make_layered.py OUT.msh [NX NY NZ]"""
import sys

out = sys.argv[1]
nx, ny, nz = (int(a) for a in sys.argv[2:5]) if len(sys.argv) >= 5 else (6, 3, 3)


def nid(i, j, k):
    return 1 + i + (nx + 1) * (j + (ny + 1) * k)


elems = []
# boundary quads: (tag, 4 nodes)
for j in range(ny):
    for k in range(nz):
        elems.append((1, 3, [nid(0, j, k), nid(0, j + 1, k), nid(0, j + 1, k + 1), nid(0, j, k + 1)]))
        elems.append((2, 3, [nid(nx, j, k), nid(nx, j + 1, k), nid(nx, j + 1, k + 1), nid(nx, j, k + 1)]))
for i in range(nx):
    for k in range(nz):
        for j in (0, ny):
            elems.append((3, 3, [nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j, k + 1), nid(i, j, k + 1)]))
    for j in range(ny):
        for k in (0, nz):
            elems.append((3, 3, [nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j + 1, k), nid(i, j + 1, k)]))
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            tag = 4 if i % 2 == 0 else 5
            elems.append((tag, 5, [nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j + 1, k), nid(i, j + 1, k),
                                   nid(i, j, k + 1), nid(i + 1, j, k + 1), nid(i + 1, j + 1, k + 1),
                                   nid(i, j + 1, k + 1)]))
with open(out, "w") as f:
    f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n5\n")
    f.write('2 1 "left"\n2 2 "right"\n2 3 "wall"\n3 4 "soft"\n3 5 "hard"\n$EndPhysicalNames\n')
    nn = (nx + 1) * (ny + 1) * (nz + 1)
    f.write(f"$Nodes\n{nn}\n")
    for k in range(nz + 1):
        for j in range(ny + 1):
            for i in range(nx + 1):
                f.write(f"{nid(i, j, k)} {i} {j} {k}\n")
    f.write(f"$EndNodes\n$Elements\n{len(elems)}\n")
    for e, (tag, typ, nodes) in enumerate(elems):
        f.write(f"{e + 1} {typ} 2 {tag} {tag} " + " ".join(map(str, nodes)) + "\n")
    f.write("$EndElements\n")
