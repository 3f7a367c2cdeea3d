// The unit cube meshed with 4 x 4 x 3 hexahedra, graded in z; its six faces
// are physical surfaces, and no Periodic statement: the case pairs
// xmin/xmax and ymin/ymax itself (configs/periodic_gmsh.yaml).
// gmsh -3 periodic_box.geo -format msh41 -o periodic_box.msh
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
e = 1e-6;
Transfinite Curve{:} = 5;
zc() = Curve In BoundingBox{-e, -e, -e, 1 + e, 1 + e, 1 + e};
Transfinite Curve{Curve In BoundingBox{-e, -e, -e, e, e, 1 + e}, Curve In BoundingBox{1 - e, -e, -e, 1 + e, e, 1 + e},
                  Curve In BoundingBox{-e, 1 - e, -e, e, 1 + e, 1 + e}, Curve In BoundingBox{1 - e, 1 - e, -e, 1 + e, 1 + e, 1 + e}} = 4 Using Progression 1.3;
Transfinite Surface{:};
Recombine Surface{:};
Transfinite Volume{1};
Physical Surface("xmin") = Surface In BoundingBox{-e, -e, -e, e, 1 + e, 1 + e};
Physical Surface("xmax") = Surface In BoundingBox{1 - e, -e, -e, 1 + e, 1 + e, 1 + e};
Physical Surface("ymin") = Surface In BoundingBox{-e, -e, -e, 1 + e, e, 1 + e};
Physical Surface("ymax") = Surface In BoundingBox{-e, 1 - e, -e, 1 + e, 1 + e, 1 + e};
Physical Surface("zmin") = Surface In BoundingBox{-e, -e, -e, 1 + e, 1 + e, e};
Physical Surface("zmax") = Surface In BoundingBox{-e, -e, 1 - e, 1 + e, 1 + e, 1 + e};
Physical Volume("box") = {1};
