/* tests/fuzz: one libFuzzer target per reader of untrusted input (docs/developer.md
 * "Fuzzing"). Each target defines LLVMFuzzerTestOneInput and calls the entry point
 * the program uses; it builds either with libFuzzer (-DHEXCG_FUZZ=ON, clang) or with
 * replay_main.c, which runs the files and folders given on the command line through
 * it once (the regular and sanitizer test builds replay the corpora that way). */
#ifndef HX_FUZZ_H
#define HX_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Once per process: MPI (a singleton when not started by mpiexec), quiet
 * logging, and a private scratch folder ($TMPDIR, else /dev/shm or /tmp)
 * removed at exit. */
void hx_fuzz_init(void);
/* Write data[0..size) to the scratch file `name` and return its path (valid
 * until the next call with the same name). Aborts on an I/O error: that is the
 * harness failing, not the reader. */
const char *hx_fuzz_write(const char *name, const void *data, size_t size);
/* The scratch folder (for targets that lay out several files). */
const char *hx_fuzz_dir(void);
/* The whole file path in an exact-size heap buffer (free() it; *len its
 * length), or NULL if it cannot be read. */
char *hx_fuzz_read(const char *path, size_t *len);
/* A NUL-terminated heap copy of data[0..size) (free() it). */
char *hx_fuzz_strndup(const uint8_t *data, size_t size);
/* After an input: a reader that failed must have said why (HX_ERR_INPUT with
 * a message) rather than crash; clears the error state for the next input.
 * err other than HX_SUCCESS / HX_ERR_INPUT (an I/O or internal error on a
 * well-formed scratch file) aborts, so the fuzzer reports it. */
void hx_fuzz_done(int err, const char *what);
/* The mesh targets (hx_fuzz_mesh.c, linked with hx_mesh): on an accepted
 * mesh the order-2 GLL ids (exactly 1..N, else abort) and the Jacobian check
 * at jac_order; the error of those calls (who names the target in aborts). */
struct hx_mesh_s;
int hx_fuzz_mesh_checks(struct hx_mesh_s *m, int jac_order, const char *who);
/* End of a replay (not under libFuzzer, which never returns): the scratch
 * folder removed and MPI finalized, so the process leaves mpiexec the way
 * every other test does. */
void hx_fuzz_finalize(void);

#endif
