/* hexcg io: case files (libyaml), HDF5/XDMF output, histories, summaries.
 * The only module that includes libyaml, libmatheval and HDF5 headers. */
#ifndef HX_IO_H
#define HX_IO_H

#include "hx_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "HDF5 1.10.8 (parallel), libyaml 0.2.5" into buf. */
void hx_io_library_versions(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
