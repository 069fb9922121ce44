/*  kf_toolchain.h - one compiler backend per file behind this interface.
 *
 *  A toolchain knows how to find its program, how to say which version it
 *  is (for the capabilities a worker advertises and the record of what
 *  built an artifact) and the command line that turns one kernel source
 *  into a shared object. Running the command, limits and logs are the
 *  compile handler's business, so a new backend (clang, icpx) is a table
 *  entry and one small file.
 */
#ifndef KF_TOOLCHAIN_H
#define KF_TOOLCHAIN_H

#include <stddef.h>

typedef struct {
    const char *source;      /* file name, relative to the job's directory */
    const char *output;      /* shared object to write, same directory */
    const char *include_dir; /* where kf_kernel.h is */
    const char *arch;        /* target.arch from the job, or NULL */
    const char *const *libraries; /* vendor libraries the task allows
                                     (kf_task_library_known names), NULL-
                                     terminated, or NULL: none */
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

#endif
