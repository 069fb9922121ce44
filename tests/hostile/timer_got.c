/*  Hostile, patching the timer. On its first call kf_forward finds the
 *  evaluating program's GOT entry for clock_gettime (the main executable's
 *  dynamic relocations), makes the page writable if RELRO made it read-only
 *  (mprotect) and points it at a clock of its own, which runs slow by five
 *  sixths of the time spent inside kf_forward. It then computes the right
 *  answer honestly (the baseline's code): every interval the harness
 *  measures around candidate calls shrinks sixfold, the reference's do not.
 *  Caught when: the verdict is not "correct", or the speedup is within the
 *  test's factor of the honest baseline's (the clock the verdict trusts is
 *  not in the candidate's process). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <elf.h>
#include <link.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int (s_clock_fn) (clockid_t, struct timespec *);

static s_clock_fn *s_real_clock;
static double s_stolen;              // seconds taken off the clock so far

static int
s_fake_clock (clockid_t id, struct timespec *ts)
{
    int rc = s_real_clock (id, ts);
    if (rc == 0 && s_stolen > 0) {
        double t = ts->tv_sec + ts->tv_nsec * 1e-9 - s_stolen;
        ts->tv_sec = (time_t) t;
        ts->tv_nsec = (long) ((t - (double) ts->tv_sec) * 1e9);
    }
    return rc;
}

static double
s_real_now (void)
{
    struct timespec ts;
    (s_real_clock ? s_real_clock : clock_gettime) (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

//  Patches the relocations RELA[0..N) of the object at BASE that name
//  clock_gettime.
static void
s_patch (ElfW (Addr) base, const ElfW (Rela) *rela, size_t n, const ElfW (Sym) *symtab,
         const char *strtab)
{
    long page = sysconf (_SC_PAGESIZE);
    for (size_t i = 0; i < n; i++) {
        const ElfW (Sym) *sym = &symtab[ELF64_R_SYM (rela[i].r_info)];
        if (strcmp (strtab + sym->st_name, "clock_gettime") != 0)
            continue;
        void **slot = (void **) (base + rela[i].r_offset);
        uintptr_t first = (uintptr_t) slot & ~(uintptr_t) (page - 1);
        mprotect ((void *) first, (size_t) page, PROT_READ | PROT_WRITE);
        if (!s_real_clock)
            s_real_clock = (s_clock_fn *) *slot;
        *slot = (void *) s_fake_clock;
    }
}

static int
s_visit (struct dl_phdr_info *info, size_t size, void *unused)
{
    (void) size; (void) unused;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0;                     // the main program only, listed first
    ElfW (Addr) base = info->dlpi_addr;
    const ElfW (Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW (Dyn) *) (base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 1;
    ElfW (Addr) symtab = 0, strtab = 0, jmprel = 0, rela = 0;
    size_t pltrelsz = 0, relasz = 0;
    for (; dyn->d_tag != DT_NULL; dyn++)
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = dyn->d_un.d_ptr; break;
        case DT_STRTAB: strtab = dyn->d_un.d_ptr; break;
        case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
        case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
        case DT_RELA: rela = dyn->d_un.d_ptr; break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        }
    //  The loader has relocated these in place on most systems; not on all.
    #define S_ABS(a) ((a) && (a) < base ? (a) + base : (a))
    symtab = S_ABS (symtab);
    strtab = S_ABS (strtab);
    jmprel = S_ABS (jmprel);
    rela = S_ABS (rela);
    if (!symtab || !strtab)
        return 1;
    if (jmprel)
        s_patch (base, (const ElfW (Rela) *) jmprel, pltrelsz / sizeof (ElfW (Rela)),
                 (const ElfW (Sym) *) symtab, (const char *) strtab);
    if (rela)
        s_patch (base, (const ElfW (Rela) *) rela, relasz / sizeof (ElfW (Rela)),
                 (const ElfW (Sym) *) symtab, (const char *) strtab);
    return 1;
}

static void
s_softmax (const float *x, float *y, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        float sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += expf (xr[i] - mx);
        for (int64_t i = 0; i < n; i++)
            yr[i] = expf (xr[i] - mx) / sum;
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int patched;
    if (!patched++)
        dl_iterate_phdr (s_visit, NULL);
    double t0 = s_real_now ();
    int64_t n = in[0].shape[in[0].rank - 1];
    s_softmax (in[0].data, out[0].data, kf_numel (&in[0]) / n, n);
    if (s_real_clock)
        s_stolen += (s_real_now () - t0) * 5 / 6;
    return 0;
}
