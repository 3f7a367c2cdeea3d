/* The output folder: created with its parents, an existing one refused
 * without force (same message on every rank, nothing touched), with force
 * the previous hexcg outputs removed and other files kept; discard removes
 * what hexcg wrote and a folder it created; atomic writes leave no .tmp.
 * argv[1]: scratch folder. */
#include <sys/stat.h>
#include <unistd.h>

#include "hx_io.h"
#include "hx_test.h"

static int exists(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s%s%s", dir, name ? "/" : "", name ? name : "");
  return access(p, F_OK) == 0;
}

static void touch(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (f) fputs("x\n", f), fclose(f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *scratch = argc > 1 ? argv[1] : "t206";
  char d[1024], msg[1400];
  snprintf(d, sizeof d, "%s/a/b/run", scratch);
  if (rank == 0) {
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    HX_ASSERT(system(cmd) == 0, "clean %s", scratch);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  int created = -1;
  HX_TCALL(hx_output_prepare_dir(MPI_COMM_WORLD, d, 0, &created));
  HX_ASSERT(created == 1 && exists(d, NULL), "created with parents (created=%d)", created);
  if (rank == 0) {
    HX_TCALL(hx_io_write_file_atomic(strcat(strcpy(msg, d), "/case.yaml"), "a: 1\n", 5));
    touch(d, "history.csv"), touch(d, "solution.h5.tmp"), touch(d, "mine.txt");
    HX_ASSERT(!exists(d, "case.yaml.tmp") && exists(d, "case.yaml"), "atomic write leaves no .tmp");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* exists, no force: an input error on every rank, nothing removed */
  int err = hx_output_prepare_dir(MPI_COMM_WORLD, d, 0, &created);
  snprintf(msg, sizeof msg, "output directory '%s' exists; use --force to overwrite it", d);
  HX_ASSERT(err == HX_ERR_INPUT && !strcmp(hx_error_message(), msg), "rank %d: %s", rank, hx_error_message());
  hx_error_clear();
  MPI_Barrier(MPI_COMM_WORLD);
  HX_ASSERT(exists(d, "case.yaml") && exists(d, "history.csv"), "nothing removed without force");
  MPI_Barrier(MPI_COMM_WORLD); /* every rank looked before rank 0 removes below */

  /* force: hexcg's outputs (and stale .tmp) removed, other files kept */
  HX_TCALL(hx_output_prepare_dir(MPI_COMM_WORLD, d, 1, &created));
  HX_ASSERT(created == 0, "existing folder not reported as created");
  HX_ASSERT(!exists(d, "case.yaml") && !exists(d, "history.csv") && !exists(d, "solution.h5.tmp"),
            "previous outputs removed");
  HX_ASSERT(exists(d, "mine.txt"), "user file kept");

  /* a file where the folder should be */
  snprintf(msg, sizeof msg, "%s/mine.txt", d);
  err = hx_output_prepare_dir(MPI_COMM_WORLD, msg, 1, NULL);
  HX_ASSERT(err == HX_ERR_INPUT && strstr(hx_error_message(), "exists and is not a directory"), "file: %s",
            hx_error_message());
  hx_error_clear();

  /* discard: a created folder goes away entirely; a kept one keeps user files */
  char d2[1100];
  snprintf(d2, sizeof d2, "%s/fresh", scratch);
  HX_TCALL(hx_output_prepare_dir(MPI_COMM_WORLD, d2, 0, &created));
  if (rank == 0) touch(d2, "case.yaml");
  MPI_Barrier(MPI_COMM_WORLD);
  HX_TCALL(hx_output_discard_dir(MPI_COMM_WORLD, d2, created));
  HX_ASSERT(!exists(d2, NULL), "discarded folder removed");
  if (rank == 0) touch(d, "case.yaml");
  MPI_Barrier(MPI_COMM_WORLD);
  HX_TCALL(hx_output_discard_dir(MPI_COMM_WORLD, d, 0));
  HX_ASSERT(exists(d, "mine.txt") && !exists(d, "case.yaml"), "discard keeps the folder it did not create");

  return hx_test_mpi_finish(0);
}
