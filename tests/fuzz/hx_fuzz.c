/* Shared helpers of the fuzz targets (see hx_fuzz.h). */
#include "hx_fuzz.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx_core.h"

static char scratch[256];

static void remove_scratch(void) {
  if (!scratch[0]) return;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  if (system(cmd) != 0) fprintf(stderr, "hx_fuzz: could not remove %s\n", scratch);
}

void hx_fuzz_init(void) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
  }
  hx_log_init(0, HX_LOG_QUIET);
  if (!scratch[0]) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/hexcg-fuzz-XXXXXX", tmp);
    if (!mkdtemp(scratch)) {
      fprintf(stderr, "hx_fuzz: mkdtemp %s: %s\n", scratch, strerror(errno));
      abort();
    }
    atexit(remove_scratch);
  }
}

const char *hx_fuzz_dir(void) { return scratch; }

void hx_fuzz_finalize(void) {
  remove_scratch();
  scratch[0] = '\0';
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (inited && !finalized) MPI_Finalize();
}

const char *hx_fuzz_write(const char *name, const void *data, size_t size) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    fprintf(stderr, "hx_fuzz: cannot write %s: %s\n", path, strerror(errno));
    abort();
  }
  return path;
}

char *hx_fuzz_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0, got;
  char *buf = malloc(cap), *nb;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
    if ((n += got) == cap) {
      nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  fclose(f);
  /* exact size, so ASan sees a read past the end of an input */
  nb = buf ? realloc(buf, n ? n : 1) : NULL;
  if (!nb) free(buf);
  *len = n;
  return nb;
}

char *hx_fuzz_strndup(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

void hx_fuzz_done(int err, const char *what) {
  if (err != HX_SUCCESS && err != HX_ERR_INPUT) {
    fprintf(stderr, "hx_fuzz: %s failed with %s, not an input error:\n", what, hx_error_name(err));
    hx_error_print(stderr, 0, 1);
    abort();
  }
  if (err == HX_ERR_INPUT && !hx_error_message()[0]) {
    fprintf(stderr, "hx_fuzz: %s refused the input without a message\n", what);
    abort();
  }
  hx_error_clear();
}
