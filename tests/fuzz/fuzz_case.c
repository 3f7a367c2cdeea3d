/* Fuzz target: case files and --set overrides, through the loader `hexcg run`
 * uses on rank 0 (hx_case_load_string with file checks; the text is what
 * hx_case_load reads), then the preconditioner check the run makes
 * (hx_pc_options_check). Input: the YAML text, then up to 8 overrides
 * ("a.b=value"), separated by NUL bytes.
 *
 * Oracle beyond "no crash": a case that loads is written back as the
 * effective case (hx_case_write_effective, as every run does), that file must
 * load again, and writing it once more must give the same bytes: the writer
 * and the reader agree on every value the fuzzer reaches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_fuzz.h"
#include "hx_io.h"
#include "hx_precond.h"

#define MAX_SETS 8

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hx_fuzz_init();
  /* files a case may name (mesh.file, solver.initial_guess): the loader checks
   * that they can be read, relative to the case's folder */
  size_t n = 0;
  char *msh = hx_fuzz_read(HEXCG_SOURCE_DIR "/configs/meshes/two_materials.msh", &n);
  if (!msh) {
    fprintf(stderr, "fuzz_case: cannot read configs/meshes/two_materials.msh\n");
    abort();
  }
  char sub[600];
  snprintf(sub, sizeof sub, "%s/meshes", hx_fuzz_dir());
  if (mkdir(sub, 0700) != 0) abort();
  hx_fuzz_write("meshes/two_materials.msh", msh, n); /* the names the seed cases use */
  hx_fuzz_write("two_materials.msh", msh, n);
  hx_fuzz_write("extruded.msh", msh, n);
  hx_fuzz_write("mesh.msh", msh, n);
  hx_fuzz_write("solution.h5", "", 0);
  free(msh);
  return 0;
}

/* effective case of cs into path, loaded again, written again: same bytes */
static void round_trip(hx_case *cs) {
  char p1[512], p2[512];
  snprintf(p1, sizeof p1, "%s/effective1.yaml", hx_fuzz_dir());
  snprintf(p2, sizeof p2, "%s/effective2.yaml", hx_fuzz_dir());
  int err = hx_case_write_effective(cs, p1);
  hx_case *again = NULL;
  if (!err) err = hx_case_load(p1, 0, NULL, &again);
  if (!err) err = hx_pc_options_check(again->preconditioner.opts);
  if (!err) err = hx_case_write_effective(again, p2);
  if (err) {
    fprintf(stderr, "fuzz_case: the effective case of an accepted case does not load again:\n");
    hx_error_print(stderr, 0, 1);
    abort();
  }
  size_t n1 = 0, n2 = 0;
  char *a = hx_fuzz_read(p1, &n1), *b = hx_fuzz_read(p2, &n2);
  /* the first line names the file the case came from */
  const char *ea = a ? memchr(a, '\n', n1) : NULL, *eb = b ? memchr(b, '\n', n2) : NULL;
  if (!ea || !eb || n1 - (size_t)(ea - a) != n2 - (size_t)(eb - b) || memcmp(ea, eb, n1 - (size_t)(ea - a))) {
    fprintf(stderr,
            "fuzz_case: writing the effective case twice differs:\n--- first\n%.*s\n--- second\n%.*s\n",
            (int)n1, a ? a : "", (int)n2, b ? b : "");
    abort();
  }
  free(a), free(b);
  hx_case_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = hx_fuzz_strndup(data, size);
  const char *sets[MAX_SETS];
  int nsets = 0;
  for (size_t i = 0; i < size && nsets < MAX_SETS; i++)
    if (buf[i] == '\0') sets[nsets++] = buf + i + 1;
  char name[512];
  snprintf(name, sizeof name, "%s/case.yaml", hx_fuzz_dir());
  hx_case *cs = NULL;
  int err = hx_case_load_string(buf, name, nsets, sets, 1, &cs);
  if (!err) err = hx_pc_options_check(cs->preconditioner.opts);
  if (!err) round_trip(cs);
  hx_case_destroy(&cs);
  hx_fuzz_done(err, "hx_case_load_string");
  free(buf);
  return 0;
}
