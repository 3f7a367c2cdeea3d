#include "hx_mesh.h"

#ifdef HEXCG_HAVE_METIS
#include <metis.h>
#endif

void hx_mesh_metis_version(char *buf, size_t len) {
#ifdef HEXCG_HAVE_METIS
  snprintf(buf, len, "METIS %d.%d.%d", METIS_VER_MAJOR, METIS_VER_MINOR, METIS_VER_SUBMINOR);
#else
  snprintf(buf, len, "METIS not built in (mesh.partitioner rcb only)");
#endif
}
