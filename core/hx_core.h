/* hexcg core: error codes and tracebacks, timers, rank-tagged logging.
 *
 * Every module depends on this header and nothing else of hexcg's. It knows
 * MPI (for the MPI error wrapper and rank tags) but no other library.
 *
 * Error convention (PETSc style): every function that can fail returns an
 * int error code (HX_SUCCESS == 0). The first failure records a message with
 * HX_CHECK / hx_error_set; each caller that propagates it with HX_CALL adds
 * one "file:line function" frame to the traceback. main() prints the message
 * once with hx_error_print(). The error state is thread-local.
 */
#ifndef HX_CORE_H
#define HX_CORE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HX_VERSION_STRING "0.1.0"

/* Error codes. HX_ERR_INPUT marks a user-input problem (bad case file, bad
 * option): the application exits with status 2 for it, 1 for the others. */
enum {
  HX_SUCCESS = 0,
  HX_ERR_ARG = 1,        /* invalid argument from a caller (a bug) */
  HX_ERR_MEM = 2,        /* allocation failed */
  HX_ERR_IO = 3,         /* file system / file format problem */
  HX_ERR_MPI = 4,        /* an MPI call failed */
  HX_ERR_CUDA = 5,       /* a CUDA call failed */
  HX_ERR_HYPRE = 6,      /* a hypre call failed */
  HX_ERR_INPUT = 7,      /* invalid user input (case file, command line) */
  HX_ERR_NOT_IMPL = 8,   /* feature not implemented yet */
  HX_ERR_NO_DEVICE = 9,  /* backend not compiled in or no usable device */
  HX_ERR_NUMERIC = 10,   /* numerical failure (NaN, breakdown in setup) */
  HX_ERR_INTERNAL = 11,  /* an invariant broke (a bug) */
  HX_ERR_LIB = 12,       /* another library (LAPACK, HDF5, libyaml...) failed */
  /* the object cannot do this in place (hx_pc_set_shift): the caller takes
   * the general way (a rebuild) */
  HX_ERR_UNSUPPORTED = 13
};

/* Human-readable name of an error code ("HX_ERR_IO"). */
const char *hx_error_name(int code);

/* Record a new error with a printf-style message; resets the traceback and
 * returns code. Use through HX_CHECK / HX_ERROR. */
