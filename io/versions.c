#include "hx_io.h"

#include <hdf5.h>
#include <yaml.h>

void hx_io_library_versions(char *buf, size_t len) {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
#ifdef H5_HAVE_PARALLEL
  const char *par = "parallel";
#else
  const char *par = "serial";
#endif
  snprintf(buf, len, "HDF5 %u.%u.%u (%s), libyaml %s, libmatheval (Debian)", maj, min, rel, par,
           yaml_get_version_string());
}
