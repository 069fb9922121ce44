/*  kf_compile_spill.c - vector register spills of a host build, for the
 *  compiler report (kf_compile.h).
 *
 *  After a host kernel compiles, its shared object is disassembled
 *  (`objdump -d -l --inlines --no-show-raw-insn`, found in PATH; nothing
 *  is said when there is none) and, per function, the full-width moves of
 *  xmm / ymm / zmm registers to and from a stack slot are counted:
 *  `vmovaps %ymm3, -0x60(%rsp)` stores one, `vmovups 0x20(%rsp),%ymm1`
 *  loads one back, with %rbp as the base too. A slot indexed by a
 *  register (`(%rsp,%rax,4)`) is a local array, not a spill, and scalar
 *  moves (vmovss) are not counted. A function is reported only when it
 *  both stores and loads: a horizontal sum through a local `float t[8]`
 *  stores a vector once and reads it back as scalars.
 *
 *  The build carries line tables (-g, kf_toolchain_cc.c), so each move
 *  has a line of the candidate's source: the location objdump prints
 *  before it, or, for an intrinsic inlined from a header, the "inlined by
 *  kernel.c:N" line under the header's (round 28: "run_job has 6
 *  instructions that store zmm registers" could not be acted on without
 *  knowing whether they sit in an inner loop). A move is inside a loop
 *  when it lies between a conditional backward jump and the jump's
 *  target with no return between them (s_place); how many are, and
 *  their lines, are named, and what those loops say of why: a call in
 *  them (no vector register keeps its value across a call in the System
 *  V ABI), else how many distinct vector registers they name against
 *  the 16 (32 where a zmm or a register above 15 shows AVX-512).
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_FUNCS 64
#define S_NAME 48
#define S_SHOWN 3
#define S_LINES 64              /* in-loop lines kept per function */
#define S_MOVES 4096            /* moves and loops placed per function */
#define S_LOOPS 1024
#define S_RANGES 4              /* line ranges named per function */
#define S_INSNS 16384           /* instructions whose registers are read, per function */
#define S_CALLS 256             /* calls placed per function */
#define S_CALLEE 40

typedef struct {
    char name[S_NAME];
    int stores, loads;
    char widest;                /* 'x', 'y' or 'z' */
    int in_loops;               /* moves inside a loop; -1: not placed */
    int lines[S_LINES], n_lines;        /* their source lines, when known */
    //  Why, as the loops holding moves say: the distinct vector registers
    //  they use (-1: not known), the highest one's number, and the
    //  functions they call (a call keeps no vector register's value).
    int regs, top_reg, calls;
    char callee[S_CALLEE];
    //  Round 41: the lines of moves whose innermost loop itself calls a
    //  function (a scalar tail calling expf beside a tile's loop that
    //  calls none read as "those loops call expf@plt").
    int call_lines[S_LINES], n_call_lines;
} s_func_t;

//  The function being read: its moves by address and line, and its
//  loops, each a backward jump from FROM to TO.
typedef struct {
    struct {
        unsigned long addr;
        int line;
    } move[S_MOVES];
    int n_moves;
    struct {
        unsigned long from, to;
    } loop[S_LOOPS];
    int n_loops;
    unsigned long ret[S_LOOPS];
    int n_rets;
    struct {
        unsigned long addr;
        uint32_t regs;          /* the vector registers it names, by number */
    } insn[S_INSNS];
    int n_insns;
    struct {
        unsigned long addr;
        char name[S_CALLEE];
    } call[S_CALLS];
    int n_calls;
    bool overflow, insn_overflow;
} s_scan_t;

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