int hx_error_set(const char *file, int line, const char *func, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Append one frame to the traceback of the current error; returns code. If
 * no message was recorded (a code returned without HX_CHECK), one is made. */
int hx_error_trace(const char *file, int line, const char *func, int code);
/* Message of the current error of this thread ("" if none). */
const char *hx_error_message(void);
/* Code of the current error of this thread (HX_SUCCESS if none). */
int hx_error_code(void);
/* Forget the current error of this thread. */
void hx_error_clear(void);
/* Print "[rank R] error: MESSAGE" and, if traceback != 0, the frames. */
void hx_error_print(FILE *out, int rank, int traceback);

/* Carrying an error across threads. The error state is thread-local, so an
 * error raised in a worker thread (a coarse-solve thread, a queue's host
 * thread) is invisible to the thread that joins it. The worker captures its
 * state before it exits:
 *     hx_error_state st;  ... ierr = work(); if (ierr) hx_error_capture(&st);
 * and the joining thread re-raises it, which installs the message and the
 * worker's traceback as this thread's current error, adds a frame marking the
 * thread crossing and returns the worker's code:
 *     if (st.code) return HX_ERROR_RERAISE(&st);
 * The struct is plain data (about 10 KB): copy it, keep it in a job struct. */
#define HX_ERROR_MSG_LEN 2048
#define HX_ERROR_MAX_FRAMES 32
#define HX_ERROR_FRAME_LEN 256
typedef struct {
  int code; /* HX_SUCCESS when no error was captured */
  char msg[HX_ERROR_MSG_LEN];
  int nframes;
  char frames[HX_ERROR_MAX_FRAMES][HX_ERROR_FRAME_LEN];
} hx_error_state;
/* Copy this thread's current error state into *st (code HX_SUCCESS if none). */
void hx_error_capture(hx_error_state *st);
/* Make *st this thread's current error, append a "file:line func() (error
 * re-raised from another thread)" frame and return st->code (HX_SUCCESS, and
 * nothing changes, if st holds no error). */
int hx_error_reraise(const hx_error_state *st, const char *file, int line, const char *func);
#define HX_ERROR_RERAISE(st) hx_error_reraise((st), __FILE__, __LINE__, __func__)

#define HX_ERROR(code, ...) hx_error_set(__FILE__, __LINE__, __func__, (code), __VA_ARGS__)

/* Return an error with a message unless cond holds. */
#define HX_CHECK(cond, code, ...)                                             \
  do {                                                                        \
    if (!(cond)) return hx_error_set(__FILE__, __LINE__, __func__, (code), __VA_ARGS__); \
  } while (0)

/* Call a hexcg function; on failure add a traceback frame and return. */
#define HX_CALL(expr)                                                         \
  do {                                                                        \
    int hx_ierr_ = (expr);                                                    \
    if (hx_ierr_ != HX_SUCCESS) return hx_error_trace(__FILE__, __LINE__, __func__, hx_ierr_); \
  } while (0)

/* Call MPI; on failure record the MPI error string and return HX_ERR_MPI. */
#define HX_MPI(expr)                                                          \
  do {                                                                        \
    int hx_mpierr_ = (expr);                                                  \
    if (hx_mpierr_ != MPI_SUCCESS) return hx_error_mpi(__FILE__, __LINE__, __func__, hx_mpierr_, #expr); \
  } while (0)
int hx_error_mpi(const char *file, int line, const char *func, int mpierr, const char *expr);
/* Collective: if any rank has code != 0, every rank returns the error (code
 * and message) of the lowest such rank; HX_SUCCESS everywhere otherwise. */
int hx_error_agree(MPI_Comm comm, int code);

/* Collective reductions of figures for reports (core/reduce.c): v[0..n)
 * replaced by its maximum over the ranks of comm; by its sum; by the values
 * of the rank with the largest key (ties: the lowest rank; *rank that rank,
 * may be NULL): one rank's times add up where per-phase maxima need not. */
int hx_reduce_max(MPI_Comm comm, double *v, int n);
int hx_reduce_sum(MPI_Comm comm, double *v, int n);
int hx_reduce_slowest(MPI_Comm comm, double key, double *v, int n, int *rank);

/* Allocation helpers: zero-initialised, error on failure (n may be 0). */
int hx_calloc(size_t n, size_t size, void *pptr);
int hx_realloc(size_t n, size_t size, void *pptr);
/* Free *pptr (a T**) and set it to NULL. NULL-safe. */
void hx_free_host(void *pptr);
#define HX_ALLOC(ptr, n) hx_calloc((size_t)(n), sizeof(**(ptr)), (ptr))

/* ------------------------------------------------------------ 1D basis */
/* Gauss-Lobatto-Legendre points x[0..n-1] (ascending, in [-1, 1]) and
 * weights w[0..n-1] for n = p+1 >= 2 points (p = 1..31), accurate to a few
 * ulps (Newton on (1-x^2) P'_p(x) from Chebyshev-Gauss-Lobatto guesses). */
int hx_gll(int n, double *x, double *w);
/* Derivative matrix of the Lagrange basis on the n nodes x: D[i*n + j] =
 * l_j'(x_i) (row-major), via barycentric weights. */
int hx_lagrange_deriv(int n, const double *x, double *D);
/* Interpolation matrix from the n nodes x to the m points y:
 * I[i*n + j] = l_j(y_i) (row-major). */
int hx_lagrange_interp(int n, const double *x, int m, const double *y, double *I);
/* Legendre polynomial P_k(t) (three-term recurrence). */
double hx_legendre(int k, double t);

/* ------------------------------------------------------------ limits and defaults */
/* Polynomial orders hexcg supports (one place for the range). */
#define HX_ORDER_MIN 1
#define HX_ORDER_MAX 15
/* Default iteration limit of the Krylov solvers and of a case file. */
#define HX_MAX_ITERATIONS_DEFAULT 1000

/* ------------------------------------------------------------ the tune table */
/* Every environment variable hexcg reads is a row of one table (core/tune.c):
 * its name, values, default, what it does and why it exists. They change how
 * a run computes (an A/B switch of a kernel or an algorithm, a test hook, a
 * limit of the machine), never what: what a run computes is in the case
 * file. `hexcg keys --tune` prints the table; docs/developer.md "Tuning
 * switches" lists it (tests/app/check_tune.py checks both against the
 * sources). */
typedef struct {
  const char *name, *values, *deflt, *what, *why;
} hx_tune_row;
const hx_tune_row *hx_tune_rows(int *n);
void hx_tune_print(FILE *out);
/* getenv(name) for a name of the table; an unlisted name is a programming
 * error: a message on stderr and NULL. */
const char *hx_env(const char *name);
/* 1 if the switch is set to "0" (turns an optimisation off), resp. "1". */
int hx_env_off(const char *name);
int hx_env_on(const char *name);
/* The Python interpreter every script of the project runs under (one rule,
 * the same as scripts/python.sh for the shell scripts): $HEXCG_PYTHON if set
 * and not empty, else /usr/bin/python3 if it is executable (Debian's, with
 * python3-matplotlib, -numpy, -h5py, -yaml), else "python3" from PATH.
 * Used by hexcg compare --plot and hexcg bench stream's plot. */
const char *hx_python(void);

/* ------------------------------------------------------------ option trees */
/* A YAML-like option subtree handed from io/ (which parses the case file) to
 * the module that owns those options and validates them (precond/ for the
 * preconditioner: mapping). Plain data with the source position of every
 * node, so a module's messages still read "case.yaml:LINE:COL: ..." or
 * "--set a.b=v: ...". Host memory, not thread-safe. */
typedef enum { HX_OPT_SCALAR = 0, HX_OPT_LIST = 1, HX_OPT_MAP = 2 } hx_opt_kind;
typedef struct hx_opt_s {
  hx_opt_kind kind;
  char *key;    /* the key in the parent map (NULL for the root and list items) */
  char *value;  /* scalar text (NULL for lists and maps) */
  char *where;  /* "case.yaml:12:5" or "--set preconditioner.type=asm" */
  int quoted;   /* scalar written in quotes */
  int n;
  struct hx_opt_s **items; /* map entries (each with key) or list items */
} hx_opt;

/* A new node (value only for scalars; where may be NULL = "<default>"). */
hx_opt *hx_opt_new(hx_opt_kind kind, const char *value, const char *where);
/* Append val to a map under key (takes val), or to a list (key NULL). */
int hx_opt_push(hx_opt *parent, const char *key, hx_opt *val);
/* The entry of map under key, or NULL (also when map is NULL or not a map). */
hx_opt *hx_opt_get(const hx_opt *map, const char *key);
/* Remove (and free) map[key]; returns 1 if it was there, else 0. */
int hx_opt_remove(hx_opt *map, const char *key);
/* Deep copy (NULL for NULL). */
hx_opt *hx_opt_copy(const hx_opt *o);
void hx_opt_free(hx_opt **o);
/* HX_ERR_INPUT "WHERE: message" at node o. */
int hx_opt_error(const hx_opt *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* ------------------------------------------------------------ option tables */
/* One option system for the case file, the preconditioner options and
 * --set: each module describes an option group by a table of rows (key,
 * type, range or allowed names, default, one-line help, where the value
 * goes), and the readers below apply one rule per type to every group (the
 * case file's scalars in io/, the preconditioner: tree in precond/). The
 * effective case and `hexcg keys` are written from the same tables;
 * tests/app/check_keys_doc.py checks them against docs/case-format.md.
 *
 * The rules: bool true|True|TRUE|false|False|FALSE; int decimal, within
 * [min, max]; double a decimal number (no hex, nan or inf), within the range
 * (open ends by flag); enum one of names (else "did you mean" and the
 * allowed list); text non-empty. An empty unquoted value is "no value given". */
typedef enum {
  HX_OT_BOOL,   /* int 0/1 (HX_OPT_AUTO: or "auto", stored as auto_value) */
  HX_OT_INT,    /* int */
  HX_OT_DOUBLE, /* double */
  HX_OT_ENUM,   /* int: index into names */
  HX_OT_TEXT,   /* char * (owned by the destination: freed and replaced) */
  HX_OT_GROUP,  /* a mapping of its own: the rows of sub */
  HX_OT_OTHER   /* read by the module's own code (lists, expressions, ...); what says what it is */
} hx_opt_type;

#define HX_OPT_REQUIRED 1 /* no default: absent is an error */
#define HX_OPT_MIN_OPEN 2 /* double: min itself is out of range */
#define HX_OPT_MAX_OPEN 4 /* double: max itself is out of range */
#define HX_OPT_AUTO 8     /* bool: "auto" allowed too */
#define HX_OPT_NOWHERE ((size_t)-1)

struct hx_opt_group;
typedef struct {
  const char *key; /* key within its group */
  hx_opt_type type;
  size_t offset;   /* where the value goes: offsetof in the group's struct, or HX_OPT_NOWHERE */
  double min, max; /* INT, DOUBLE: the range */
  int flags;
  const char *const *names; /* ENUM: the names in enum order */
  int nnames;
  const char *def;                /* default as case-file text; NULL: none (or the struct's own default) */
  const char *help;               /* one line, for hexcg keys */
  const struct hx_opt_group *sub; /* GROUP (OTHER may name the keys of its mapping form) */
  const char *what;               /* OTHER: the value in words ("[nx, ny, nz] or one integer") */
  int auto_value;                 /* BOOL with HX_OPT_AUTO: what "auto" stores */
} hx_opt_key;

typedef struct hx_opt_group {
  const char *path; /* dotted path of the mapping ("mesh", "preconditioner.coarse"; "" = top) */
  const char *when; /* NULL, or when the group applies ("type: asm"), for hexcg keys */
  const hx_opt_key *keys;
  int n;
} hx_opt_group;

/* A value as a reader sees it: kind, scalar text (NULL for lists and
 * maps), written in quotes, and its position ("case.yaml:3:5", "--set a=b"). */
typedef struct {
  hx_opt_kind kind;
  const char *text;
  int quoted;
  const char *where;
} hx_opt_val;

/* The row of g for key, or NULL. */
const hx_opt_key *hx_opt_group_find(const hx_opt_group *g, const char *key);
/* An unknown key: HX_ERR_INPUT "WHERE: unknown key 'k' in PATH (did you mean
 * 'x'?); allowed keys: a, b" (no " in PATH" at the top level). */
int hx_opt_unknown_key(const hx_opt_group *g, const char *key, const char *where);
/* Read v by the rule of k's type into dst (int, double or char * as the type
 * says; OTHER and GROUP are the caller's). path names the key in messages:
 * HX_ERR_INPUT "WHERE: PATH: message". */
int hx_opt_parse(const hx_opt_key *k, const char *path, const hx_opt_val *v, void *dst);
/* 1 and *d if s is a number by the DOUBLE rule (decimal, finite), else 0. */
int hx_opt_is_number(const char *s, double *d);
/* Read row k's default text into dst (k->def must be set). */
int hx_opt_parse_default(const hx_opt_key *k, void *dst);
/* The value at src (of k's type) as case-file text that reads back to the
 * same value: doubles as the shortest exact text with a '.' (1.0, 1.0e-10),
 * enums by name, bools true/false (or auto). */
void hx_opt_format(const hx_opt_key *k, const void *src, char *buf, size_t len);
/* A double as the shortest text that reads back exactly, with a '.' in the
 * mantissa (YAML 1.1 readers then see a float); .nan/.inf/-.inf. */
void hx_fmt_double(char *buf, size_t len, double v);
/* The type of k in words, with its range or names ("integer in 1..15",
 * "one of: cpu, cuda"), into buf. */
void hx_opt_describe(const hx_opt_key *k, char *buf, size_t len);

/* The option tree map read against group g into the struct at base: every
 * key must be a row (else hx_opt_unknown_key); BOOL/INT/DOUBLE/ENUM/TEXT rows
 * present are read (path: g->path.key), absent ones take their default text
 * (rows with def) or keep what base holds; HX_OPT_REQUIRED rows must be
 * there. GROUP and OTHER rows are left to the caller. map NULL: defaults
 * only. A map that is not a mapping is an error. */
int hx_opt_read_group(const hx_opt *map, const hx_opt_group *g, void *base);
/* Write every BOOL/INT/DOUBLE/ENUM row of g from base into map (hx_opt_set):
 * the defaults made explicit for the effective case. */
int hx_opt_write_group(hx_opt *map, const hx_opt_group *g, const void *base);
/* Print the rows of g from row first on: "PATH.key  TYPE, default D (WHEN)"
 * and the help on the next line (names_only: the dotted keys alone, one per
 * line). base (may be NULL) holds the defaults of rows without def text.
 * Sub-groups are printed by their own call. */
void hx_opt_print_keys(const hx_opt_group *g, const void *base, int first, int names_only, FILE *out);
/* Set map[key] to the scalar text value (replacing an existing entry, or
 * adding one with where "<default>"): makes defaults explicit so that the
 * effective case lists every key. Creates map entries as needed for a
 * dotted key ("coarse.cycles"). */
int hx_opt_set(hx_opt *map, const char *key, const char *value);
/* The submap of map at key, created (as a default) when absent. */
int hx_opt_submap(hx_opt *map, const char *key, hx_opt **sub);
/* Write o as block YAML at the given indent (maps and lists nested). */
void hx_opt_write_yaml(const hx_opt *o, int indent, FILE *out);

/* Levenshtein distance with transpositions (for "did you mean"), and the
 * closest of names[0..n-1] to s if close enough, else NULL. */
int hx_edit_distance(const char *a, const char *b);
const char *hx_closest(const char *s, const char *const *names, int n);

/* ------------------------------------------------------------ timers */
/* Categories used across the code; the run summary reports each. */
typedef enum {
  HX_T_TOTAL = 0,
  HX_T_SETUP,
  HX_T_MESH,
  HX_T_OPERATOR,
  HX_T_PRECOND,
  HX_T_PRECOND_FINE,
  HX_T_PRECOND_COARSE,
  HX_T_VECTOR,
  HX_T_REDUCTION,
  HX_T_EXCHANGE,
  HX_T_IO,
  HX_T_SOLVE,
  HX_T_NUM
} hx_timer_id;

/* Wall-clock seconds from a monotonic clock. */
double hx_wtime(void);

/* Log events (PETSc's log events): the one timing system of hexcg. An event
 * has a name and accumulates, per process, the number of times it ran, the
 * seconds, and the bytes moved and flops done that the caller reports (model
 * counts). Events are registered by name (the same name gives the same
 * event, from any module); begin/end pairs may nest across events and run
 * in several threads (each thread keeps its own begin stamps; the sums are
 * guarded). The categories of hx_timer_id are the first events. */
typedef int hx_log_event;
typedef struct {
  const char *name;
  long count;
  double seconds, bytes, flops;
} hx_log_event_info;
/* Register (or look up) the event called name. Thread-safe. */
int hx_log_event_register(const char *name, hx_log_event *ev);
void hx_log_event_begin(hx_log_event ev);
/* End the interval begun by this thread; add bytes and flops (may be 0). */
void hx_log_event_end(hx_log_event ev, double bytes, double flops);
/* Add an interval measured elsewhere (e.g. by device events). */
void hx_log_event_add(hx_log_event ev, double seconds, double bytes, double flops);
int hx_log_event_num(void);
/* 0 for an unknown id (info zeroed). */
int hx_log_event_get(hx_log_event ev, hx_log_event_info *info);
void hx_log_event_reset_all(void);
/* Collective over comm. Rank 0 prints one line per event that ran on any
 * rank: count, max and min seconds over ranks, the max/min ratio, and GB/s
 * and GFLOP/s from the summed bytes/flops over the max seconds. */
int hx_log_event_view(MPI_Comm comm, FILE *out);

/* Scoped timing events (core/event.c): the per-object statistics of a
 * preconditioner, a level, a coarse solve. A slot, a member of the object,
 * is declared once (hx_ev_slot_init: zeroed, optionally tied to the log
 * event of that name) and accumulates the count, seconds, and the bytes
 * and flops (model counts, 0 where unknown) of every interval closed on it;
 * the object's figures (seconds per apply, GB/s, GFLOP/s) are derived from
 * its slots. An interval is opened and closed in scope:
 *
 *   hx_ev e = hx_ev_begin(&L->ev_smooth);
 *   ... work ...
 *   hx_ev_end(&e, bytes, flops);
 *
 * The open event lives on the caller's stack, so intervals nest freely
 * (on the same slot too). No allocation and no lock: a slot has one writer
 * at a time (a thread of its own writes its own slot, or measures and the
 * owner adds with hx_ev_add after the join); a slot tied to a log event
 * also feeds that event (which takes the log's lock) on each close. A
 * zeroed slot is valid (tied to no log event). Host only. */
typedef struct {
  long count;
  double seconds, bytes, flops;
  int log; /* the log event it also feeds, plus 1 (0: none) */
} hx_ev_slot;
typedef struct {
  hx_ev_slot *slot;
  double t0;
} hx_ev;
/* Zero *s; with log_name (may be NULL) tie it to that log event
 * (hx_log_event_register: hexcg run --log-view lists it). */
int hx_ev_slot_init(hx_ev_slot *s, const char *log_name);
/* Open an interval on slot s. */
static inline hx_ev hx_ev_begin(hx_ev_slot *s) {
  hx_ev e;
  e.slot = s, e.t0 = hx_wtime();
  return e;
}
/* Close e: its slot gains one count, the seconds since hx_ev_begin, bytes
 * and flops. Returns the interval's seconds. */
double hx_ev_end(hx_ev *e, double bytes, double flops);
/* Add an interval measured elsewhere (in a thread that had no access to
 * the slot, or by device events). */
void hx_ev_add(hx_ev_slot *s, double seconds, double bytes, double flops);
/* n intervals measured together (a block apply of n columns): the count
 * gains n, the sums the totals given (n <= 0: nothing). */
void hx_ev_add_n(hx_ev_slot *s, long n, double seconds, double bytes, double flops);
/* Zero the sums, keep the log tie. */
void hx_ev_reset(hx_ev_slot *s);
/* Derived figures: seconds / n (per apply when n counts the applies; 0
 * for n <= 0); GB/s and GFLOP/s of the slot's bytes and flops over its
 * seconds (0 when either is 0). */
double hx_ev_per(const hx_ev_slot *s, long n);
double hx_ev_gbs(const hx_ev_slot *s);
double hx_ev_gflops(const hx_ev_slot *s);
/* Collective over comm: each of s[0..n-1]'s seconds becomes the max over
 * the ranks (a setup figure is the slowest rank's). */
int hx_ev_max_seconds(MPI_Comm comm, hx_ev_slot *s, int n);

/* Name of a category ("operator"). */
const char *hx_timer_name(hx_timer_id id);
/* The fixed categories as events (hx_timer_id i is event i): start/stop
 * pairs per thread; get/count read the event. */
void hx_timer_start(hx_timer_id id);
void hx_timer_stop(hx_timer_id id);
double hx_timer_get(hx_timer_id id);
long hx_timer_count(hx_timer_id id);
void hx_timer_reset_all(void);
/* Peak resident memory of this process in bytes (0 if unknown). */
size_t hx_peak_rss_bytes(void);

/* ------------------------------------------------------------ geometry range */
/* Supported mesh coordinates |x|, |y|, |z| <= HX_MESH_COORD_MAX and element
 * edges >= HX_MESH_EDGE_MIN: beyond them the geometric factors (powers of
 * the element size up to 4) and the norms of the load vector over- or
 * underflow. Checked on every mesh (mesh/) and on mesh.extent (io/). */
#define HX_MESH_COORD_MAX 1e30
#define HX_MESH_EDGE_MIN 1e-30

/* ------------------------------------------------------------ memory estimates */
/* What a mesh or a solve will need, estimated before anything is allocated,
 * so that a size that cannot fit is refused as input (docs/case-format.md,
 * "Memory"; measured on the CPU backend, rounded down: a lower bound, so a
 * refused size would not have fit). Per element of the global mesh that rank
 * 0 builds (hex8; hex27 adds 24 bytes per extra node), per element of a
 * rank's part of the mesh, and per GLL node ((p+1)^3 per element) of a rank's
 * data: a Jacobi-PCG solve and hexcg mesh (GLL ids, Jacobian check). What a
 * preconditioner adds is precond/'s estimate (hx_pc_options_mem_per_node). */
#define HX_MEM_MESH_GLOBAL_ELEM 1000.0
#define HX_MEM_MESH_LOCAL_ELEM 600.0
#define HX_MEM_RUN_NODE 180.0
#define HX_MEM_MESHCMD_NODE 6.0

/* The estimate of hexcg run's peak per rank (hx_mem_run_bytes), measured
 * (the largest ru_maxrss of the ranks, docs/log/performance.md "Memory") rather
 * than rounded down: a fixed part per rank (MPI, hypre, HDF5, the program)
 * and, in core/memory.c, bytes per L entry, per G entry and per time-loop
 * array. */
#define HX_MEM_RUN_BASE (30.0 * 1048576.0)

/* The estimated peak of one rank of hexcg run holding El elements of order
 * p (a balanced part of a compact mesh: its G entries El p^3 plus the
 * part's surface), with pc_node_bytes the preconditioner's bytes per L
 * entry (hx_pc_options_mem_per_node); a time loop (levels > 0: BDF levels,
 * proj: projection vectors) adds its arrays. Without the mesh (that is
 * HX_MEM_MESH_*). */
double hx_mem_run_bytes(double El, int p, double pc_node_bytes, int levels, int proj);

/* "1.9 TiB", "512 MiB" (binary units) into buf. */
void hx_mem_format(double bytes, char *buf, size_t len);

/* The allocator set up for a solver's setup, whose arrays are allocated,
 * filled and freed by the thousand. glibc maps every allocation above its
 * mmap threshold and unmaps it at free; it raises that threshold to the
 * largest block freed (up to 32 MiB), after which freed arrays stay in a
 * heap that fragments: the peak of a run grows. Sets glibc's mmap threshold
 * to HX_MALLOC_MMAP_THRESHOLD (fixed: arrays above it are mapped and given
 * back at free) and its trim threshold to HX_MALLOC_TRIM_THRESHOLD (the
 * smaller arrays' freed memory is kept for the next ones). Measured
 * (docs/log/performance.md "The allocator's settings"): the peak 4-6 % below
 * glibc's defaults (and 6-11 % below a 32 MiB threshold), the time the same.
 * Call once, first thing in main. Returns 1 if set, 0 if left alone:
 * HEXCG_MALLOC_TUNE=0, the user's own MALLOC_MMAP_THRESHOLD_ /
 * MALLOC_TRIM_THRESHOLD_ / MALLOC_TOP_PAD_ or glibc.malloc tunables, a
 * sanitizer's allocator, not glibc. hx_malloc_tune_info(): which, in words. */
#define HX_MALLOC_MMAP_THRESHOLD (4 << 20)
#define HX_MALLOC_TRIM_THRESHOLD (1 << 30)
int hx_malloc_tune(void);
const char *hx_malloc_tune_info(void);
/* Not collective. Bytes this node can still give: HEXCG_MEM_AVAILABLE when
 * set (a size: 64G, 512M, bytes; "unlimited" or "off": INFINITY, no check),
 * else the smaller of MemAvailable (/proc/meminfo) and what the control
 * group's memory limit leaves; < 0 if unknown. source (may be NULL) names
 * where the figure came from. */
double hx_mem_available(char *source, size_t len);
typedef struct {
  int fits;        /* 1: every node can hold its ranks' share (or its memory is unknown) */
  double need;     /* bytes needed on the node worst off (largest need / available) */
  double avail;    /* bytes available there (< 0: unknown) */
  int node_ranks;  /* ranks on that node */
  int has_rank0;   /* that node holds rank 0 */
  char source[64]; /* where avail came from (hx_mem_available) */
} hx_mem_fit_info;
/* Collective over comm. Each rank needs rank_bytes, rank 0 rank0_bytes
 * more; the ranks sharing a node (MPI_COMM_TYPE_SHARED) add up and are
 * compared with that node's hx_mem_available. Same info on every rank. */
int hx_mem_fit(MPI_Comm comm, double rank0_bytes, double rank_bytes, hx_mem_fit_info *info);
/* "need about X of memory on the node of rank 0 (the global mesh on rank 0:
 * G, R ranks x P), more than the Y available there (SOURCE)" into buf, for
 * a message about a size that does not fit; rank_bytes_max: the largest
 * rank_bytes. */
void hx_mem_fit_describe(const hx_mem_fit_info *fi, double rank0_bytes, double rank_bytes_max, char *buf,
                         size_t len);

/* ------------------------------------------------------------ logging */
/* HX_LOG_SILENT: not even warnings (the library at verbosity 0; hexcg run's
 * --quiet is HX_LOG_QUIET: errors and warnings on stderr, nothing on stdout) */
typedef enum { HX_LOG_SILENT = -1, HX_LOG_QUIET = 0, HX_LOG_NORMAL = 1, HX_LOG_VERBOSE = 2 } hx_log_level;
/* Set the rank used for tags and rank-0 printing, and the verbosity. */
void hx_log_init(int rank, hx_log_level level);
hx_log_level hx_log_get_level(void);
int hx_log_rank(void);
/* printf to stdout on rank 0 if the level is at most the configured one. */
void hx_log(hx_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* printf to stderr from any rank, tagged "[rank R] warning: "; nothing at
 * HX_LOG_SILENT (the library prints nothing unless its verbosity asks). */
void hx_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---------------------------------------------------------------- signals */
/* SIGINT, SIGTERM and SIGUSR1 (Slurm's warning before a time limit) are
 * recorded by the handlers hx_signals_install sets (the app calls it once at
 * start-up; it also ignores SIGPIPE, so a closed stdout gives EPIPE instead
 * of killing the run); a second one ends the process at once, except the
 * first one's number again within 1 s (one signal that reached the rank by
 * two paths: `timeout` and mpiexec, a terminal and mpiexec; core/signal.c).
 * The solvers
 * poll hx_signal_pending (the signal number, 0 if none) inside their existing
 * reductions, so every rank stops at the same iteration (docs/reliability.md). */
void hx_signals_install(void);
int hx_signal_pending(void);
/* 1: hx_signal_pending answers 0 (a signal that arrives is still recorded,
 * a second one still ends the process); 0: as before. The time loop
 * finishes an interrupted step this way (docs/time.md). */
void hx_signals_defer(int on);
const char *hx_signal_name(int sig); /* "SIGTERM", ... */
/* how many deliveries were ignored as the first signal's echo (above) */
int hx_signal_echoes(void);

/* ------------------------------------------------------------ threads */
/* OpenMP threads per rank. Without OMP_NUM_THREADS, the cores of a node
 * shared among its ranks (the OpenMP default, every rank every core,
 * oversubscribes the node as soon as two ranks run on it: spinning barriers
 * cost 20-60x the work). A positive OMP_NUM_THREADS (the first of a nested
 * list "4,2") is taken unless ranks x threads exceed the node's cores; then,
 * and for anything else, the share, with a warning in warn (rank 0; "" when
 * none; len bytes). HEXCG_OVERSUBSCRIBE=1 keeps an oversubscribing value.
 * Returns the count (1 without OpenMP). Collective (node communicator). */
int hx_threads_default(MPI_Comm comm, char *warn, size_t len);

#ifdef __cplusplus
}
#endif
#endif
