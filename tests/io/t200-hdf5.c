/* Parallel HDF5 round trip: each rank writes its block of a 1D dataset
 * collectively (MPI-IO), the file is reopened and every rank reads back the
 * whole dataset and checks every value. */
#include <hdf5.h>

#include "hx_test.h"

int main(int argc, char **argv) {
  int rank, size;
  hx_test_mpi_init(&argc, &argv, &rank, &size);
  const char *fname = argc > 1 ? argv[1] : "t200.h5";
  const hsize_t per = 1000 + 17 * (hsize_t)rank; /* uneven blocks */
  hsize_t off = 0, total = 0;
  for (int r = 0; r < size; r++) {
    if (r < rank) off += 1000 + 17 * (hsize_t)r;
    total += 1000 + 17 * (hsize_t)r;
  }
  double *buf = malloc(sizeof(double) * per);
  for (hsize_t i = 0; i < per; i++) buf[i] = (double)(off + i) * 0.5 + 1.0 / 3.0;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t f = H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  HX_ASSERT(f >= 0, "H5Fcreate %s", fname);
  hid_t fs = H5Screate_simple(1, &total, NULL);
  hid_t ds = H5Dcreate2(f, "u", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t ms = H5Screate_simple(1, &per, NULL);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &per, NULL);
  hid_t dx = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dx, H5FD_MPIO_COLLECTIVE);
  herr_t st = H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, buf);
  HX_ASSERT(st >= 0, "collective H5Dwrite");
  H5Pclose(dx), H5Sclose(ms), H5Sclose(fs), H5Dclose(ds), H5Fclose(f);

  f = H5Fopen(fname, H5F_ACC_RDONLY, fapl);
  ds = H5Dopen2(f, "u", H5P_DEFAULT);
  fs = H5Dget_space(ds);
  hsize_t dims = 0;
  H5Sget_simple_extent_dims(fs, &dims, NULL);
  HX_ASSERT(dims == total, "dataset size %llu, expected %llu", (unsigned long long)dims,
            (unsigned long long)total);
  double *all = malloc(sizeof(double) * total);
  st = H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all);
  HX_ASSERT(st >= 0, "H5Dread");
  int bad = 0;
  for (hsize_t i = 0; i < total; i++) bad += all[i] != (double)i * 0.5 + 1.0 / 3.0;
  HX_ASSERT(bad == 0, "%d values differ after the round trip", bad);
  H5Sclose(fs), H5Dclose(ds), H5Fclose(f), H5Pclose(fapl);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(fname);
  free(buf), free(all);
  return hx_test_mpi_finish(0);
}
