/*  kf_toolchain_cc.c - host C kernels built with the system `cc`.
 *
 *  -march=native because the artifact runs on the machine class that
 *  built it (workers advertise arch); -shared -fPIC because the evaluator
 *  dlopens it; -lm because kernels call expf and friends.
 */
#include "kf_toolchain.h"

#include <stdlib.h>

static char *
s_find (void)
{
    return kf_toolchain_which ("cc", NULL);
}

static const char *const s_flags[] = { "-O3", "-march=native", "-std=c11", NULL };

//  The build's line, or with PREPROCESS the line that only preprocesses:
//  the same language mode and target flags, so predefined macros
//  (__AVX2__ from -march=native, __STDC_VERSION__) pick the same branches.
static int
s_line (bool preprocess, const char *program, const kf_toolchain_args_t *args,
        char **argv, size_t max, char *buf, size_t buf_size)
{
    kf_argv_t a;
    kf_argv_init (&a, argv, max, buf, buf_size);
    kf_argv_add (&a, program);
    if (preprocess)
        kf_argv_add (&a, "-E");
    kf_argv_add_all (&a, s_flags);
    if (!preprocess) {
        kf_argv_add (&a, "-shared");
        kf_argv_add (&a, "-fPIC");
    }
    kf_argv_add (&a, kf_argv_fmt (&a, "-I%s", args->include_dir));
    kf_argv_add_output (&a, args);
    if (!preprocess)
        kf_argv_add (&a, "-lm");
    return kf_argv_end (&a);
}

static int
s_command (const char *program, const kf_toolchain_args_t *args,
           char **argv, size_t max, char *buf, size_t buf_size)
{
    return s_line (false, program, args, argv, max, buf, buf_size);
}

static int
s_preprocess (const char *program, const kf_toolchain_args_t *args,
              char **argv, size_t max, char *buf, size_t buf_size)
{
    return s_line (true, program, args, argv, max, buf, buf_size);
}

const kf_toolchain_t kf_toolchain_cc = {
    .name = "cc",
    .language = "c",
    .backend = "host",
    .source_name = "kernel.c",
    .find = s_find,
    .version_line = NULL,
    .command = s_command,
    .preprocess = s_preprocess,
};
