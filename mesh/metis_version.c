#include "hx_mesh.h"

#include <metis.h>

void hx_mesh_metis_version(char *buf, size_t len) {
  snprintf(buf, len, "METIS %d.%d.%d", METIS_VER_MAJOR, METIS_VER_MINOR, METIS_VER_SUBMINOR);
}
