/* Gmsh geometries shared by the tests that mesh them (header-only). */
#ifndef HX_TEST_GEO_H
#define HX_TEST_GEO_H

/* A disk of radius 1 extruded to height 0.5 in 2 layers, meshed
 * unstructured in the plane, all-hex (quads recombined and extruded):
 * volume "disk", surfaces "wall" (the curved side) and "ends". */
static const char *const hx_test_disk_geo =
    "Mesh.RecombineAll = 1;\nMesh.SubdivisionAlgorithm = 1;\n"
    "Point(1)={0,0,0,0.6}; Point(2)={1,0,0,0.6}; Point(3)={0,1,0,0.6}; Point(4)={-1,0,0,0.6}; "
    "Point(5)={0,-1,0,0.6};\n"
    "Circle(1)={2,1,3}; Circle(2)={3,1,4}; Circle(3)={4,1,5}; Circle(4)={5,1,2};\n"
    "Curve Loop(1)={1,2,3,4}; Plane Surface(1)={1};\nRecombine Surface{1};\n"
    "v[]=Extrude{0,0,0.5}{Surface{1}; Layers{2}; Recombine;};\n"
    "Physical Volume(\"disk\")={v[1]};\nPhysical Surface(\"wall\")={v[2],v[3],v[4],v[5]};\n"
    "Physical Surface(\"ends\")={1,v[0]};\n";

#endif
