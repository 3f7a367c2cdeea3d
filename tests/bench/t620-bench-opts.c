/* The benchmarks' argument parser (bench/bench_opts.c): defaults from the
 * table, every value type, the refusals (unknown option, positional
 * argument, missing, malformed and out-of-range values, a name not in a
 * choice list) with their messages, and --help generated from the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "hx_test.h"

typedef struct {
  int n, flag;
  long big;
  double x, bytes, open, preset;
  const char *s, *choice;
  int custom;
} vals;

/* CUSTOM: an even integer */
static int parse_even(const char *cmd, const char *name, const char *v, void *dest) {
  const int x = atoi(v);
  HX_CHECK(x % 2 == 0, HX_ERR_INPUT, "%s: %s: %s is odd", cmd, name, v);
  *(int *)dest = x;
  return HX_SUCCESS;
}

#define NOPT 10
static void table(vals *v, hx_bench_opt *opt) {
  const hx_bench_opt o[NOPT] = {
      {"--n", HX_BOPT_INT, &v->n, "7", 1, 15, .meta = "P", .help = "an order"},
      {"--flag", HX_BOPT_FLAG, &v->flag, .help = "a flag"},
      {"--big", HX_BOPT_LONG, &v->big, "4194304", 8, 1 << 30, .help = "a long"},
      {"--x", HX_BOPT_REAL, &v->x, "0.05", 0, 100, .help = "a number"},
      {"--bytes", HX_BOPT_BYTES, &v->bytes, "4K", 8, 1e15, .help = "a size"},
      {"--open", HX_BOPT_REAL, &v->open, "1", 0, 60, HX_BOPT_OPEN_LO | HX_BOPT_OPEN_HI, .help = "in (0, 60)"},
      {"--preset", HX_BOPT_REAL, &v->preset, NULL, 0, 10,
       .help = "kept when not given (default: the caller's)"},
      {"--s", HX_BOPT_STRING, &v->s, "{type: asm}", .meta = "YAML", .help = "a text"},
      {"--choice", HX_BOPT_CHOICE, &v->choice, "pcg", .choices = "pcg,pcg1", .help = "a choice"},
      {"--even", HX_BOPT_CUSTOM, &v->custom, "2", .parse = parse_even, .meta = "E", .help = "an even number"},
  };
  memcpy(opt, o, sizeof o);
}

/* parse the NULL-terminated words after argv[0]; returns the error code */
static int run(vals *v, int *help, const char **words) {
  hx_bench_opt opt[NOPT];
  memset(v, 0, sizeof *v);
  v->preset = -1.0;
  v->flag = 5; /* a flag not given is 0, whatever it held */
  table(v, opt);
  const hx_bench_cmd cmd = {"bench t", "A test.", "The end.", NOPT, opt};
  char *argv[32] = {"t"};
  int argc = 1;
  for (; words[argc - 1]; argc++) argv[argc] = (char *)words[argc - 1];
  hx_error_clear();
  return hx_bench_parse(&cmd, argc, argv, help);
}

/* the word list must be refused as input with a message containing want */
static void refused(const char **words, const char *want) {
  vals v;
  int help = 0;
  const int e = run(&v, &help, words);
  HX_ASSERT(e == HX_ERR_INPUT, "%s ...: code %d, want HX_ERR_INPUT", words[0], e);
  HX_ASSERT(e && strstr(hx_error_message(), want), "%s ...: message '%s' lacks '%s'", words[0],
            hx_error_message(), want);
  HX_ASSERT(e && !strncmp(hx_error_message(), "bench t: ", 9), "message '%s' does not name the benchmark",
            hx_error_message());
}

