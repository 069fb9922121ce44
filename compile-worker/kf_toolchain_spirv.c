/*  kf_toolchain_spirv.c - OpenCL C kernels for Level Zero, built to SPIR-V.
 *
 *  Two programs, both Debian packages: clang compiles OpenCL C for the
 *  spir64 target to LLVM bitcode, and llvm-spirv (the Khronos translator,
 *  matched to clang's LLVM) turns the bitcode into SPIR-V, the form the
 *  Level Zero loader's drivers take (zeModuleCreate, IL_SPIRV). There is
 *  no host code in such a candidate (docs/intel.md, "The contract"): the
 *  exec worker launches its kernels as the source's kf-launch lines say,
 *  so the artifact carries the source beside the SPIR-V, in a small
 *  bundle:
 *
 *      KF-SPIRV 1\n
 *      define NAME=VALUE\n     one per -D flag of this build (tuning)
 *      source BYTES\n
 *      spirv BYTES\n
 *      \n
 *      <source><spirv>
 *
 *  The compile handler runs one program per build, so the two steps and
 *  the bundling are a fixed sh script; the paths of both programs and the
 *  -D flags are its arguments, which keeps them in the compile cache key
 *  (as is clang's version line). A source without a kf-launch line is
 *  refused before compiling, with an error line the model can act on.
 *  The script forks as little as it can (grep, clang, llvm-spirv, wc,
 *  cat, one at a time): every sandboxed child shares one process budget.
 *  A build that fails leaves no artifact the handler would read, since
 *  the handler reads the output only after an exit status of 0.
 */
#include "kf_toolchain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Debian installs versioned names; LLVM's own folder has plain ones.
static const char *const s_extra[] = { "/usr/lib/llvm-14/bin", NULL };

static char *
s_find_translator (void)
{
    char *path = kf_toolchain_which ("llvm-spirv", s_extra);
    if (!path)
        path = kf_toolchain_which ("llvm-spirv-14", NULL);
    return path;
}

//  clang, but only when the translator is there too: half a toolchain
//  would advertise a backend it cannot build for.
static char *
s_find (void)
{
    char *spirv = s_find_translator ();
    if (!spirv)
        return NULL;
    free (spirv);
    char *clang = kf_toolchain_which ("clang", s_extra);
    if (!clang)
        clang = kf_toolchain_which ("clang-14", NULL);
    return clang;
}

/* $1 clang, $2 llvm-spirv, $3 source, $4 output, $5 include dir; the rest
 * are the build's -D flags. CL2.0 for work-group collectives and the
 * generic address space; -O2 because the driver's finaliser optimises
 * again but cannot undo what clang leaves unsimplified. */
static const char s_script[] =
    "set -e\n"
    "cc=\"$1\" spv=\"$2\" src=\"$3\" out=\"$4\" inc=\"$5\"\n"
    "shift 5\n"
    "if ! grep -q 'kf-launch:' \"$src\"; then\n"
    "  echo \"$src: error: no kf-launch: line; the exec worker launches only the kernels\" \\\n"
    "       \"it names (e.g. // kf-launch: k(x, y, numel(y)) global=numel(y) local=256)\" >&2\n"
    "  exit 1\n"
    "fi\n"
    "\"$cc\" -cl-std=CL2.0 -target spir64 -O2 -emit-llvm -c -I\"$inc\" \"$@\""
    " -o kernel.bc \"$src\"\n"
    "\"$spv\" kernel.bc -o kernel.spv\n"
    "wc -c \"$src\" kernel.spv > sizes\n"
    "{ read src_bytes x; read spv_bytes x; } < sizes\n"
    "{\n"
    "  printf 'KF-SPIRV 1\\n'\n"
    "  for d in \"$@\"; do printf 'define %s\\n' \"${d#-D}\"; done\n"
    "  printf 'source %s\\nspirv %s\\n\\n' \"$src_bytes\" \"$spv_bytes\"\n"
    "  cat \"$src\" kernel.spv\n"
    "} > \"$out\"\n";

static int
s_command (const char *program, const kf_toolchain_args_t *args,
           char **argv, size_t max, char *buf, size_t buf_size)
{
    char *spirv = s_find_translator ();
    if (!spirv)
        return -1;
    kf_argv_t a;
    kf_argv_init (&a, argv, max, buf, buf_size);
    //  "kf-spirv" is $0, for sh's own messages.
    static const char *const sh[] = { "/bin/sh", "-c", s_script, "kf-spirv", NULL };
    kf_argv_add_all (&a, sh);
    kf_argv_add (&a, program);
    kf_argv_add (&a, kf_argv_fmt (&a, "%s", spirv));
    free (spirv);
    kf_argv_add (&a, args->source);
    kf_argv_add (&a, args->output);
    kf_argv_add (&a, args->include_dir);
    return kf_argv_end (&a);
}

const kf_toolchain_t kf_toolchain_spirv = {
    .name = "spirv",
    .language = "opencl",
    .backend = "level-zero",
    .source_name = "kernel.cl",
    .find = s_find,
    .version_line = "clang version",
    .command = s_command,
};