static int
s_int_cmp (const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

//  Whether SCAN's loop K holds a return: then its jump is a block the
//  compiler placed after the body jumping back into it, not a loop.
static bool
s_returns (const s_scan_t *scan, int k)
{
    for (int i = 0; i < scan->n_rets; i++)
        if (scan->loop[k].to <= scan->ret[i] && scan->ret[i] <= scan->loop[k].from)
            return true;
    return false;
}

//  What the loops of SCAN marked in HOLDS (those with a move in them)
//  say of why: FN's registers used in them and the calls they make.
static void
s_why (s_func_t *fn, const s_scan_t *scan, const bool *holds)
{
    uint32_t used = 0;
    for (int i = 0; i < scan->n_insns; i++)
        for (int k = 0; k < scan->n_loops; k++)
            if (holds[k] && scan->loop[k].to <= scan->insn[i].addr
                && scan->insn[i].addr <= scan->loop[k].from) {
                used |= scan->insn[i].regs;
                break;
            }
    for (int i = 0; i < scan->n_calls; i++)
        for (int k = 0; k < scan->n_loops; k++)
            if (holds[k] && scan->loop[k].to <= scan->call[i].addr
                && scan->call[i].addr <= scan->loop[k].from) {
                if (!fn->calls++)
                    snprintf (fn->callee, sizeof fn->callee, "%s", scan->call[i].name);
                break;
            }
    fn->regs = scan->insn_overflow ? -1 : 0;
    for (int r = 0; r < 32 && !scan->insn_overflow; r++)
        if (used & (UINT32_C (1) << r)) {
            fn->regs++;
            fn->top_reg = r;
        }
}

//  LINE (when known) added to LINES (*N of them) once.
static void
s_add_line (int *lines, int *n, int line)
{
    int j = 0;
    while (j < *n && lines[j] != line)
        j++;
    if (line > 0 && j == *n && *n < S_LINES)
        lines[(*n)++] = line;
}

//  Whether the innermost of SCAN's loops holding ADDR calls a function.
static bool
s_inner_calls (const s_scan_t *scan, unsigned long addr)
{
    int inner = -1;
    for (int k = 0; k < scan->n_loops; k++)
        if (scan->loop[k].to <= addr && addr <= scan->loop[k].from
            && (inner < 0 || scan->loop[k].from - scan->loop[k].to
                                 < scan->loop[inner].from - scan->loop[inner].to))
            inner = k;
    for (int i = 0; inner >= 0 && i < scan->n_calls; i++)
        if (scan->loop[inner].to <= scan->call[i].addr
            && scan->call[i].addr <= scan->loop[inner].from)
            return true;
    return false;
}

//  Places FN's moves of SCAN: inside a loop when between a conditional
//  backward jump and its target with no return between them (GCC
//  rotates loops at -O2 and above, so a loop ends in a conditional jump
//  back); the lines of those kept, and what those loops say of why
//  (s_why). Empties SCAN.
static void
s_place (s_func_t *fn, s_scan_t *scan)
{
    int kept = 0;
    for (int k = 0; k < scan->n_loops; k++)
        if (!s_returns (scan, k))
            scan->loop[kept++] = scan->loop[k];
    scan->n_loops = kept;
    bool holds[S_LOOPS] = { false };
    if (fn && !scan->overflow) {
        fn->in_loops = 0;
        for (int i = 0; i < scan->n_moves; i++) {
            unsigned long a = scan->move[i].addr;
            int k = 0;
            while (k < scan->n_loops && !(scan->loop[k].to <= a && a <= scan->loop[k].from))
                k++;
            if (k == scan->n_loops)
                continue;
            for (int o = k; o < scan->n_loops; o++)
                holds[o] |= scan->loop[o].to <= a && a <= scan->loop[o].from;
            fn->in_loops++;
            int line = scan->move[i].line;
            s_add_line (fn->lines, &fn->n_lines, line);
            if (s_inner_calls (scan, a))
                s_add_line (fn->call_lines, &fn->n_call_lines, line);
        }
        qsort (fn->lines, (size_t) fn->n_lines, sizeof fn->lines[0], s_int_cmp);
        qsort (fn->call_lines, (size_t) fn->n_call_lines, sizeof fn->call_lines[0], s_int_cmp);
        if (fn->in_loops > 0)
            s_why (fn, scan, holds);
    }
    scan->n_moves = scan->n_loops = scan->n_rets = scan->n_insns = scan->n_calls = 0;
    scan->overflow = scan->insn_overflow = false;
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
    fn->in_loops = -1;
    size_t k = 0;
    //  The name as objdump prints it, from a source the candidate wrote:
    //  only identifier characters kept.
    for (size_t i = 0; i < len && k + 1 < S_NAME; i++)
        if (isalnum ((unsigned char) name[i]) || name[i] == '_' || name[i] == '.')
            fn->name[k++] = name[i];
    fn->name[k] = 0;
    return fn;
}

//  A conditional jump's target when MN is one and OPS names it ("15b0
//  <kf_forward+0x4b0>"), else 0.
static unsigned long
s_jump_target (const char *mn, size_t mn_len, const char *ops)
{
    if (mn_len < 2 || mn[0] != 'j' || !strncmp (mn, "jmp", 3) || !isxdigit ((unsigned char) *ops))
        return 0;
    char *after;
    unsigned long to = strtoul (ops, &after, 16);
    return after > ops && (*after == ' ' || *after == 0) ? to : 0;
}

//  Reads one instruction line ("  1130:\tvmovaps %ymm3,-0x60(%rsp)") of
//  source line AT into FN and SCAN.
static void
s_instruction (s_func_t *fn, s_scan_t *scan, const char *line, size_t len, int at)
{
    const char *tab = memchr (line, '\t', len);
    if (!fn || !tab)
        return;
    unsigned long addr = strtoul (line, NULL, 16);
    const char *mn = tab + 1, *end = line + len;
    size_t mn_len = 0;
    while (mn + mn_len < end && !isspace ((unsigned char) mn[mn_len]))
        mn_len++;
    const char *ops = mn + mn_len;
    while (ops < end && isspace ((unsigned char) *ops))
        ops++;
    //  The vector registers it names ("%ymm12"), by number.
    uint32_t regs = 0;
    for (const char *p = ops; p + 4 < end; p++)
        if (s_register (p, (size_t) (end - p))) {
            long r = strtol (p + 4, NULL, 10);
            if (r >= 0 && r < 32)
                regs |= UINT32_C (1) << r;
        }
    if (scan->n_insns == S_INSNS)
        scan->insn_overflow = true;
    else if (regs) {
        scan->insn[scan->n_insns].addr = addr;
        scan->insn[scan->n_insns++].regs = regs;
    }
    //  A call ("call 1030 <expf@plt>"): its callee's name, identifier
    //  characters only (a candidate names its functions).
    if ((mn_len == 4 || (mn_len == 5 && mn[4] == 'q')) && !strncmp (mn, "call", 4)
        && scan->n_calls < S_CALLS) {
        const char *lt = memchr (ops, '<', (size_t) (end - ops));
        size_t k = 0;
        char *name = scan->call[scan->n_calls].name;
        for (const char *p = lt ? lt + 1 : end; p < end && *p != '>' && k + 1 < S_CALLEE; p++)
            if (isalnum ((unsigned char) *p) || strchr ("_.@+", *p))
                name[k++] = *p;
        name[k] = 0;
        if (!k)
            snprintf (name, S_CALLEE, "a function through a pointer");
        scan->call[scan->n_calls++].addr = addr;
    }
    if ((mn_len == 3 || (mn_len == 4 && mn[3] == 'q')) && !strncmp (mn, "ret", 3)) {
        if (scan->n_rets == S_LOOPS)
            scan->overflow = true;
        else
            scan->ret[scan->n_rets++] = addr;
    }
    unsigned long to = s_jump_target (mn, mn_len, ops);
    if (to && to <= addr) {
        if (scan->n_loops == S_LOOPS)
            scan->overflow = true;
        else {
            scan->loop[scan->n_loops].from = addr;
            scan->loop[scan->n_loops++].to = to;
        }
    }
    if (!s_vector_move (mn, mn_len))
        return;
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
    if (scan->n_moves == S_MOVES)
        scan->overflow = true;
    else {
        scan->move[scan->n_moves].addr = addr;
        scan->move[scan->n_moves++].line = at;
    }
}

//  A location line of the listing: "/dir/kernel.c:50", "/usr/.../
//  avx512fintrin.h:13368 (discriminator 3)" or "inlined by
//  /dir/kernel.c:50 (kf_forward)". Returns -1 when LINE is none, else the
//  line number when its file is SOURCE (by its last path part), 0 when
//  it is another file; *INLINED tells which form it was.
static int
s_location (const char *line, size_t len, const char *source, bool *inlined)
{
    static const char by[] = "inlined by ";
    *inlined = len > sizeof by - 1 && !strncmp (line, by, sizeof by - 1);
    if (*inlined) {
        line += sizeof by - 1;
        len -= sizeof by - 1;
    }
    size_t tok = 0;
    while (tok < len && !isspace ((unsigned char) line[tok]))
        tok++;
    size_t colon = tok;
    while (colon > 0 && isdigit ((unsigned char) line[colon - 1]))
        colon--;
    if (colon == tok || colon < 2 || line[colon - 1] != ':')
        return -1;
    size_t base = colon - 1;
    while (base > 0 && line[base - 1] != '/')
        base--;
    size_t n = strlen (source);
    if (colon - 1 - base != n || strncmp (line + base, source, n))
        return 0;
    long at = strtol (line + colon, NULL, 10);
    return at > 0 && at < 1000000 ? (int) at : 0;
}

//  LINES (N, sorted) as ranges after ONE or MANY: ", at lines 40-59, 61".
static void
s_lines (FILE *out, const int *lines, int n, const char *one, const char *many)
{
    int ranges = 0, i = 0;
    while (i < n && ranges < S_RANGES) {
        int j = i;
        while (j + 1 < n && lines[j + 1] == lines[j] + 1)
            j++;
        fprintf (out, "%s%d", ranges ? ", " : n == 1 ? one : many, lines[i]);
        if (j > i)
            fprintf (out, "-%d", lines[j]);
        ranges++;
        i = j + 1;
    }
    if (i < n)
        fprintf (out, " and %d more line%s", n - i, n - i == 1 ? "" : "s");
}

//  " (20 of them in loops, at lines 40-59)": where FN's moves are, when
//  its loops were placed.
static void
s_where (FILE *out, const s_func_t *fn)
{
    int moves = fn->stores + fn->loads;
    if (fn->in_loops < 0)
        return;
    if (fn->in_loops == 0) {
        fputs (" (none of them in a loop)", out);
        return;
    }
    fprintf (out, " (%s%d of them in loops", fn->in_loops == moves ? "all " : "", fn->in_loops);
    s_lines (out, fn->lines, fn->n_lines, ", at line ", ", at lines ");
    //  Why: a call keeps no vector register (the System V ABI saves none
    //  of them across one), else how many registers the loops use.
    //  Round 41: where the moves' own loops part call and part do not,
    //  each part is named by its lines.
    bool split = fn->calls > 0 && fn->n_call_lines > 0 && fn->n_call_lines < fn->n_lines;
    bool none = fn->calls > 0 && fn->n_call_lines == 0 && fn->n_lines > 0;
    if (split) {
        s_lines (out, fn->call_lines, fn->n_call_lines, "; the loop at line ",
                 "; the loops at lines ");
        fputs (fn->n_call_lines == 1 ? " calls " : " call ", out);
    }
    else if (fn->calls > 0 && !none)
        fputs ("; those loops call ", out);
    if (fn->calls > 0 && !none)
        //  Round 40: spills in the loop that starts threads (a call
        //  through a pointer, two passes a call) were read as the
        //  compute's: such a loop pays once a pass, beside its call.
        fprintf (out, "%s%s, and no vector register keeps its value across a "
                 "call, so every vector live across it goes to the stack and back, once a "
                 "pass beside the call's own cost: it matters where such a loop is the "
                 "compute, hardly where it starts threads or hands out jobs", fn->callee,
                 fn->calls > 1 ? " and more" : "");
    if ((fn->calls == 0 || split || none) && fn->regs > 0) {
        int have = fn->top_reg >= 16 || fn->widest == 'z' ? 32 : 16;
        const char *which = split ? "; the other loops" : "; those loops";
        if (fn->regs >= have)
            fprintf (out, "%s %suse all %d vector registers", which,
                     split || none ? "call nothing and " : "", have);
        else
            fprintf (out, "%s %suse %d of the %s vector registers", which,
                     split || none ? "call nothing and " : "", fn->regs,
                     have == 32 ? "32" : "16 (or, with AVX-512, 32)");
    }
    fputc (')', out);
}

static int
s_by_moves (const void *a, const void *b)
{
    const s_func_t *x = a, *y = b;
    return (y->stores + y->loads) - (x->stores + x->loads);
}

char *
kf_compile_spill_summary (const char *disasm, size_t size, const char *source)
{
    if (!disasm)
        return NULL;
    s_func_t *f = calloc (S_FUNCS, sizeof *f);
    s_scan_t *scan = calloc (1, sizeof *scan);
    if (!f || !scan) {
        free (f);
        free (scan);
        return NULL;
    }
    int n = 0, at = 0;
    s_func_t *fn = NULL;
    for (const char *line = disasm, *end = disasm + size; line < end;) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        size_t len = nl ? (size_t) (nl - line) : (size_t) (end - line);
        //  "0000000000001120 <kf_forward>:" opens a function.
        const char *lt = memchr (line, '<', len);
        int loc;
        bool inlined;
        if (lt && len >= 3 && line[len - 1] == ':' && line[len - 2] == '>'
            && isxdigit ((unsigned char) *line)) {
            s_place (fn, scan);
            fn = s_func (f, &n, lt + 1, (size_t) (line + len - 2 - (lt + 1)));
            at = 0;
        } else if (len > 0 && isspace ((unsigned char) *line))
            s_instruction (fn, scan, line, len, at);
        else if (source && (loc = s_location (line, len, source, &inlined)) >= 0) {
            //  A header's location is followed by the candidate's line
            //  that inlined it, if any; until then the line is not known.
            if (!inlined || loc > 0)
                at = loc;
        }
        line += len + 1;
    }
    s_place (fn, scan);
    free (scan);
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
        for (int i = 0; i < spilling && i < S_SHOWN; i++) {
            fprintf (out, "%s %s has %d instruction%s that store%s %cmm registers to the stack and %d "
                     "that load%s them back", i ? ";" : "", f[i].name, f[i].stores,
                     f[i].stores == 1 ? "" : "s", f[i].stores == 1 ? "s" : "", f[i].widest,
                     f[i].loads, f[i].loads == 1 ? "s" : "");
            s_where (out, &f[i]);
        }
        if (spilling > S_SHOWN)
            fprintf (out, "; %d more function%s do%s so", spilling - S_SHOWN,
                     spilling - S_SHOWN == 1 ? "" : "s", spilling - S_SHOWN == 1 ? "es" : "");
        //  Round 42: "in a loop, on every pass" after "(none of them in a
        //  loop)", and a local array zeroed by vector stores read as a
        //  spill.
        bool looped = false;
        for (int i = 0; i < spilling && i < S_SHOWN; i++)
            looped |= f[i].in_loops != 0;
        fprintf (out, ". Unless the code keeps a local array or struct of vectors (zeroed or "
                 "copied by vector moves), these are register spills: it keeps more vectors "
                 "live at once than the registers hold (16 ymm with AVX2, 32 zmm with "
                 "AVX-512), or keeps vectors live across a call, which no vector register "
                 "survives, so the compiler parks some on the stack and loads them again, "
                 "adding memory traffic%s.\n", looped ? "; in a loop, on every pass" : " once a "
                 "call, outside any loop");
        if (fclose (out) != 0) {
            free (text);
            text = NULL;
        }
    }
    free (f);
    return text;
}

char *
kf_compile_spill_report (const char *dir, const char *object, const char *source,
                         const kf_subproc_limits_t *limits)
{
    char *objdump = kf_toolchain_which ("objdump", NULL);
    if (!objdump)
        return NULL;
    kf_subproc_limits_t l = *limits;
    l.workdir = dir;
    l.output_cap = KF_COMPILE_SPILL_READ_MAX;
    if (l.time_limit_s <= 0 || l.time_limit_s > 10)
        l.time_limit_s = 10;
    char *argv[] = { objdump, "-d", "-l", "--inlines", "--no-show-raw-insn", (char *) object, NULL };
    kf_subproc_result_t run;
    char *text = NULL;
    if (kf_subproc_run (argv, &l, &run) == 0) {
        //  A killed or failed objdump may have written half a listing:
        //  what it wrote is still counted, and says at least that much.
        if (run.output)
            text = kf_compile_spill_summary (run.output, run.output_len, source);
        kf_subproc_result_free (&run);
    }
    free (objdump);
    return text;
}