int main(void) {
  vals v;
  int help = 0;
  /* defaults */
  {
    const char *w[] = {NULL};
    HX_TCALL(run(&v, &help, w));
    HX_ASSERT(!help, "help set without --help");
    HX_ASSERT(
        v.n == 7 && v.flag == 0 && v.big == 4194304 && v.x == 0.05 && v.bytes == 4096.0 && v.open == 1.0,
        "defaults: n %d flag %d big %ld x %g bytes %g open %g", v.n, v.flag, v.big, v.x, v.bytes, v.open);
    HX_ASSERT(v.preset == -1.0, "a table entry without a default changed its value: %g", v.preset);
    HX_ASSERT(!strcmp(v.s, "{type: asm}") && !strcmp(v.choice, "pcg") && v.custom == 2,
              "defaults: s '%s' '%s' %d", v.s, v.choice, v.custom);
  }
  /* every type given, the last of a repeated option winning */
  {
    const char *w[] = {"--n",  "3",      "--flag", "--big",    "65536", "--x",     "1e-3",        "--bytes",
                       "1M",   "--open", "59.5",   "--preset", "2.5",   "--s",     "{type: pmg}", "--choice",
                       "pcg1", "--even", "8",      "--n",      "15",    "--bytes", "2GB",         NULL};
    HX_TCALL(run(&v, &help, w));
    HX_ASSERT(v.n == 15 && v.flag == 1 && v.big == 65536 && v.x == 1e-3 && v.open == 59.5 && v.preset == 2.5,
              "values: n %d flag %d big %ld x %g open %g preset %g", v.n, v.flag, v.big, v.x, v.open,
              v.preset);
    HX_ASSERT(v.bytes == 2.0 * 1073741824.0, "--bytes 2GB: %g", v.bytes);
    HX_ASSERT(!strcmp(v.s, "{type: pmg}") && !strcmp(v.choice, "pcg1") && v.custom == 8,
              "values: '%s' '%s' %d", v.s, v.choice, v.custom);
  }
  {
    const char *w[] = {"--n", "3", "--help", "--frobnicate", NULL};
    HX_TCALL(run(&v, &help, w));
    HX_ASSERT(help == 1, "--help not seen");
    const char *w2[] = {"-h", NULL};
    HX_TCALL(run(&v, &help, w2));
    HX_ASSERT(help == 1, "-h not seen");
  }
  /* refusals */
  {
    const char *w1[] = {"--frobnicate", "1", NULL};
    refused(w1, "unknown option '--frobnicate' (see 'hexcg bench t --help')");
    const char *w2[] = {"extra", NULL};
    refused(w2, "unexpected argument 'extra'");
    const char *w3[] = {"--n", NULL};
    refused(w3, "option --n needs a value");
    const char *w4[] = {"--n", "3x", NULL};
    refused(w4, "--n: '3x' is not an integer");
    const char *w5[] = {"--n", "16", NULL};
    refused(w5, "--n 16: allowed 1..15");
    const char *w6[] = {"--n", "0", NULL};
    refused(w6, "--n 0: allowed 1..15");
    const char *w7[] = {"--x", "nan", NULL};
    refused(w7, "--x: 'nan' is not a number");
    const char *w8[] = {"--x", "100.5", NULL};
    refused(w8, "--x 100.5: allowed [0, 100]");
    const char *w9[] = {"--open", "0", NULL};
    refused(w9, "--open 0: allowed (0, 60)");
    const char *w10[] = {"--open", "60", NULL};
    refused(w10, "--open 60: allowed (0, 60)");
    const char *w11[] = {"--bytes", "4Q", NULL};
    refused(w11, "--bytes: '4Q' is not a byte count (suffixes: K, M, G)");
    const char *w12[] = {"--bytes", "4", NULL};
    refused(w12, "--bytes 4: allowed [8, 1e+15] bytes");
    const char *w13[] = {"--choice", "pcg2", NULL};
    refused(w13, "--choice 'pcg2': allowed pcg|pcg1");
    const char *w14[] = {"--choice", "pcg,pcg1", NULL};
    refused(w14, "allowed pcg|pcg1");
    const char *w15[] = {"--even", "3", NULL};
    refused(w15, "--even: 3 is odd");
    const char *w16[] = {"--big", "99999999999999999999", NULL};
    refused(w16, "is not an integer");
    const char *w17[] = {"--n", "", NULL};
    refused(w17, "--n: '' is not an integer");
  }
  /* a default that does not parse is a bug of the table, not input */
  {
    int n = 0;
    const hx_bench_opt o[] = {{"--n", HX_BOPT_INT, &n, "99", 1, 15, .help = "x"}};
    const hx_bench_cmd cmd = {"bench t", NULL, NULL, 1, o};
    char *argv[] = {"t"};
    const int e = hx_bench_parse(&cmd, 1, argv, &help);
    HX_ASSERT(e == HX_ERR_INTERNAL, "a bad default: code %d", e);
    hx_error_clear();
  }
  /* --help from the table: every option, its placeholder, help and default */
  {
    hx_bench_opt opt[NOPT];
    table(&v, opt);
    const hx_bench_cmd cmd = {"bench t", "A test.", "The end.", NOPT, opt};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    HX_ASSERT(f, "open_memstream");
    if (f) {
      hx_bench_usage(&cmd, f);
      fclose(f);
      HX_ASSERT(!strncmp(buf, "usage: hexcg bench t [OPTIONS]\nA test.\noptions:\n", 48), "head: %.60s", buf);
      const char *want[] = {"  --n P ",          "an order (default 7)",
                            "  --flag ",         "a flag\n",
                            "--bytes BYTES",     "(default 4K)",
                            "--choice pcg|pcg1", "a choice (default pcg)",
                            "--s YAML",          "(default {type: asm})",
                            "--even E",          "kept when not given (default: the caller's)\n",
                            "  --help, -h ",     "The end.\n"};
      for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        HX_ASSERT(strstr(buf, want[k]), "--help lacks '%s':\n%s", want[k], buf);
      for (int k = 0; k < NOPT; k++) HX_ASSERT(strstr(buf, opt[k].name), "--help lacks %s", opt[k].name);
      /* wrapped at 100 columns */
      for (const char *s = buf; *s;) {
        const char *e = strchr(s, '\n');
        const size_t l = e ? (size_t)(e - s) : strlen(s);
        HX_ASSERT(l <= 100, "a --help line of %zu columns: %.*s", l, (int)l, s);
        s = e ? e + 1 : s + l;
      }
      free(buf);
    }
  }
  return hx_test_result();
}
