/*  kf_compile_text.c - what the compile worker reads in the text
 *  compilers write: the log trimmed for the next prompt (error lines
 *  first, the job's directory stripped), whether it points into the
 *  candidate's own file, and the candidate's own lines of a preprocessed
 *  source, with CUDA's execution-space keywords put back, for the
 *  coordinates of the code built (kf_compile.c).
 */
#include "kf_compile.h"
#include "kf_descriptor.h"
#include "kf_descriptor_simd.h"
#include "kf_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Copies LOG with every occurrence of DIR/ removed and DIR itself
//  written as ".", so "/tmp/kf-x1y2/kernel.c:3:5" reads "kernel.c:3:5".
static char *
s_strip_dir (const char *log, const char *dir)
{
    size_t dir_len = dir ? strlen (dir) : 0;
    char *out = malloc (strlen (log) + 1);
    if (!out)
        return NULL;
    char *w = out;
    const char *r = log;
    while (*r) {
        if (dir_len && strncmp (r, dir, dir_len) == 0) {
            r += dir_len;
            if (*r == '/')
                r++;
            else
                *w++ = '.';
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    return out;
}

static bool
s_is_error_line (const char *line, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++)
        if (strncasecmp (line + i, "error", 5) == 0)
            return true;
    return false;
}

char *
kf_compile_trim_log (const char *log, const char *dir, size_t max)
{
    if (max < 128)
        max = 128;
    char *text = s_strip_dir (log ? log : "", dir);
    char *out = malloc (max + 1);
    if (!text || !out) {
        free (text);
        free (out);
        return NULL;
    }
    //  Room kept for the "[N more lines omitted]" trailer.
    size_t budget = max - 48, used = 0;
    int omitted = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *line = text;
        while (*line) {
            size_t len = strcspn (line, "\n");
            const char *next = line + len + (line[len] ? 1 : 0);
            bool blank = strspn (line, " \t\r") >= len;
            bool error = s_is_error_line (line, len);
            if (!blank && error == (pass == 0)) {
                if (used + len + 1 <= budget) {
                    memcpy (out + used, line, len);
                    used += len;
                    out[used++] = '\n';
                }
                else if (used == 0) {
                    //  One enormous first line: keep its start, up to the
                    //  last whole word that fits, and say it was cut.
                    static const char note[] = " (line cut)";
                    size_t keep = budget - sizeof note;
                    while (keep > budget / 2 && line[keep] != ' ' && line[keep] != '\t')
                        keep--;
                    if (keep <= budget / 2)
                        keep = budget - sizeof note;
                    memcpy (out, line, keep);
                    memcpy (out + keep, note, sizeof note - 1);
                    used = keep + sizeof note - 1;
                    out[used++] = '\n';
                }
                else
                    omitted++;
            }
            line = next;
        }
    }
    out[used] = 0;
    if (omitted)
        snprintf (out + used, max + 1 - used, "[%d more lines omitted]\n", omitted);
    free (text);
    return out;
}

char *
kf_compile_own_lines (const char *text, size_t size, const char *source_name)
{
    char *out = malloc (size + 1);
    if (!out)
        return NULL;
    size_t used = 0;
    bool own = false;
    size_t name_len = strlen (source_name);
    const char *p = text, *end = text + size;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
        //  A line marker: '#', blanks, optional "line", a number, then the
        //  file's name in quotes. Everything up to the next marker comes
        //  from that file.
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        bool marker = false;
        if (q < p + len && *q == '#') {
            q++;
            while (q < p + len && (*q == ' ' || *q == '\t'))
                q++;
            if (p + len - q > 4 && !strncmp (q, "line", 4))
                q += 4;
            while (q < p + len && (*q == ' ' || *q == '\t'))
                q++;
            const char *digits = q;
            while (q < p + len && *q >= '0' && *q <= '9')
                q++;
            while (q < p + len && (*q == ' ' || *q == '\t'))
                q++;
            if (q > digits && q < p + len && *q == '"') {
                const char *name = q + 1;
                const char *close = memchr (name, '"', (size_t) (p + len - name));
                if (close) {
                    size_t n = (size_t) (close - name);
                    //  "kernel.c" or a path ending in "/kernel.c".
                    own = n >= name_len && !strncmp (close - name_len, source_name, name_len)
                          && (n == name_len || close[-(long) name_len - 1] == '/');
                    marker = true;
                }
            }
        }
        if (!marker && own) {
            memcpy (out + used, p, len);
            used += len;
            out[used++] = '\n';
        }
        p += len + (nl ? 1 : 0);
    }
    out[used] = 0;
    return out;
}

