/* main() for the fuzz targets outside libFuzzer: run every file given, and
 * every file in every folder given (sorted by name), through
 * LLVMFuzzerTestOneInput once. Exit 1 when nothing was replayed, so a test
 * with a misspelt or empty corpus cannot pass. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hx_fuzz.h"

static int run_file(const char *path) {
  size_t n = 0;
  char *buf = hx_fuzz_read(path, &n);
  if (!buf) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    return 1;
  }
  if (getenv("HX_FUZZ_VERBOSE")) fprintf(stderr, "replay: %s\n", path);
  LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
  free(buf);
  return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  long count = 0;
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
      bad = 1;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad |= run_file(argv[i]);
      count++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) continue;
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
      if (de->d_name[0] == '.') continue;
      names = realloc(names, (nn + 1) * sizeof *names);
      names[nn] = malloc(strlen(argv[i]) + strlen(de->d_name) + 2);
      sprintf(names[nn++], "%s/%s", argv[i], de->d_name);
    }
    closedir(d);
    if (nn) qsort(names, nn, sizeof *names, cmp_str);
    for (size_t k = 0; k < nn; k++) {
      bad |= run_file(names[k]);
      count++;
      free(names[k]);
    }
    free(names);
  }
  if (!count)
    fprintf(stderr, "replay: no inputs\n");
  else
    fprintf(stderr, "replay: %ld inputs\n", count);
  hx_fuzz_finalize();
  return bad || !count;
}
