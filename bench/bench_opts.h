/* Private to bench/: the one argument parser of the benchmarks. Each
 * benchmark describes its options in a table (name, type, destination,
 * default, range or allowed names, one-line help); hx_bench_args sets the
 * defaults, parses the command line against the table, prints --help
 * generated from it, and refuses unknown options, missing or malformed
 * values and values out of range with a message naming the benchmark and the
 * option (exit status 2, as every input error of hexcg). */
#ifndef HX_BENCH_OPTS_H
#define HX_BENCH_OPTS_H

#include <stdio.h>

#include "hx_app.h"
#include "hx_mesh.h"

typedef enum {
  HX_BOPT_FLAG,   /* no value: *(int *)dest = 1 */
  HX_BOPT_INT,    /* an integer in [lo, hi]: int */
  HX_BOPT_LONG,   /* an integer in [lo, hi]: long */
  HX_BOPT_REAL,   /* a finite number in [lo, hi] (see open): double */
  HX_BOPT_BYTES,  /* a byte count, suffixes K, M, G (powers of 1024) and an optional B, in [lo, hi]: double */
  HX_BOPT_STRING, /* any text: const char * (pointing into argv or at the default) */
  HX_BOPT_CHOICE, /* one of the comma-separated names of `choices`: const char * (the value) */
  HX_BOPT_CUSTOM, /* parse(bench, name, value, dest) */
} hx_bench_opt_type;

/* range ends excluded (open interval) for HX_BOPT_REAL */
#define HX_BOPT_OPEN_LO 1
#define HX_BOPT_OPEN_HI 2

typedef struct {
  const char *name; /* "--order" */
  hx_bench_opt_type type;
  void *dest;
  const char *def;     /* default, parsed as if given on the command line, before the command line and
                          shown in --help; NULL: dest keeps the value the caller set (the help says what
                          it means) */
  double lo, hi;       /* range of INT, LONG, REAL, BYTES */
  int open;            /* HX_BOPT_OPEN_LO | HX_BOPT_OPEN_HI */
  const char *choices; /* CHOICE: "cpu,cuda" */
  /* CUSTOM: parse value into dest; an input error names bench and the option */
  int (*parse)(const char *bench, const char *name, const char *value, void *dest);
  const char *meta; /* placeholder of the value in --help ("P"); NULL: from the type */
  const char *help; /* one paragraph, wrapped by --help */
} hx_bench_opt;

typedef struct {
  const char *name;     /* "bench ax": the prefix of every message */
  const char *synopsis; /* after the usage line (NULL: none) */
  const char *epilog;   /* after the options (NULL: none) */
  int nopt;
  const hx_bench_opt *opt;
} hx_bench_cmd;

/* Set the table's defaults, then parse argv[1..argc). *help = 1 (and the
 * rest is not parsed) for --help or -h. An unknown option, a positional
 * argument, a missing value, a malformed value or one outside its range:
 * HX_ERR_INPUT, "bench ax: ...". Not collective. */
int hx_bench_parse(const hx_bench_cmd *c, int argc, char **argv, int *help);

/* --help generated from the table: usage line, synopsis, one entry per
 * option (name, placeholder, help, default), epilog. */
void hx_bench_usage(const hx_bench_cmd *c, FILE *out);

/* hx_bench_parse for a subcommand: returns 0 when the benchmark is to run;
 * else 1 with *status the exit status to return: 0 after --help (printed on
 * rank 0), 2 after an input error (printed on rank 0; every rank parses the
 * same argv, so every rank stops). */
int hx_bench_args(const hx_app_ctx *ctx, const hx_bench_cmd *c, int argc, char **argv, int *status);

/* The n x n x n box of a benchmark's --mesh: "box" (the unit cube) or
 * "kershaw" (the Kershaw deformation, eps = 0.3). Collective over comm. */
int hx_bench_box_mesh(MPI_Comm comm, const char *mesh, int n, hx_mesh *m);

#endif
