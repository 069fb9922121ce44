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

#include <string.h>

static char *
s_find (void)
{
    static const char *const extra[] = { "/usr/local/cuda/bin", NULL };
    return kf_toolchain_which ("nvcc", extra);
}

//  The job's architecture when it is a plain sm_NN(a) name, else sm_90:
//  nothing else reaches the command line.
static const char *
s_arch (const kf_toolchain_args_t *args)
{
    if (args->arch && strncmp (args->arch, "sm_", 3) == 0
        && strlen (args->arch) < 16
        && strspn (args->arch + 3, "0123456789abf") == strlen (args->arch + 3))
        return args->arch;
    return "sm_90";
}

static const char *const s_link[] = {
    "-shared", "-cudart", "shared", "-Xcompiler", "-fPIC", "-Xlinker", "--no-undefined", NULL
};

//  The task's libraries. When there are any and PROGRAM is
//  TOOLKIT/bin/nvcc, they are in TOOLKIT/lib64, where the exec worker's
//  loader must find them too: that folder becomes the run path.
static void
s_libraries (kf_argv_t *a, const char *program, const kf_toolchain_args_t *args)
{
    size_t len = strlen (program), tail = strlen ("/bin/nvcc");
    if (args->libraries && args->libraries[0] && len > tail
        && !strcmp (program + len - tail, "/bin/nvcc")) {
        static const char *const rpath[] = { "-Xlinker", "-rpath", "-Xlinker", NULL };
        kf_argv_add_all (a, rpath);
        kf_argv_add (a, kf_argv_fmt (a, "%.*s/lib64", (int) (len - tail), program));
    }
    for (int i = 0; args->libraries && args->libraries[i]; i++)
        kf_argv_add (a, kf_argv_fmt (a, "-l%s", args->libraries[i]));
}

//  The build's line, or with PREPROCESS the line that only preprocesses.
//  With -E and the build's -arch, nvcc prints the device pass of the
//  source (__CUDA_ARCH__ defined, as the kernels are compiled), with the
//  execution-space keywords expanded to attributes by the CUDA headers;
//  the compile worker turns those back before classifying.
static int
s_line (bool preprocess, const char *program, const kf_toolchain_args_t *args,
        char **argv, size_t max, char *buf, size_t buf_size)
{
    kf_argv_t a;
    kf_argv_init (&a, argv, max, buf, buf_size);
    kf_argv_add (&a, program);
    if (preprocess)
        kf_argv_add (&a, "-E");
    kf_argv_add (&a, "-O3");
    if (!preprocess)
        kf_argv_add_all (&a, s_link);
    kf_argv_add (&a, kf_argv_fmt (&a, "-arch=%s", s_arch (args)));
    kf_argv_add (&a, kf_argv_fmt (&a, "-I%s", args->include_dir));
    kf_argv_add_output (&a, args);
    if (!preprocess)
        s_libraries (&a, program, args);
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
