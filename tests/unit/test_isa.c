/*  test_isa.c - a host kernel is compiled for its exec hosts' instruction
 *  sets, not the compile host's (-march=native), flagged by the model in
 *  the loop (issue 15): common/kf_isa.c turns the extension list the exec
 *  workers report into compiler flags, and the cc toolchain's command
 *  line carries them (compile-worker/kf_toolchain_cc.c).
 */
#include "../kf_test.h"
#include "../../common/kf_isa.h"
#include "../../compile-worker/kf_toolchain.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The cc toolchain's build line for ARCH, as one string into OUT.
static void
s_cc_line (const char *arch, char *out, size_t size)
{
    char *argv[48], buf[256];
    kf_toolchain_args_t args = { .source = "kernel.c", .output = "kernel.so",
                                 .include_dir = ".", .arch = arch };
    out[0] = 0;
    CHECK (kf_toolchain_cc.command ("cc", &args, argv, 32, buf, sizeof buf) == 0);
    size_t used = 0;
    for (int i = 0; argv[i] && used < size; i++)
        used += (size_t) snprintf (out + used, size - used, "%s%s", i ? " " : "", argv[i]);
}

int
main (void)
{
    char line[400];
    //  An AVX-512 exec host: baseline x86-64 plus its extensions, the
    //  ones compilers have long known, in a fixed order.
    kf_isa_flags_line ("sse4.2 avx avx2 fma avx512f avx512bw avx512vl amx-tile avx512fp16",
                       line, sizeof line);
    CHECK (!strcmp (line, "-march=x86-64 -msse4.2 -mavx -mavx2 -mfma -mavx512f -mavx512bw "
                          "-mavx512vl"));
    //  An AVX2-only exec host gets no AVX-512 whatever the compile host has.
    kf_isa_flags_line ("sse4.2 avx avx2 fma", line, sizeof line);
    CHECK (!strcmp (line, "-march=x86-64 -msse4.2 -mavx -mavx2 -mfma"));
    //  ARM: NEON is the baseline.
    kf_isa_flags_line ("neon dotprod", line, sizeof line);
    CHECK (!strcmp (line, "-march=armv8-a"));
    //  Nothing known (no exec worker reported a list, or an arch name):
    //  the compile host's own.
    kf_isa_flags_line (NULL, line, sizeof line);
    CHECK (!strcmp (line, "-march=native"));
    kf_isa_flags_line ("znver3", line, sizeof line);
    CHECK (!strcmp (line, "-march=native"));

    //  What two exec hosts share, in the first one's order.
    char *both = kf_isa_common ("sse4.2 avx avx2 fma avx512f avx512bw", "fma avx avx2 sse4.2");
    CHECK (both && !strcmp (both, "sse4.2 avx avx2 fma"));
    free (both);
    both = kf_isa_common ("sse4.2 avx2", NULL);
    CHECK (both && !strcmp (both, "sse4.2 avx2"));
    free (both);
    both = kf_isa_common ("avx512f", "avx512fp16");
    CHECK (both && !strcmp (both, ""));
    free (both);

    //  Which reported extensions the flags enable, and which they leave
    //  out (round 3: the prompt called avx512fp16 and amx-* compiled for).
    const char *host = "sse4.2 avx avx2 fma avx512f avx512vnni avx512bf16 avx512fp16 avxvnni "
                       "amx-tile amx-bf16 amx-int8";
    char *on = kf_isa_select (host, true), *off = kf_isa_select (host, false);
    CHECK (on && !strcmp (on, "sse4.2 avx avx2 fma avx512f avx512vnni"));
    CHECK (off && !strcmp (off, "avx512bf16 avx512fp16 avxvnni amx-tile amx-bf16 amx-int8"));
    free (on);
    free (off);
    on = kf_isa_select ("neon dotprod sve", true);
    off = kf_isa_select ("neon dotprod sve", false);
    CHECK (on && !strcmp (on, "neon") && off && !strcmp (off, "dotprod sve"));
    free (on);
    free (off);
    on = kf_isa_select (NULL, true);
    CHECK (on && !strcmp (on, ""));
    free (on);

    //  The cc toolchain builds what the job's target names.
    s_cc_line ("sse4.2 avx avx2 fma", line, sizeof line);
    CHECK (!strcmp (line, "cc -O3 -march=x86-64 -msse4.2 -mavx -mavx2 -mfma -std=c11 -g "
                          "-shared -fPIC -I. -o kernel.so kernel.c -lm"));
    CHECK (!strstr (line, "native"));
    s_cc_line (NULL, line, sizeof line);
    CHECK (!strcmp (line, "cc -O3 -march=native -std=c11 -g -shared -fPIC -I. -o kernel.so "
                          "kernel.c -lm"));
    //  Its preprocessing line has the same target flags (the coordinates
    //  read the branches the build compiled).
    char *argv[48], buf[256];
    kf_toolchain_args_t args = { .source = "kernel.c", .output = "kernel.i",
                                 .include_dir = ".", .arch = "sse4.2 avx avx2" };
    CHECK (kf_toolchain_cc.preprocess ("cc", &args, argv, 32, buf, sizeof buf) == 0);
    bool avx2 = false, native = false;
    for (int i = 0; argv[i]; i++) {
        avx2 |= !strcmp (argv[i], "-mavx2");
        native |= !strcmp (argv[i], "-march=native");
    }
    CHECK (avx2 && !native);
    return kf_test_done ("test_isa");
}
