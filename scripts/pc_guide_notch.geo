// scripts/pc_guide.py's curved Gmsh case (gmsh-p5): regression/meshes/extruded.geo's
// notched square (unstructured quads, Blossom recombination) meshed finer and
// extruded in 14 layers, second order (hex27: the arc of the notch is curved).
// pc_guide.py runs: gmsh -3 -format msh41 -o notch.msh pc_guide_notch.geo
lc = 0.055;
Point(1) = {0, 0, 0, lc};
Point(2) = {1, 0, 0, lc};
Point(3) = {1, 1, 0, lc};
Point(4) = {0.4, 1, 0, lc};
Point(5) = {0, 0.6, 0, lc};
Point(6) = {0, 1, 0, lc};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Circle(4) = {4, 6, 5};
Line(5) = {5, 1};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
Recombine Surface {1};
out[] = Extrude {0, 0, 1} { Surface{1}; Layers{14}; Recombine; };
Physical Surface("bottom") = {1};
Physical Surface("top") = {out[0]};
Physical Surface("side") = {out[2], out[3], out[4], out[5], out[6]};
Physical Volume("body") = {out[1]};
Mesh.Algorithm = 6;
Mesh.RecombinationAlgorithm = 1;
Mesh.Smoothing = 2;
Mesh.ElementOrder = 2;
