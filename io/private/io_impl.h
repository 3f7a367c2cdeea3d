/* Private to io/: a small YAML document tree with source positions, shared
 * helpers for messages and files. */
#ifndef HX_IO_IMPL_H
#define HX_IO_IMPL_H

#include "hx_io.h"

/* Where a node came from: a file (messages "name:LINE:COL: ...") or a
 * command-line override (messages "--set a.b=v: ..."). */
typedef struct hx_ysrc {
  char *name;
  int is_set;
  struct hx_ysrc *next; /* list owned by the document */
} hx_ysrc;

typedef enum { HX_YN_SCALAR, HX_YN_SEQ, HX_YN_MAP } hx_ynode_kind;

typedef struct hx_ynode {
  hx_ynode_kind kind;
  char *value;   /* scalar text ("" for an empty value) */
  int quoted;    /* scalar written in quotes */
  int line, col; /* 1-based start position */
  const hx_ysrc *src;
  int n, cap;
  struct hx_ynode **keys; /* map: key scalars */
  struct hx_ynode **vals; /* map values / sequence items */
} hx_ynode;

typedef struct {
  hx_ynode *root;
  hx_ysrc *srcs;
} hx_ydoc;

/* Parse YAML text (one document) into doc; a syntax error is HX_ERR_INPUT
 * "src:LINE:COL: YAML syntax error: ...". An empty document gives root NULL. */
int hx_ydoc_parse(hx_ydoc *doc, const char *text, size_t len, const char *srcname, int is_set);
void hx_ydoc_free(hx_ydoc *doc);
/* Apply one "a.b.c=value" override. */
int hx_ydoc_apply_set(hx_ydoc *doc, const char *set);
/* Value of key in map (NULL if absent or map is not a mapping); *key_node too if non-NULL. */
hx_ynode *hx_ynode_get(const hx_ynode *map, const char *key, hx_ynode **key_node);
void hx_ynode_free(hx_ynode *n);

/* Record an HX_ERR_INPUT at node n: "src:LINE:COL: message". */
int hx_yerror(const hx_ynode *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Position prefix of n ("case.yaml:3:5" or "--set a=b") into buf. */
void hx_ynode_where(const hx_ynode *n, char *buf, size_t len);


char *hx_io_strdup(const char *s);
/* A double as the shortest text that reads back exactly, always with a '.' in
 * the mantissa (1.0, 1.0e-10) so that YAML 1.1 readers see a float. */
void hx_io_fmt_double(char *buf, size_t len, double v);
/* Not collective. Make sure that bytes can be written to tmp (the temporary
 * name of path) before a writer that cannot recover from a full disk (HDF5)
 * starts: allocate them (posix_fallocate; where the file system cannot, compare
 * with its free space), then remove tmp again. HX_ERR_IO "cannot write
 * 'path': No space left on device (it needs about X MiB)". */
int hx_io_reserve_space(const char *path, const char *tmp, double bytes);
/* The text b[0..len), built in a buffer of cap bytes (len >= cap: it did
 * not fit, an internal error "WHAT too long"), written as dir/name through
 * hx_io_write_file_atomic; b is freed either way. */
int hx_io_write_text(const char *dir, const char *name, char *b, size_t len, size_t cap, const char *what);
/* Broadcast the error state (code and message) of root to every rank of comm;
 * returns the code (HX_SUCCESS when root succeeded). */
int hx_io_bcast_error(MPI_Comm comm, int root, int code);

/* Remove folder d without following a symbolic link (a link named d is
 * removed itself) and only what entry(name) claims: HX_IO_OWN_FILE removes
 * the entry (not a folder), HX_IO_OWN_SERIES recurses into it as a series
 * folder, HX_IO_OWN_KEEP leaves it; d goes when it is empty then. */
enum { HX_IO_OWN_KEEP = 0, HX_IO_OWN_FILE = 1, HX_IO_OWN_SERIES = 2 };
void hx_io_remove_own(const char *d, int (*entry)(const char *name));

/* The qsort and bsearch order of records that begin with an int64_t key
 * (an int64_t array, or structs whose first member is the key): by the key. */
static inline int hx_io_cmp_key(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

#endif