//  The CUDA headers turn the execution-space keywords into attributes
//  before the text reaches us; the pattern tables look for the keywords,
//  so they are put back: __attribute__((shared)) reads __shared__ again.
char *
kf_compile_cuda_keywords (char *text)
{
    static const char *const pairs[][2] = {
        { "__attribute__((shared))", "__shared__" },
        { "__attribute__((global))", "__global__" },
        { "__attribute__((device))", "__device__" },
        { "__attribute__((host))", "__host__" },
        { "__attribute__((constant))", "__constant__" },
        { "__attribute__((managed))", "__managed__" },
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        size_t from = strlen (pairs[k][0]), to = strlen (pairs[k][1]);
        //  Every replacement is shorter, so it is done in place.
        char *w = text, *r = text, *hit;
        while ((hit = strstr (r, pairs[k][0]))) {
            size_t keep = (size_t) (hit - r);
            memmove (w, r, keep);
            w += keep;
            memcpy (w, pairs[k][1], to);
            w += to;
            r = hit + from;
        }
        memmove (w, r, strlen (r) + 1);
    }
    return text;
}

//  True when LOG holds a diagnostic located in the candidate's own file
//  ("kernel.c:7:5: error: ..."), the mark of a failure the same source
//  will always meet.
bool
kf_compile_points_into_source (const char *log, const char *source_name)
{
    size_t n = strlen (source_name);
    for (const char *p = log ? strstr (log, source_name) : NULL; p;
         p = strstr (p + n, source_name))
        if (p[n] == ':' || p[n] == '(')
            return true;
    return false;
}

