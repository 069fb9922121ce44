/*  kf_compile_spill.c - vector register spills of a host build, for the
 *  compiler report (kf_compile.h).
 *
 *  After a host kernel compiles, its shared object is disassembled
 *  (`objdump -d --no-show-raw-insn`, found in PATH; nothing is said when
 *  there is none) and, per function, the full-width moves of xmm / ymm /
 *  zmm registers to and from a stack slot are counted: `vmovaps %ymm3,
 *  -0x60(%rsp)` stores one, `vmovups 0x20(%rsp),%ymm1` loads one back,
 *  with %rbp as the base too. A slot indexed by a register
 *  (`(%rsp,%rax,4)`) is a local array, not a spill, and scalar moves
 *  (vmovss) are not counted. A function is reported only when it both
 *  stores and loads: a horizontal sum through a local `float t[8]`
 *  stores a vector once and reads it back as scalars.
 *
 *  Bounded: objdump runs under the build's limits with a time limit of
 *  its own and its output capped (a candidate can make a huge object);
 *  the counts are of what was read. Nothing here fails a build.
 */
#include "kf_compile.h"
#include "kf_subproc.h"
#include "kf_toolchain.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_FUNCS 64
#define S_NAME 48
#define S_SHOWN 3

typedef struct {
    char name[S_NAME];
    int stores, loads;
    char widest;                /* 'x', 'y' or 'z' */
} s_func_t;

//  Whether MN is a full-width vector move: (v)movaps/ups/apd/upd,
//  vmovdqa/dqu and their AVX-512 element-size forms.
static bool
s_vector_move (const char *mn, size_t n)
{
    static const char *const moves[] = {
        "movaps", "movups", "movapd", "movupd", "movdqa", "movdqu", "movdqa32", "movdqa64",
        "movdqu8", "movdqu16", "movdqu32", "movdqu64", NULL };
    if (n > 0 && mn[0] == 'v') {
        mn++;
        n--;
    }
    for (int i = 0; moves[i]; i++)
        if (strlen (moves[i]) == n && !strncmp (mn, moves[i], n))
            return true;
    return false;
}

//  The register kind of OP ("%ymm3" gives 'y'), 0 when OP is no vector
//  register.
static char
s_register (const char *op, size_t n)
{
    if (n >= 5 && op[0] == '%' && strchr ("xyz", op[1]) && !strncmp (op + 2, "mm", 2)
        && isdigit ((unsigned char) op[4]))
        return op[1];
    return 0;
}

//  Whether OP is a stack slot: an optional displacement, then (%rsp) or
//  (%rbp) with no index register; an AVX-512 mask ({%k1}) may follow.
static bool
s_stack_slot (const char *op, size_t n)
{
    const char *open = memchr (op, '(', n);
    if (!open)
        return false;
    size_t rest = n - (size_t) (open - op);
    return rest >= 6 && (!strncmp (open, "(%rsp)", 6) || !strncmp (open, "(%rbp)", 6));
}

//  The function of F named NAME (LEN bytes), added when there is room;
//  NULL when not.
static s_func_t *
s_func (s_func_t *f, int *n, const char *name, size_t len)
{
    if (*n >= S_FUNCS)
        return NULL;
    s_func_t *fn = &f[(*n)++];
    memset (fn, 0, sizeof *fn);
    size_t k = 0;
    //  The name as objdump prints it, from a source the candidate wrote:
    //  only identifier characters kept.
    for (size_t i = 0; i < len && k + 1 < S_NAME; i++)
        if (isalnum ((unsigned char) name[i]) || name[i] == '_' || name[i] == '.')
            fn->name[k++] = name[i];
    fn->name[k] = 0;
    return fn;
}

