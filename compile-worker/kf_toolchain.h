/*  kf_toolchain.h - one compiler backend per file behind this interface.
 *
 *  A toolchain knows how to find its program, how to say which version it
 *  is (for the capabilities a worker advertises and the record of what
 *  built an artifact) and the command line that turns one kernel source
 *  into a shared object, written with the kf_argv_t builder below.
 *  Running the command, limits and logs are the compile handler's
 *  business, so a new backend (clang, icpx) is a table entry and one
 *  small file (CONTRIBUTING.md).
 */
#ifndef KF_TOOLCHAIN_H
#define KF_TOOLCHAIN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *source;      /* file name, relative to the job's directory */
    const char *output;      /* shared object to write, same directory */
    const char *include_dir; /* where kf_kernel.h is */
    const char *arch;        /* target.arch from the job, or NULL */
    const char *const *libraries; /* vendor libraries the task allows
                                     (kf_task_library_known names), NULL-
                                     terminated, or NULL: none */
    const char *opt_report;  /* file the build writes the vectoriser's
                                report to (GCC's -fopt-info-vec-optimized-
                                missed), same directory; NULL: none */
} kf_toolchain_args_t;

typedef struct {
    const char *name;        /* "cc", "nvcc": key in capabilities.toolchains */
    const char *language;    /* source language it compiles */
    const char *backend;     /* backend the artifact runs on */
    const char *source_name; /* file name the source is written to */
    /* Returns the program's path (caller frees), or NULL if not installed. */
    char *(*find) (void);
    /* Substring that picks the version line of `PROGRAM --version`;
     * NULL takes the first line. */
    const char *version_line;
    /* Fills ARGV (MAX slots, NULL-terminated) for compiling ARGS with
     * PROGRAM; strings it formats live in BUF. Returns 0 or -1. */
    int (*command) (const char *program, const kf_toolchain_args_t *args,
                    char **argv, size_t max, char *buf, size_t buf_size);
    /* Optional (NULL: the toolchain cannot say): as command, but the
     * line that only preprocesses ARGS->source into ARGS->output, keeping
     * the line markers, with the same include path and target as a build.
     * The compile worker classifies what it prints (the code the build
     * really compiled, #if branches chosen) for the archive coordinates. */
    int (*preprocess) (const char *program, const kf_toolchain_args_t *args,
                       char **argv, size_t max, char *buf, size_t buf_size);
} kf_toolchain_t;

extern const kf_toolchain_t kf_toolchain_cc;
extern const kf_toolchain_t kf_toolchain_nvcc;

/* The toolchain for LANGUAGE ("c", "cuda"), or NULL. */
const kf_toolchain_t *kf_toolchain_for_language (const char *language);

/* All known toolchains, NULL-terminated, for capability reports. */
const kf_toolchain_t *const *kf_toolchain_all (void);

/* Path of NAME in PATH, else in the first of EXTRA_DIRS (NULL-terminated,
 * may be NULL) that holds it; caller frees; NULL when nowhere. */
char *kf_toolchain_which (const char *name, const char *const *extra_dirs);

/* The version line of TC, or NULL when it is not installed. Caller frees. */
char *kf_toolchain_version (const kf_toolchain_t *tc);

/* A command line being filled, for the toolchains' command and
 * preprocess functions: ARGV's MAX slots, the strings it formats kept in
 * BUF. Whatever does not fit marks it failed, and kf_argv_end says so, so
 * a toolchain writes its line without a check after every argument. */
typedef struct {
    char **argv;
    size_t max, n;
    char *buf;
    size_t buf_size, used;
    bool failed;
} kf_argv_t;

void kf_argv_init (kf_argv_t *a, char **argv, size_t max, char *buf, size_t buf_size);

/* Appends ARG (borrowed: it must outlive the command); NULL marks A
 * failed. */
void kf_argv_add (kf_argv_t *a, const char *arg);

/* Appends each of ARGS, a NULL-ended list. */
void kf_argv_add_all (kf_argv_t *a, const char *const *args);

/* A string formatted into A's buffer (not appended), or NULL when it
 * does not fit; pass it to kf_argv_add. */
char *kf_argv_fmt (kf_argv_t *a, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* "-o OUTPUT SOURCE", the tail of most compilers' lines. */
void kf_argv_add_output (kf_argv_t *a, const kf_toolchain_args_t *args);

/* NULL-ends the vector. Returns 0, or -1 when anything did not fit. */
int kf_argv_end (kf_argv_t *a);

#endif
