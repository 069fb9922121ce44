/*  kf_toolchain_cc.c - host C kernels built with the system `cc`.
 *
 *  The instruction sets are the exec hosts', not this machine's: a host
 *  compile job's target.arch lists the SIMD extensions every live host
 *  exec worker reported (the coordinator's kf_prompt_host_isa), built as
 *  -march=x86-64 plus one -m flag each (common/kf_isa.c), so the kernel
 *  neither faults on an exec host that lacks an extension of the compile
 *  host nor leaves out one it has. A job without that list (no exec
 *  worker has reported one) keeps -march=native. -shared -fPIC because
 *  the evaluator dlopens it; -lm because kernels call expf and friends;
 *  -g for line tables, so the register-spill report can name the
 *  candidate's lines (kf_compile_spill.c). GCC and clang make the same
 *  code with or without -g.
 */
#include "kf_toolchain.h"
#include "kf_isa.h"

#include <stdlib.h>

static char *
s_find (void)
{
    return kf_toolchain_which ("cc", NULL);
}


//  The build's line or the line that only preprocesses: the same language
//  mode and target flags, so predefined macros (__AVX2__ from -mavx2,
//  __STDC_VERSION__) pick the same branches. The build itself writes the
//  vectoriser's report when asked (ARGS->opt_report): no second compile.
enum { S_BUILD, S_PREPROCESS };

static int
s_line (int mode, const char *program, const kf_toolchain_args_t *args,
        char **argv, size_t max, char *buf, size_t buf_size)
{
    kf_argv_t a;
    kf_argv_init (&a, argv, max, buf, buf_size);
    kf_argv_add (&a, program);
    if (mode == S_PREPROCESS)
        kf_argv_add (&a, "-E");
    const char *isa[24];
    size_t n = kf_isa_flags (args->arch, isa, sizeof isa / sizeof isa[0]);
    kf_argv_add (&a, "-O3");
    for (size_t i = 0; i < n; i++)
        kf_argv_add (&a, isa[i]);
    kf_argv_add (&a, "-std=c11");
    if (mode == S_BUILD) {
        kf_argv_add (&a, "-g");
        kf_argv_add (&a, "-shared");
        kf_argv_add (&a, "-fPIC");
    }
    if (mode == S_BUILD && args->opt_report)
        kf_argv_add (&a, kf_argv_fmt (&a, "-fopt-info-vec-optimized-missed=%s",
                                      args->opt_report));
    kf_argv_add (&a, kf_argv_fmt (&a, "-I%s", args->include_dir));
    kf_argv_add_output (&a, args);
    if (mode == S_BUILD)
        kf_argv_add (&a, "-lm");
    return kf_argv_end (&a);
}

static int
s_command (const char *program, const kf_toolchain_args_t *args,
           char **argv, size_t max, char *buf, size_t buf_size)
{
    return s_line (S_BUILD, program, args, argv, max, buf, buf_size);
}

static int
s_preprocess (const char *program, const kf_toolchain_args_t *args,
              char **argv, size_t max, char *buf, size_t buf_size)
{
    return s_line (S_PREPROCESS, program, args, argv, max, buf, buf_size);
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