//  Reads one instruction line ("  1130:\tvmovaps %ymm3,-0x60(%rsp)") into FN.
static void
s_instruction (s_func_t *fn, const char *line, size_t len)
{
    const char *tab = memchr (line, '\t', len);
    if (!fn || !tab)
        return;
    const char *mn = tab + 1, *end = line + len;
    size_t mn_len = 0;
    while (mn + mn_len < end && !isspace ((unsigned char) mn[mn_len]))
        mn_len++;
    if (!s_vector_move (mn, mn_len))
        return;
    const char *ops = mn + mn_len;
    while (ops < end && isspace ((unsigned char) *ops))
        ops++;
    //  AT&T order, source first; the comma between the operands is the
    //  first one outside parentheses.
    int depth = 0;
    const char *comma = NULL;
    for (const char *p = ops; p < end && !comma; p++) {
        depth += (*p == '(') - (*p == ')');
        if (*p == ',' && depth == 0)
            comma = p;
    }
    if (!comma)
        return;
    size_t src_len = (size_t) (comma - ops), dst_len = 0;
    const char *dst = comma + 1;
    while (dst + dst_len < end && !isspace ((unsigned char) dst[dst_len]) && dst[dst_len] != '#')
        dst_len++;
    char reg = 0;
    if ((reg = s_register (ops, src_len)) && s_stack_slot (dst, dst_len))
        fn->stores++;
    else if ((reg = s_register (dst, dst_len)) && s_stack_slot (ops, src_len))
        fn->loads++;
    else
        return;
    if (reg > fn->widest)
        fn->widest = reg;
}

static int
s_by_moves (const void *a, const void *b)
{
    const s_func_t *x = a, *y = b;
    return (y->stores + y->loads) - (x->stores + x->loads);
}

char *
kf_compile_spill_summary (const char *disasm, size_t size)
{
    if (!disasm)
        return NULL;
    s_func_t *f = calloc (S_FUNCS, sizeof *f);
    if (!f)
        return NULL;
    int n = 0;
    s_func_t *fn = NULL;
    for (const char *line = disasm, *end = disasm + size; line < end;) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        size_t len = nl ? (size_t) (nl - line) : (size_t) (end - line);
        //  "0000000000001120 <kf_forward>:" opens a function.
        const char *lt = memchr (line, '<', len);
        if (lt && len >= 3 && line[len - 1] == ':' && line[len - 2] == '>' && isxdigit ((unsigned char) *line))
            fn = s_func (f, &n, lt + 1, (size_t) (line + len - 2 - (lt + 1)));
        else if (len > 0 && isspace ((unsigned char) *line))
            s_instruction (fn, line, len);
        line += len + 1;
    }
    int spilling = 0;
    for (int i = 0; i < n; i++)
        if (f[i].stores > 0 && f[i].loads > 0)
            f[spilling++] = f[i];
    qsort (f, (size_t) spilling, sizeof *f, s_by_moves);
    char *text = NULL;
    size_t text_size = 0;
    FILE *out = spilling ? open_memstream (&text, &text_size) : NULL;
    if (out) {
        fputs (KF_COMPILE_SPILL_MARK, out);
        for (int i = 0; i < spilling && i < S_SHOWN; i++)
            fprintf (out, "%s %s has %d instruction%s that store%s %cmm registers to the stack and %d "
                     "that load%s them back", i ? ";" : "", f[i].name, f[i].stores,
                     f[i].stores == 1 ? "" : "s", f[i].stores == 1 ? "s" : "", f[i].widest,
                     f[i].loads, f[i].loads == 1 ? "s" : "");
        if (spilling > S_SHOWN)
            fprintf (out, "; %d more function%s do%s so", spilling - S_SHOWN,
                     spilling - S_SHOWN == 1 ? "" : "s", spilling - S_SHOWN == 1 ? "es" : "");
        fputs (". Unless the code keeps a local array of vectors, these are register spills: it "
               "keeps more vectors live at once than the registers hold (16 ymm with AVX2, 32 zmm "
               "with AVX-512), so the compiler parks some on the stack and loads them again, "
               "adding memory traffic.\n", out);
        if (fclose (out) != 0) {
            free (text);
            text = NULL;
        }
    }
    free (f);
    return text;
}

char *
kf_compile_spill_report (const char *dir, const char *object, const kf_subproc_limits_t *limits)
{
    char *objdump = kf_toolchain_which ("objdump", NULL);
    if (!objdump)
        return NULL;
    kf_subproc_limits_t l = *limits;
    l.workdir = dir;
    l.output_cap = KF_COMPILE_SPILL_READ_MAX;
    if (l.time_limit_s <= 0 || l.time_limit_s > 10)
        l.time_limit_s = 10;
    char *argv[] = { objdump, "-d", "--no-show-raw-insn", (char *) object, NULL };
    kf_subproc_result_t run;
    char *text = NULL;
    if (kf_subproc_run (argv, &l, &run) == 0) {
        //  A killed or failed objdump may have written half a listing:
        //  what it wrote is still counted, and says at least that much.
        if (run.output)
            text = kf_compile_spill_summary (run.output, run.output_len);
        kf_subproc_result_free (&run);
    }
    free (objdump);
    return text;
}