//  A loop is vectorised once per copy the compiler made of it (inlining,
//  an epilogue), so the count is of report lines, not of distinct loops;
//  the descriptor needs only whether there is one.
int
kf_compile_vectorised_loops (const char *report, const char *source_name)
{
    int count = 0;
    size_t n = strlen (source_name);
    for (const char *line = report; line && *line;) {
        const char *end = strchr (line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen (line);
        if (len > n && !strncmp (line, source_name, n) && line[n] == ':') {
            const char *hit = strstr (line, "loop vectorized");
            if (hit && hit < line + len)
                count++;
        }
        line = end ? end + 1 : line + len;
    }
    return count;
}

//  ---------------------------------------------------------------------
//  The vectoriser's report, summarised for the prompt of the kernel's
//  children (issue 15, round 5: the model guessed what the compiler did).
//  The report quotes the candidate's code (GIMPLE statements, names), so
//  it is untrusted text: each line is cut, control characters and
//  backquotes (which would close the prompt's code block) are replaced.

#define S_VEC_LINES 64

typedef struct {
    long line;
    int widths[4], n_widths;     /* vector bytes, distinct, in report order */
    bool simd;                   /* its reason names a vector type: intrinsics */
    bool branch;                 /* not vectorised for a branch in the loop */
    char call[40];               /* a function a statement of it calls */
    char reason[KF_COMPILE_VEC_REASON];
} s_vec_loop_t;

//  TEXT[0, LEN) into OUT (SIZE bytes), made safe: control characters
//  and backquotes become spaces, runs of spaces one.
static void
s_clean (char *out, size_t size, const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < size; i++) {
        unsigned char c = (unsigned char) text[i];
        if (c < 0x20 || c == 0x7f || c == '`')
            c = ' ';
        if (c == ' ' && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = (char) c;
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = 0;
}

//  Whether TEXT[0, LEN) names a vector type, as GCC's report of a
//  statement on intrinsics does ("no vectype for stmt: ... scalar_type:
//  __m512_u", or a vector(16) float): such a statement is a vector
//  operation already, which the auto-vectoriser leaves alone.
static bool
s_names_vector (const char *text, size_t len)
{
    //  __builtin_ia32_: an intrinsic's own name in GCC's words (round 9:
    //  "statement clobbers memory: __builtin_ia32_movntps512", a streaming
    //  store, read as a loop to fix).
    static const char *const names[] = { "__m128", "__m256", "__m512", "vector(",
                                         "__builtin_ia32_" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *hit = strstr (text, names[i]);
        if (hit && hit < text + len)
            return true;
    }
    return false;
}

//  Whether REASON says a branch kept the loop scalar: GCC's "control
//  flow in loop" (an if the vectoriser could not turn into a select) or
//  an early exit.
static bool
s_branch_reason (const char *reason)
{
    return strstr (reason, "control flow") || strstr (reason, "multiple exits")
           || strstr (reason, "early exit");
}

//  The function a "statement clobbers memory: _4 = expf (v_14);" reason
//  (WHY, WL bytes) calls, into L->call when it has none yet. Round 7: a
//  loop kept scalar by libm calls read as kept by a branch, and a copy
//  GCC made a memcpy call of read as a defect.
static void
s_note_call (s_vec_loop_t *l, const char *why, size_t wl)
{
    const char *c = strstr (why, "clobbers memory:");
    if (l->call[0] || !c || c >= why + wl)
        return;
    const char *paren = strstr (c, " (");
    if (!paren || paren >= why + wl)
        return;
    const char *start = paren;
    while (start > c && (isalnum ((unsigned char) start[-1]) || start[-1] == '_'))
        start--;
    size_t len = (size_t) (paren - start);
    if (len > 0 && len < sizeof l->call) {
        memcpy (l->call, start, len);
        l->call[len] = 0;
    }
}

//  Whether NAME is a libm function (expf, tanh, __builtin_powf ...):
//  arithmetic a polynomial or an identity can replace inline. Round 8:
//  the report told a loop calling __builtin_prefetch, pthread_join or
//  sysconf to replace the call "by inline arithmetic".
static bool
s_math_call (const char *name)
{
    static const char *const math[] = {
        "exp",   "exp2",  "expm1", "log",   "log2",  "log10", "log1p", "pow",
        "sqrt",  "cbrt",  "sin",   "cos",   "tan",   "asin",  "acos",  "atan",
        "atan2", "sinh",  "cosh",  "tanh",  "asinh", "acosh", "atanh", "erf",
        "erfc",  "tgamma", "lgamma", "fmod", "hypot", "sincos",
    };
    if (!strncmp (name, "__builtin_", 10))
        name += 10;
    size_t len = strlen (name);
    for (size_t i = 0; i < sizeof math / sizeof math[0]; i++) {
        size_t m = strlen (math[i]);
        if (!strncmp (name, math[i], m)
            && (len == m || (len == m + 1 && (name[m] == 'f' || name[m] == 'l'))))
            return true;
    }
    return false;
}

//  The loop at source line AT in LOOPS (*N of them), added when new;
//  NULL when the table is full.
static s_vec_loop_t *
s_loop_at (s_vec_loop_t *loops, int *n, long at)
{
    for (int k = 0; k < *n; k++)
        if (loops[k].line == at)
            return &loops[k];
    if (*n == S_VEC_LINES)
        return NULL;
    memset (&loops[*n], 0, sizeof loops[0]);
    loops[*n].line = at;
    return &loops[(*n)++];
}

//  A loop kept scalar by a call that is no arithmetic (a thread's start
//  or join, a function of the kernel's own that GCC did not inline):
//  these share one line of the summary (s_plain_calls).
static bool
s_plain_call (const s_vec_loop_t *l)
{
    return !l->n_widths && !l->simd && l->call[0] && strcmp (l->call, "__builtin_memcpy")
           && strcmp (l->call, "__builtin_memset") && !s_math_call (l->call)
           && strcmp (l->call, "__builtin_prefetch");
}

//  "- lines 7, 9" (or "- line 7") for the LOOPS (N_LOOPS) that PICK
//  takes, nothing when none; returns how many.
static int
s_lines (FILE *f, const s_vec_loop_t *loops, int n_loops, bool (*pick) (const s_vec_loop_t *))
{
    int count = 0;
    for (int i = 0; i < n_loops; i++)
        count += pick (&loops[i]);
    if (!count)
        return 0;
    fprintf (f, "- line%s", count == 1 ? "" : "s");
    const char *sep = " ";
    for (int i = 0; i < n_loops; i++)
        if (pick (&loops[i])) {
            fprintf (f, "%s%ld", sep, loops[i].line);
            sep = ", ";
        }
    return count;
}

//  A loop of vector operations already (intrinsics, vector types), which
//  the auto-vectoriser leaves as it is: these share one line too
//  (s_vector_loops).
static bool
s_vector_loop (const s_vec_loop_t *l)
{
    return !l->n_widths && l->simd;
}

//  Round 31: an intrinsics kernel's report listed loop after loop "not
//  auto-vectorised: its statements are vector operations already", each
//  with the vectoriser's own words, and read as noise: one line names
//  them all.
static int
s_vector_loops (FILE *f, const s_vec_loop_t *loops, int n_loops)
{
    int count = s_lines (f, loops, n_loops, s_vector_loop);
    if (!count)
        return 0;
    fprintf (f, ": not auto-vectorised: %s statements are vector operations already "
             "(intrinsics or vector types), nothing for the vectoriser to do\n",
             count == 1 ? "its" : "their");
    return count;
}

//  Round 12: one line each for six such loops ("nothing to fix unless
//  this is the hot loop") cost a prompt lines that said nothing. One line
//  names them all, each function once.
static void
s_plain_calls (FILE *f, const s_vec_loop_t *loops, int n_loops)
{
    int count = s_lines (f, loops, n_loops, s_plain_call);
    if (!count)
        return;
    fprintf (f, ": not vectorised: %s ", count == 1 ? "it calls" : "they call");
    const char *sep = "";
    for (int i = 0; i < n_loops; i++) {
        if (!s_plain_call (&loops[i]))
            continue;
        bool named = false;
        for (int j = 0; j < i && !named; j++)
            named = s_plain_call (&loops[j]) && !strcmp (loops[j].call, loops[i].call);
        if (!named) {
            fprintf (f, "%s%s", sep, loops[i].call);
            sep = ", ";
        }
    }
    fputs (", no arithmetic (a library or system call, or a function of the kernel's own "
           "that is not inlined); nothing to fix unless one is the hot loop, and then the "
           "call belongs outside it\n", f);
}

static int
s_widest (const s_vec_loop_t *l)
{
    int widest = 0;
    for (int w = 0; w < l->n_widths; w++)
        widest = l->widths[w] > widest ? l->widths[w] : widest;
    return widest;
}

//  A vectorised loop's line. Round 14: GCC 12 at -O3 -mavx512f reports
//  a loop twice, 64-byte then 32-byte vectors: the second is the
//  vectorised epilogue, for the iterations after the last full wide
//  vector. Read as "also a copy with 32-byte vectors", the model took it
//  that GCC prefers 256-bit vectors and added a pragma for the width. A
//  loop GCC vectorised only narrower than the others (a short trip
//  count, wider data) is said to be so.
static void
s_vec_widths (FILE *f, const s_vec_loop_t *l, int widest_all)
{
    int widest = s_widest (l);
    fprintf (f, "- line %ld: vectorised, %d-byte vectors", l->line, widest);
    if (widest < widest_all)
        fprintf (f, ", narrower than the %d-byte vectors of other loops (GCC picked this "
                 "width for this loop's trip count or data types)", widest_all);
    int copies = 0;
    for (int w = 0; w < l->n_widths; w++) {
        if (l->widths[w] == widest)
            continue;
        fprintf (f, "%s%d-byte", copies ? " and " : "; its ", l->widths[w]);
        copies++;
    }
    if (copies)
        fprintf (f, " cop%s the loop's remainder (epilogue), for the iterations left "
                 "after the last full %d-byte vector", copies == 1 ? "y is" : "ies are", widest);
    fputs ("\n", f);
}

//  Whether the loop at LINE of SOURCE (SIZE bytes; its header line and
//  the two after it) starts or joins threads: the call's name into CALL.
static bool
s_thread_call (const char *source, size_t size, long line, char *call, size_t call_size)
{
    static const char *const names[] = { "pthread_join", "pthread_create", "thrd_join",
                                         "thrd_create" };
    const char *p = source, *end = source ? source + size : NULL;
    for (long at = 1; p && p < end && at < line; at++) {
        p = memchr (p, '\n', (size_t) (end - p));
        p = p ? p + 1 : NULL;
    }
    if (!p || p >= end)
        return false;
    const char *stop = p;
    for (int k = 0; k < 3 && stop && stop < end; k++) {
        stop = memchr (stop, '\n', (size_t) (end - stop));
        stop = stop ? stop + 1 : end;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len = strlen (names[i]);
        for (const char *q = p; q + len <= stop; q++)
            if (!strncmp (q, names[i], len) && (q == source || !(isalnum ((unsigned char) q[-1])
                                                                 || q[-1] == '_'))) {
                snprintf (call, call_size, "%s", names[i]);
                return true;
            }
    }
    return false;
}

//  One loop's line of the summary; SIMD_CODE: the code is explicit SIMD;
//  WIDEST: the widest vectors of any loop of the report.
static void
s_vec_line (FILE *f, const s_vec_loop_t *l, bool simd_code, int widest)
{
    if (l->n_widths)
        s_vec_widths (f, l, widest);
    else if (l->call[0] && (!strcmp (l->call, "__builtin_memcpy")
                            || !strcmp (l->call, "__builtin_memset")))
        fprintf (f, "- line %ld: a copy or fill GCC turned into a call to %s (the library's "
                 "own vector code): nothing to fix\n", l->line, l->call + 10);
    else if (l->call[0] && s_math_call (l->call))
        fprintf (f, "- line %ld: not vectorised: it calls %s, which GCC does not vectorise "
                 "at these flags; it vectorises once the call is replaced by inline "
                 "arithmetic (a polynomial, an identity)\n", l->line, l->call);
    else if (!strcmp (l->call, "__builtin_prefetch"))
        fprintf (f, "- line %ld: not vectorised: the loop holds a __builtin_prefetch, which "
                 "GCC does not vectorise past; on a linear walk the hardware prefetcher "
                 "already fetches ahead, so without the hint the loop may vectorise\n",
                 l->line);
    else if (l->branch && simd_code)
        //  Round 9: the blocking loops around a GEMM's intrinsics tile
        //  (`j < jb + JB ? ... : ...` bounds) got the clamp advice.
        fprintf (f, "- line %ld: not auto-vectorised because of a branch in the loop (%s); in "
                 "explicit-SIMD code usually a loop around the vector code (block bounds, a "
                 "tail, a work loop), which needs nothing; only a scalar loop doing the "
                 "element math would gain from a branch-free form\n", l->line, l->reason);
    else if (l->branch)
        //  Round 6: GCC made compare and blend of clamps, or left a loop
        //  scalar for an if; a pragma or a branch-free form fixed it.
        //  Round 25: the model's ternaries with arithmetic in an arm kept
        //  its loop scalar (163 ms against 14 ms) and the line did not say
        //  which construct; GCC 12 at -O3 -std=c11 -mavx2, measured:
        //  a > 5 ? a : a * a * 0.5f + 1 and the same with the arm's value
        //  computed before it stay scalar, a > 0 ? a : 0 and the bit mask
        //  blend vectorise, sqrtf(x) stays scalar.
        fprintf (f, "- line %ld: not vectorised because of a branch in the loop (%s): an if "
                 "or ?: here that GCC could not turn into a select. With -std=c11 trapping "
                 "math is on, so GCC runs no float operation that only one side of a ?: "
                 "needs, even one written before it (it moves it into that side): "
                 "c ? a : a * a * 0.5f + 1.0f stays a branch where v = v < lo ? lo : v "
                 "(a choice between plain values, each clamp its own select) does not, and "
                 "a sqrtf is a branch too (errno). Forms that vectorise: compute both values, "
                 "then blend their bits by a mask (memcpy each into a uint32_t, m = "
                 "-(uint32_t) (c), r = (a_bits & m) | (b_bits & ~m), memcpy back), or a "
                 "select in intrinsics\n", l->line, l->reason);
    else
        fprintf (f, "- line %ld: not vectorised: %s\n", l->line, l->reason);
}

bool
kf_compile_source_simd (const char *source, size_t size)
{
    if (!source)
        return false;
    char *code = strndup (source, size);
    if (!code)
        return false;
    kf_descriptor_strip (code);
    //  Code that computes in vector registers, not code that only loads
    //  and stores them (round 25: scalar math streamed out through
    //  _mm256_stream_ps read as explicit SIMD).
    bool simd = kf_descriptor_simd_math (code);
    free (code);
    return simd;
}

char *
kf_compile_vec_summary (const char *report, const char *source_name, int *vectorised)
{
    return kf_compile_vec_summary_src (report, source_name, NULL, 0, vectorised);
}

char *
kf_compile_vec_summary_src (const char *report, const char *source_name, const char *source,
                            size_t source_size, int *vectorised)
{
    *vectorised = 0;
    if (!report)
        return NULL;
    s_vec_loop_t loops[S_VEC_LINES];
    int n_loops = 0;
    size_t n = strlen (source_name);
    //  The loop GCC last said it could not vectorise: the reasons that
    //  follow are its, wherever they point (a statement's line, or the
    //  intrinsics header the statement was inlined from).
    s_vec_loop_t *failing = NULL;
    bool explicit_simd = false;
    for (const char *line = report; *line;) {
        const char *end = strchr (line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen (line);
        const char *next = end ? end + 1 : line + len;
        bool own = len > n && !strncmp (line, source_name, n) && line[n] == ':';
        const char *opt = strstr (line, ": optimized: ");
        const char *missed = strstr (line, ": missed: ");
        if (opt && opt >= line + len)
            opt = NULL;
        if (missed && missed >= line + len)
            missed = NULL;
        //  A continuation (" scalar_type: __m512_u") or a header's line:
        //  what it says of vector types belongs to the failing loop.
        if (!own) {
            if (failing && s_names_vector (line, len))
                failing->simd = explicit_simd = true;
            if (failing && missed && !failing->reason[0])
                s_clean (failing->reason, sizeof failing->reason, missed + 10,
                         (size_t) (line + len - missed - 10));
            line = next;
            continue;
        }
        char *after;
        long at = strtol (line + n + 1, &after, 10);
        s_vec_loop_t *l = at > 0 && (opt || missed) ? s_loop_at (loops, &n_loops, at) : NULL;
        if (!l) {
            line = next;
            continue;
        }
        if (opt) {
            failing = NULL;
            const char *using = strstr (opt, "using ");
            int bytes = using && using < line + len ? atoi (using + 6) : 0;
            bool seen = false;
            for (int w = 0; w < l->n_widths; w++)
                seen |= l->widths[w] == bytes;
            if (!seen && l->n_widths < 4 && strstr (opt, "loop vectorized"))
                l->widths[l->n_widths++] = bytes;
        }
        else {
            //  The first specific reason: "couldn't vectorize loop" says
            //  only that it failed; the next lines say why.
            const char *why = missed + 10;
            size_t wl = (size_t) (line + len - why);
            if (!strncmp (why, "couldn't vectorize loop", 23))
                failing = l;
            else {
                s_vec_loop_t *to = failing ? failing : l;
                if (s_names_vector (why, wl))
                    to->simd = explicit_simd = true;
                s_note_call (to, why, wl);
                if (!to->reason[0])
                    s_clean (to->reason, sizeof to->reason, why, wl);
            }
        }
        line = next;
    }
    //  Loops in source order; a loop vectorised in one copy counts as
    //  vectorised (the others are copies the compiler made: an epilogue).
    for (int i = 1; i < n_loops; i++)
        for (int j = i; j > 0 && loops[j].line < loops[j - 1].line; j--) {
            s_vec_loop_t t = loops[j];
            loops[j] = loops[j - 1];
            loops[j - 1] = t;
        }
    int yes = 0, no = 0, simd = 0, widest = 0;
    for (int i = 0; i < n_loops; i++) {
        s_vec_loop_t *l = &loops[i];
        widest = s_widest (l) > widest ? s_widest (l) : widest;
        l->branch = !l->n_widths && !l->simd && !l->call[0] && l->reason[0]
                    && s_branch_reason (l->reason);
        //  Round 52: a pthread_join loop's "control flow in loop" read as
        //  an arithmetic select GCC could not make: its source says the
        //  call, as a report of a clobbering call would.
        if (l->branch && s_thread_call (source, source_size, l->line, l->call, sizeof l->call))
            l->branch = false;
        yes += l->n_widths > 0;
        no += !l->n_widths && (l->reason[0] || l->simd);
        simd += !l->n_widths && l->simd;
    }
    *vectorised = yes;
    if (!yes && !no)
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    fprintf (f, "%s %d loop%s vectorised, %d not.\n", KF_COMPILE_VEC_MARK, yes,
             yes == 1 ? "" : "s", no);
    //  Round 6: "0 loops vectorised, 22 not" of an AVX-512 intrinsics
    //  kernel read as "nothing is vectorised". Round 7: a report need not
    //  name a vector type (loops reported for a call or control flow), so
    //  the source is read too.
    bool simd_code = explicit_simd || kf_compile_source_simd (source, source_size);
    if (explicit_simd)
        fprintf (f, "This code is explicit SIMD (intrinsics or vector types): the report is "
                 "about GCC's auto-vectoriser only, which leaves loops of vector operations "
                 "as they are; %d of the loops not vectorised already work on whole vectors, "
                 "so \"not vectorised\" there says nothing of scalar code.\n", simd);
    else if (simd_code)
        fprintf (f, "This code is explicit SIMD (intrinsics or vector types, in its source): "
                 "the report is about GCC's auto-vectoriser only, which leaves loops of "
                 "vector operations as they are, so \"not vectorised\" of a loop of "
                 "intrinsics says nothing of scalar code.\n");
    //  Loops a branch kept scalar first, so the limit never hides them.
    int shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n_loops && shown < KF_COMPILE_VEC_SHOWN; i++) {
            const s_vec_loop_t *l = &loops[i];
            if ((pass == 0) != l->branch || !(l->n_widths || l->reason[0] || l->simd)
                || s_plain_call (l) || s_vector_loop (l))
                continue;
            s_vec_line (f, l, simd_code, widest);
            shown++;
        }
    shown += s_vector_loops (f, loops, n_loops);
    s_plain_calls (f, loops, n_loops);
    for (int i = 0; i < n_loops; i++)
        shown += s_plain_call (&loops[i]);
    if (yes + no > shown)
        fprintf (f, "- (%d more loop%s not listed)\n", yes + no - shown,
                 yes + no - shown == 1 ? "" : "s");
    //  The summary does not know the flags; a 64-byte vector in the
    //  report says AVX-512 is on and GCC uses its full width.
    if (widest >= 64)
        fprintf (f, "At these flags GCC vectorises plain loops with %d-byte (AVX-512) "
                 "vectors; a narrower copy of a loop is its remainder, so no pragma or "
                 "target attribute is needed for the vector width.\n", widest);
    fclose (f);
    return text;
}
