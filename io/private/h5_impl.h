/* Private to io/: HDF5 helpers shared by the solution and history writers. */
#ifndef HX_H5_IMPL_H
#define HX_H5_IMPL_H

#include <hdf5.h>

#include "io_impl.h"

/* The reason of the last HDF5 failure of this thread, from the HDF5 error
 * stack: the system's words where MPI-IO or the file driver gives them ("No
 * space left on device"), else HDF5's innermost description. */
void hx_h5_reason(char *buf, size_t len);
/* Record HX_ERR_IO "cannot write 'path': REASON (what)" from the HDF5 error stack. */
int hx_h5_write_error(const char *path, const char *what);
/* Not collective (every HDF5 file hexcg writes is made by one rank). Flush
 * and close f (the file path, being written under the temporary name tmp),
 * with err the error state so far. A failed flush inside H5Fclose leaves a
 * half-closed file in HDF5's tables that crashes MPI_Finalize; so the file
 * is flushed first, and after any error tmp is truncated (which frees the
 * space a full disk needs for the metadata) before the close. The file is
 * always closed; tmp is left for the caller to rename or remove. Returns
 * the error. */
int hx_h5_close(hid_t f, const char *path, const char *tmp, int err);
/* The name under which the MPI-IO driver opens path. MPI-IO (ROMIO) reads
 * "PREFIX:" before a colon as a file-system type, so a path with a colon in
 * it ("out/run_2026-12-01T16:30:19/solution.h5") would be refused as an
 * unknown file system; such a path gets an explicit prefix ("nfs:" on NFS,
 * else "ufs:", the generic POSIX driver), every other path is passed as it
 * is (ROMIO then detects the file system itself). Returns buf, or NULL if the
 * name does not fit (len >= strlen(path) + 5 always fits). */
const char *hx_h5_mpio_name(const char *path, char *buf, size_t len);

#endif
