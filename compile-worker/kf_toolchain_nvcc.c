/*  kf_toolchain_nvcc.c - CUDA kernels built with nvcc.
 *
 *  nvcc is often not on PATH in service environments, so the standard
 *  install location is searched too. The artifact is a host shared object
 *  carrying device code for exactly the job's architecture (sm_90 unless
 *  the job names another): the exec worker that runs it advertises the
 *  same arch, and building one arch keeps compiles fast.
 *
 *  `-cudart shared` links the kernel against libcudart.so rather than the
 *  static runtime nvcc uses by default: the exec worker dlopens that same
 *  library, so harness and kernel share one runtime - the stream in
 *  kf_ctx_t, the error state the harness reads after a call, and the
 *  device pointers all belong to the runtime the kernel calls.
 *
 *  The link refuses undefined symbols, so a kernel calls nothing beyond
 *  the CUDA runtime unless its task allows a library ("libraries":
 *  cuBLAS, cuBLASLt, cuDNN): those are linked, with the toolkit's library
 *  folder as the run path, and a call into anything else fails to build
 *  with the linker naming the symbol.
 */
#include "kf_toolchain.h"

#include <stdio.h>
#include <string.h>

static char *
s_find (void)
{
    static const char *const extra[] = { "/usr/local/cuda/bin", NULL };
    return kf_toolchain_which ("nvcc", extra);
}

//  Writes "-I<dir>" and "-arch=<sm>" into BUF; *ARCH_FLAG points at the
//  second. Only a plain sm_NN(a) name reaches the command line.
static int
s_flags (const kf_toolchain_args_t *args, char *buf, size_t buf_size, char **arch_flag)
{
    const char *arch = "sm_90";
    if (args->arch && strncmp (args->arch, "sm_", 3) == 0
        && strlen (args->arch) < 16
        && strspn (args->arch + 3, "0123456789abf") == strlen (args->arch + 3))
        arch = args->arch;
    int used = snprintf (buf, buf_size, "-I%s", args->include_dir);
    if (used < 0 || (size_t) used + 1 >= buf_size)
        return -1;
    *arch_flag = buf + used + 1;
    size_t left = buf_size - (size_t) used - 1;
    if (snprintf (*arch_flag, left, "-arch=%s", arch) >= (int) left)
        return -1;
    return 0;
}

//  Appends the formatted string at *USED in BUF; returns it, or NULL
//  when it does not fit.
static char *
s_put (char *buf, size_t buf_size, size_t *used, const char *a, const char *b)
{
    size_t left = buf_size - *used;
    int n = snprintf (buf + *used, left, "%s%s", a, b);
    if (n < 0 || (size_t) n >= left)
        return NULL;
    char *at = buf + *used;
    *used += (size_t) n + 1;
    return at;
}

static int
s_command (const char *program, const kf_toolchain_args_t *args,
           char **argv, size_t max, char *buf, size_t buf_size)
{
    char *arch_flag;
    if (max < 24 || s_flags (args, buf, buf_size, &arch_flag))
        return -1;
    size_t used = (size_t) (arch_flag - buf) + strlen (arch_flag) + 1;
    size_t n = 0;
    argv[n++] = (char *) program;
    argv[n++] = "-O3";
    argv[n++] = "-shared";
    argv[n++] = "-cudart";
    argv[n++] = "shared";
    argv[n++] = "-Xcompiler";
    argv[n++] = "-fPIC";
    argv[n++] = "-Xlinker";
    argv[n++] = "--no-undefined";
    argv[n++] = arch_flag;
    argv[n++] = buf;
    argv[n++] = "-o";
    argv[n++] = (char *) args->output;
    argv[n++] = (char *) args->source;
    //  With libraries: PROGRAM is TOOLKIT/bin/nvcc, and they are in
    //  TOOLKIT/lib64, where the exec worker's loader must find them too.
    size_t len = strlen (program), tail = strlen ("/bin/nvcc");
    if (args->libraries && args->libraries[0] && len > tail
        && !strcmp (program + len - tail, "/bin/nvcc")) {
        char toolkit[200];
        snprintf (toolkit, sizeof toolkit, "%.*s", (int) (len - tail), program);
        char *rpath = s_put (buf, buf_size, &used, toolkit, "/lib64");
        if (!rpath)
            return -1;
        argv[n++] = "-Xlinker";
        argv[n++] = "-rpath";
        argv[n++] = "-Xlinker";
        argv[n++] = rpath;
    }
    for (int i = 0; args->libraries && args->libraries[i]; i++) {
        if (n + 2 >= max
            || !(argv[n++] = s_put (buf, buf_size, &used, "-l", args->libraries[i])))
            return -1;
    }
    argv[n] = NULL;
    return 0;
}

//  With -E and the build's -arch, nvcc prints the device pass of the
//  source (__CUDA_ARCH__ defined, as the kernels are compiled), with the
//  execution-space keywords expanded to attributes by the CUDA headers;
//  the compile worker turns those back before classifying.
static int
s_preprocess (const char *program, const kf_toolchain_args_t *args,
              char **argv, size_t max, char *buf, size_t buf_size)
{
    char *arch_flag;
    if (max < 12 || s_flags (args, buf, buf_size, &arch_flag))
        return -1;
    size_t n = 0;
    argv[n++] = (char *) program;
    argv[n++] = "-E";
    argv[n++] = "-O3";
    argv[n++] = arch_flag;
    argv[n++] = buf;
    argv[n++] = "-o";
    argv[n++] = (char *) args->output;
    argv[n++] = (char *) args->source;
    argv[n] = NULL;
    return 0;
}

const kf_toolchain_t kf_toolchain_nvcc = {
    .name = "nvcc",
    .language = "cuda",
    .backend = "cuda",
    .source_name = "kernel.cu",
    .find = s_find,
    .version_line = "release",
    .command = s_command,
    .preprocess = s_preprocess,
};
