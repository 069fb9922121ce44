/*  kf_toolchain_cc.c - host C kernels built with the system `cc`.
 *
 *  -march=native because the artifact runs on the machine class that
 *  built it (workers advertise arch); -shared -fPIC because the evaluator
 *  dlopens it; -lm because kernels call expf and friends.
 */
#include "kf_toolchain.h"

#include <stdio.h>
#include <stdlib.h>

static char *
s_find (void)
{
    return kf_toolchain_which ("cc", NULL);
}

static int
s_command (const char *program, const kf_toolchain_args_t *args,
           char **argv, size_t max, char *buf, size_t buf_size)
{
    if (max < 13)
        return -1;
    if (snprintf (buf, buf_size, "-I%s", args->include_dir) >= (int) buf_size)
        return -1;
    size_t n = 0;
    argv[n++] = (char *) program;
    argv[n++] = "-O3";
    argv[n++] = "-march=native";
    argv[n++] = "-std=c11";
    argv[n++] = "-shared";
    argv[n++] = "-fPIC";
    argv[n++] = buf;
    argv[n++] = "-o";
    argv[n++] = (char *) args->output;
    argv[n++] = (char *) args->source;
    argv[n++] = "-lm";
    argv[n] = NULL;
    return 0;
}

//  The build's language mode and target flags, so predefined macros
//  (__AVX2__ from -march=native, __STDC_VERSION__) pick the same branches.
static int
s_preprocess (const char *program, const kf_toolchain_args_t *args,
              char **argv, size_t max, char *buf, size_t buf_size)
{
    if (max < 10)
        return -1;
    if (snprintf (buf, buf_size, "-I%s", args->include_dir) >= (int) buf_size)
        return -1;
    size_t n = 0;
    argv[n++] = (char *) program;
    argv[n++] = "-E";
    argv[n++] = "-O3";
    argv[n++] = "-march=native";
    argv[n++] = "-std=c11";
    argv[n++] = buf;
    argv[n++] = "-o";
    argv[n++] = (char *) args->output;
    argv[n++] = (char *) args->source;
    argv[n] = NULL;
    return 0;
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
