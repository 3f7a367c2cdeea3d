/* hexcg mesh: hex meshes (generators, Gmsh reader), validation,
 * partitioning, distribution to ranks, global GLL numbering. */
#ifndef HX_MESH_H
#define HX_MESH_H

#include "hx_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "METIS 5.1.0" into buf. */
void hx_mesh_metis_version(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
