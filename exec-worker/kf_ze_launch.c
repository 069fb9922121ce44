/*  kf_ze_launch.c - the KF-SPIRV bundle and the kf-launch language.
 *
 *  The language is deliberately small (docs/intel.md has the grammar):
 *  integer expressions over the task's shapes and the source's integer
 *  macros, one line per kernel launch. Everything is checked here, before
 *  a device is touched, and every error names the line it is about, since
 *  the message goes back to the model that wrote the line.
 */
#include "kf_ze_launch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_MAGIC "KF-SPIRV 1\n"
#define S_MAX_TENSORS 64

bool
kf_ze_is_bundle (const void *data, size_t size)
{
    return data && size >= strlen (S_MAGIC) && memcmp (data, S_MAGIC, strlen (S_MAGIC)) == 0;
}

//  One header line of the bundle at *P (below END), without its newline.
static int
s_line (const char **p, const char *end, char *line, size_t line_size)
{
    const char *nl = memchr (*p, '\n', (size_t) (end - *p));
    if (!nl || (size_t) (nl - *p) >= line_size)
        return -1;
    memcpy (line, *p, (size_t) (nl - *p));
    line[nl - *p] = 0;
    *p = nl + 1;
    return 0;
}

int
kf_ze_bundle_parse (const void *data, size_t size, kf_ze_bundle_t *b, char *why,
                    size_t why_size)
{
    memset (b, 0, sizeof *b);
    if (!kf_ze_is_bundle (data, size)) {
        snprintf (why, why_size, "not a KF-SPIRV bundle (the compile worker's opencl artifact)");
        return -1;
    }
    const char *p = (const char *) data + strlen (S_MAGIC);
    const char *end = (const char *) data + size;
    char line[256];
    unsigned long long source = 0, spirv = 0;
    bool have_source = false, have_spirv = false;
    while (true) {
        if (s_line (&p, end, line, sizeof line)) {
            snprintf (why, why_size, "bundle: truncated or over-long header line");
            return -1;
        }
        if (!line[0])
            break;
        if (!strncmp (line, "define ", 7)) {
            const char *def = line + 7;
            const char *eq = strchr (def, '=');
            size_t name_len = eq ? (size_t) (eq - def) : strlen (def);
            const char *value = eq ? eq + 1 : "1";       // -DNAME means NAME=1
            if (b->n_defines >= KF_ZE_MAX_DEFINES || name_len == 0
                || name_len >= KF_ZE_NAME_MAX || strlen (value) >= KF_ZE_NAME_MAX) {
                snprintf (why, why_size, "bundle: too many or too long defines");
                return -1;
            }
            memcpy (b->define_name[b->n_defines], def, name_len);
            b->define_name[b->n_defines][name_len] = 0;
            snprintf (b->define_value[b->n_defines], KF_ZE_NAME_MAX, "%s", value);
            b->n_defines++;
        }
        else if (sscanf (line, "source %llu", &source) == 1)
            have_source = true;
        else if (sscanf (line, "spirv %llu", &spirv) == 1)
            have_spirv = true;
        else {
            snprintf (why, why_size, "bundle: unknown header line '%.60s'", line);
            return -1;
        }
    }
    size_t left = (size_t) (end - p);
    if (!have_source || !have_spirv || source > left || spirv != left - source
        || spirv < 20) {
        snprintf (why, why_size, "bundle: sizes do not match its contents");
        return -1;
    }
    b->source = p;
    b->source_size = (size_t) source;
    b->spirv = (const unsigned char *) p + source;
    b->spirv_size = (size_t) spirv;
    //  SPIR-V's magic number, in either byte order.
    static const unsigned char le[4] = { 0x03, 0x02, 0x23, 0x07 };
    static const unsigned char be[4] = { 0x07, 0x23, 0x02, 0x03 };
    if (memcmp (b->spirv, le, 4) && memcmp (b->spirv, be, 4)) {
        snprintf (why, why_size, "bundle: the module is not SPIR-V");
        return -1;
    }
    return 0;
}

// --------------------------------------------------------------------------
//  Names an expression can use

typedef struct {
    const char *name;
    int dtype_size;
    int rank;
    int64_t shape[8];
} s_tensor_t;

typedef struct {
    const kf_ze_bundle_t *b;
    json_t *task;
    s_tensor_t tensors[S_MAX_TENSORS];
    int n_tensors, n_in;
    kf_ze_plan_t *plan;
    //  the line being read
    const char *p;
    int line_no;
    char *why;
    size_t why_size;
    bool failed;
} s_ctx_t;

static int
s_fail (s_ctx_t *c, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    char msg[320];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    snprintf (c->why, c->why_size, "kf-launch (source line %d): %s", c->line_no, msg);
    c->failed = true;
    return -1;
}

static void
s_skip (s_ctx_t *c)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
}

//  Reads an identifier into NAME (empty when there is none).
static void
s_ident (s_ctx_t *c, char name[KF_ZE_NAME_MAX])
{
    s_skip (c);
    size_t n = 0;
    while ((isalnum ((unsigned char) c->p[n]) || c->p[n] == '_') && n + 1 < KF_ZE_NAME_MAX)
        n++;
    if (n && isdigit ((unsigned char) c->p[0]))
        n = 0;
    memcpy (name, c->p, n);
    name[n] = 0;
    c->p += n;
}

static bool
s_accept (s_ctx_t *c, char ch)
{
    s_skip (c);
    if (*c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static const s_tensor_t *
s_tensor (s_ctx_t *c, const char *name, int *index)
{
    for (int i = 0; i < c->n_tensors; i++)
        if (!strcmp (c->tensors[i].name, name)) {
            if (index)
                *index = i;
            return &c->tensors[i];
        }
    return NULL;
}

//  An integer literal (decimal or 0x), the whole of TEXT; -1 if not.
static int
s_integer (const char *text, int64_t *v)
{
    while (isspace ((unsigned char) *text))
        text++;
    char *end;
    long long x = strtoll (text, &end, 0);
    if (end == text)
        return -1;
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
        end++;
    while (isspace ((unsigned char) *end))
        end++;
    if (*end)
        return -1;
    *v = x;
    return 0;
}

//  NAME as an integer macro: the build's -D flags first (a tuning point
//  overrides the source's default), then the first `#define NAME INT` in
//  the source.
static int
s_macro (s_ctx_t *c, const char *name, int64_t *v)
{
    for (int i = 0; i < c->b->n_defines; i++)
        if (!strcmp (c->b->define_name[i], name)) {
            if (s_integer (c->b->define_value[i], v))
                return s_fail (c, "'%s' is %s here, not an integer", name, c->b->define_value[i]);
            return 0;
        }
    const char *s = c->b->source, *end = s + c->b->source_size;
    size_t len = strlen (name);
    while (s < end) {
        const char *nl = memchr (s, '\n', (size_t) (end - s));
        const char *eol = nl ? nl : end;
        const char *q = s;
        while (q < eol && (*q == ' ' || *q == '\t'))
            q++;
        if (q < eol && *q == '#') {
            q++;
            while (q < eol && (*q == ' ' || *q == '\t'))
                q++;
            if (eol - q > 7 && !strncmp (q, "define", 6) && (q[6] == ' ' || q[6] == '\t')) {
                q += 6;
                while (q < eol && (*q == ' ' || *q == '\t'))
                    q++;
                if ((size_t) (eol - q) > len && !strncmp (q, name, len)
                    && (q[len] == ' ' || q[len] == '\t')) {
                    char text[64];
                    size_t n = (size_t) (eol - q - (ptrdiff_t) len);
                    if (n >= sizeof text)
                        n = sizeof text - 1;
                    memcpy (text, q + len, n);
                    text[n] = 0;
                    char *comment = strstr (text, "/*");
                    if (comment)
                        *comment = 0;
                    if ((comment = strstr (text, "//")))
                        *comment = 0;
                    if (s_integer (text, v))
                        return s_fail (c, "'%s' is not defined as an integer literal", name);
                    return 0;
                }
            }
        }
        s = nl ? nl + 1 : end;
    }
    return s_fail (c, "unknown name '%s' (a tensor function, a -D tuning parameter or an "
                      "integer #define of the source)", name);
}

static int s_expr (s_ctx_t *c, int64_t *v);
static int s_checked (s_ctx_t *c, int64_t v, int64_t *out);

static int
s_tensor_arg (s_ctx_t *c, const s_tensor_t **t)
{
    char name[KF_ZE_NAME_MAX];
    s_ident (c, name);
    *t = name[0] ? s_tensor (c, name, NULL) : NULL;
    if (!*t)
        return s_fail (c, "'%s' is not a tensor of the task", name);
    return 0;
}

//  numel(t) rows(t) cols(t) dim(t, k) cdiv(a, b) round_up(a, b) min max
static int
s_call (s_ctx_t *c, const char *fn, int64_t *v)
{
    const s_tensor_t *t;
    int64_t a, b;
    if (!strcmp (fn, "numel") || !strcmp (fn, "rows") || !strcmp (fn, "cols")) {
        if (s_tensor_arg (c, &t) || !s_accept (c, ')'))
            return s_fail (c, "%s() takes one tensor name", fn);
        int64_t n = 1;
        for (int d = 0; d < t->rank; d++)
            n *= t->shape[d];
        int64_t last = t->rank ? t->shape[t->rank - 1] : 1;
        *v = !strcmp (fn, "numel") ? n : !strcmp (fn, "cols") ? last : n / last;
        return 0;
    }
    if (!strcmp (fn, "dim")) {
        if (s_tensor_arg (c, &t) || !s_accept (c, ',') || s_expr (c, &a) || !s_accept (c, ')'))
            return s_fail (c, "dim() takes a tensor name and an index");
        if (a < 0)
            a += t->rank;
        if (a < 0 || a >= t->rank)
            return s_fail (c, "dim(%s, ...): index out of range for rank %d", t->name, t->rank);
        *v = t->shape[a];
        return 0;
    }
    static const char *const two[] = { "cdiv", "round_up", "min", "max", NULL };
    for (int i = 0; two[i]; i++) {
        if (strcmp (fn, two[i]))
            continue;
        if (s_expr (c, &a) || !s_accept (c, ',') || s_expr (c, &b) || !s_accept (c, ')'))
            return s_fail (c, "%s() takes two expressions", fn);
        if (i < 2 && b <= 0)
            return s_fail (c, "%s(): the divisor must be positive", fn);
        *v = i == 0 ? (a + b - 1) / b : i == 1 ? (a + b - 1) / b * b : i == 2 ? (a < b ? a : b)
                                                                           : (a > b ? a : b);
        return 0;
    }
    return s_fail (c, "unknown function '%s' (numel, rows, cols, dim, cdiv, round_up, min, max)",
                   fn);
}

static int
s_primary (s_ctx_t *c, int64_t *v)
{
    s_skip (c);
    if (s_accept (c, '(')) {
        if (s_expr (c, v))
            return -1;
        return s_accept (c, ')') ? 0 : s_fail (c, "')' expected");
    }
    if (isdigit ((unsigned char) *c->p)) {
        char *end;
        long long x = strtoll (c->p, &end, 0);
        c->p = end;
        return s_checked (c, x, v);
    }
    char name[KF_ZE_NAME_MAX];
    s_ident (c, name);
    if (!name[0])
        return s_fail (c, "expression expected at '%.20s'", c->p);
    if (s_accept (c, '('))
        return s_call (c, name, v);
    return s_macro (c, name, v);
}

static int
s_unary (s_ctx_t *c, int64_t *v)
{
    if (s_accept (c, '-')) {
        if (s_unary (c, v))
            return -1;
        *v = -*v;
        return 0;
    }
    return s_primary (c, v);
}

//  Products and sums kept below 2^62: a launch never needs more, and an
//  overflow would otherwise wrap into a plausible size.
static int
s_checked (s_ctx_t *c, int64_t v, int64_t *out)
{
    if (v > ((int64_t) 1 << 62) || v < -((int64_t) 1 << 62))
        return s_fail (c, "value out of range");
    *out = v;
    return 0;
}

static int
s_term (s_ctx_t *c, int64_t *v)
{
    if (s_unary (c, v))
        return -1;
    while (true) {
        s_skip (c);
        char op = *c->p;
        //  "*/" closes the comment the line is in; it is no product.
        if ((op != '*' && op != '/' && op != '%') || (op == '*' && c->p[1] == '/'))
            return 0;
        c->p++;
        int64_t r;
        if (s_unary (c, &r))
            return -1;
        if (op == '*') {
            __int128 p = (__int128) *v * r;
            if (p > ((__int128) 1 << 62) || p < -((__int128) 1 << 62))
                return s_fail (c, "value out of range");
            *v = (int64_t) p;
        }
        else if (r == 0)
            return s_fail (c, "division by zero");
        else
            *v = op == '/' ? *v / r : *v % r;
    }
}

static int
s_expr (s_ctx_t *c, int64_t *v)
{
    if (s_term (c, v))
        return -1;
    while (true) {
        s_skip (c);
        char op = *c->p;
        if (op != '+' && op != '-')
            return 0;
        c->p++;
        int64_t r;
        if (s_term (c, &r) || s_checked (c, op == '+' ? *v + r : *v - r, v))
            return -1;
    }
}

// --------------------------------------------------------------------------
//  Lines

static int
s_scalar (s_ctx_t *c, const char *name, double *v)
{
    json_t *s = json_object_get (json_object_get (c->task, "scalars"), name);
    if (!json_is_number (s))
        return -1;
    *v = json_number_value (s);
    return 0;
}

static int
s_scratch_index (s_ctx_t *c, const char *name)
{
    for (int i = 0; i < c->plan->n_scratch; i++)
        if (!strcmp (c->plan->scratch_name[i], name))
            return i;
    return -1;
}

//  `:type` after an argument, or DFLT.
static int
s_type (s_ctx_t *c, const char *dflt, char type[16])
{
    snprintf (type, 16, "%s", dflt);
    if (!s_accept (c, ':'))
        return 0;
    char name[KF_ZE_NAME_MAX];
    s_ident (c, name);
    static const char *const known[] = { "int", "uint", "long", "ulong", "float", "double", NULL };
    for (int i = 0; known[i]; i++)
        if (!strcmp (name, known[i])) {
            snprintf (type, 16, "%s", known[i]);
            return 0;
        }
    return s_fail (c, "unknown argument type '%s' (int, uint, long, ulong, float, double)", name);
}

static int
s_value (s_ctx_t *c, kf_ze_arg_t *a, const char *type, double d, int64_t i, bool is_float)
{
    a->kind = KF_ZE_ARG_VALUE;
    if (!strcmp (type, "float")) {
        float f = is_float ? (float) d : (float) i;
        a->size = sizeof f;
        memcpy (a->value, &f, sizeof f);
    }
    else if (!strcmp (type, "double")) {
        double f = is_float ? d : (double) i;
        a->size = sizeof f;
        memcpy (a->value, &f, sizeof f);
    }
    else if (is_float)
        return s_fail (c, "a scalar of the task or a float literal passes as float or "
                          "double, not %s", type);
    else if (!strcmp (type, "int") || !strcmp (type, "uint")) {
        if (!strcmp (type, "int") ? (i < INT32_MIN || i > INT32_MAX) : (i < 0 || i > UINT32_MAX))
            return s_fail (c, "%lld does not fit a %s argument (use :long)", (long long) i, type);
        int32_t x = (int32_t) (uint32_t) i;
        a->size = sizeof x;
        memcpy (a->value, &x, sizeof x);
    }
    else {
        if (!strcmp (type, "ulong") && i < 0)
            return s_fail (c, "%lld is negative for a ulong argument", (long long) i);
        a->size = sizeof i;
        memcpy (a->value, &i, sizeof i);
    }
    return 0;
}

static int
s_arg (s_ctx_t *c, kf_ze_arg_t *a)
{
    memset (a, 0, sizeof *a);
    s_skip (c);
    const char *start = c->p;
    char name[KF_ZE_NAME_MAX], type[16];
    s_ident (c, name);
    s_skip (c);
    bool alone = *c->p == ',' || *c->p == ')' || *c->p == ':';
    if (!strcmp (name, "local") && s_accept (c, '(')) {
        int64_t bytes;
        if (s_expr (c, &bytes) || !s_accept (c, ')'))
            return s_fail (c, "local() takes a size in bytes");
        if (bytes <= 0 || bytes > (1 << 20))
            return s_fail (c, "local(%lld): bytes must be in 1..1048576", (long long) bytes);
        a->kind = KF_ZE_ARG_LOCAL;
        a->size = (size_t) bytes;
        return 0;
    }
    if (name[0] && alone) {
        int index;
        double d;
        if (s_tensor (c, name, &index)) {
            a->kind = KF_ZE_ARG_TENSOR;
            a->index = index;
            return *c->p == ':' ? s_fail (c, "tensor '%s' takes no type", name) : 0;
        }
        if ((index = s_scratch_index (c, name)) >= 0) {
            a->kind = KF_ZE_ARG_SCRATCH;
            a->index = index;
            return *c->p == ':' ? s_fail (c, "scratch '%s' takes no type", name) : 0;
        }
        if (s_scalar (c, name, &d) == 0)
            return s_type (c, "float", type) ? -1 : s_value (c, a, type, d, 0, true);
    }
    //  A number with a point or an exponent is a float literal (1e-5),
    //  passed as float or double; anything else is an integer expression.
    c->p = start;
    char *end;
    double d = strtod (start, &end);
    bool fraction = false;
    for (const char *q = start; q < end; q++)
        fraction |= *q == '.' || *q == 'e' || *q == 'E';
    if (end > start && fraction && strncasecmp (start, "0x", 2) != 0) {
        c->p = end;
        return s_type (c, "float", type) ? -1 : s_value (c, a, type, d, 0, true);
    }
    int64_t v;
    if (s_expr (c, &v) || s_type (c, "int", type))
        return -1;
    return s_value (c, a, type, 0, v, false);
}

//  global=E[,E[,E]] or local=...: up to three expressions into SIZES.
static int
s_sizes (s_ctx_t *c, const char *key, uint64_t sizes[3], int *dims)
{
    *dims = 0;
    do {
        int64_t v;
        if (*dims == 3)
            return s_fail (c, "%s= has more than three dimensions", key);
        if (s_expr (c, &v))
            return -1;
        if (v <= 0)
            return s_fail (c, "%s= size %lld: must be positive", key, (long long) v);
        sizes[(*dims)++] = (uint64_t) v;
    } while (s_accept (c, ','));
    return 0;
}

static int
s_launch_line (s_ctx_t *c)
{
    kf_ze_plan_t *plan = c->plan;
    if (plan->n_launches >= KF_ZE_MAX_LAUNCHES)
        return s_fail (c, "more than %d launches", KF_ZE_MAX_LAUNCHES);
    kf_ze_launch_t *l = &plan->launches[plan->n_launches];
    memset (l, 0, sizeof *l);
    s_ident (c, l->kernel);
    if (!l->kernel[0] || !s_accept (c, '('))
        return s_fail (c, "expected KERNEL(ARGS) global=... local=...");
    if (!s_accept (c, ')')) {
        do {
            if (l->n_args >= KF_ZE_MAX_ARGS)
                return s_fail (c, "more than %d arguments", KF_ZE_MAX_ARGS);
            if (s_arg (c, &l->args[l->n_args++]))
                return -1;
        } while (s_accept (c, ','));
        if (!s_accept (c, ')'))
            return s_fail (c, "',' or ')' expected in the arguments of %s", l->kernel);
    }
    int gdims = 0, ldims = 0;
    while (true) {
        char key[KF_ZE_NAME_MAX];
        s_ident (c, key);
        if (!key[0])
            break;
        if (!s_accept (c, '='))
            return s_fail (c, "'=' expected after %s", key);
        if (!strcmp (key, "global")) {
            if (s_sizes (c, "global", l->global, &gdims))
                return -1;
        }
        else if (!strcmp (key, "local")) {
            if (s_sizes (c, "local", l->local, &ldims))
                return -1;
        }
        else
            return s_fail (c, "unknown key '%s' (global, local)", key);
    }
    s_skip (c);
    if (*c->p && strncmp (c->p, "*/", 2) != 0)
        return s_fail (c, "unexpected '%.20s'", c->p);
    if (!gdims || !ldims)
        return s_fail (c, "%s needs both global= and local=", l->kernel);
    if (gdims != ldims)
        return s_fail (c, "global= and local= of %s have different dimensions", l->kernel);
    uint64_t items = 1;
    for (int d = 0; d < gdims; d++) {
        if (l->global[d] % l->local[d])
            return s_fail (c, "global size %llu is not a multiple of local size %llu "
                              "(Level Zero launches whole work-groups)",
                           (unsigned long long) l->global[d], (unsigned long long) l->local[d]);
        if (l->global[d] / l->local[d] > UINT32_MAX)
            return s_fail (c, "more than 2^32 work-groups in one dimension");
        l->groups[d] = (uint32_t) (l->global[d] / l->local[d]);
        items *= l->local[d];
    }
    if (items > 1024)
        return s_fail (c, "local size of %llu work-items: at most 1024", (unsigned long long) items);
    for (int d = gdims; d < 3; d++) {
        l->global[d] = l->local[d] = 1;
        l->groups[d] = 1;
    }
    l->dims = gdims;
    plan->n_launches++;
    return 0;
}

static int
s_scratch_line (s_ctx_t *c)
{
    kf_ze_plan_t *plan = c->plan;
    if (plan->n_scratch >= KF_ZE_MAX_SCRATCH)
        return s_fail (c, "more than %d scratch buffers", KF_ZE_MAX_SCRATCH);
    char *name = plan->scratch_name[plan->n_scratch];
    s_ident (c, name);
    if (!name[0] || s_tensor (c, name, NULL) || s_scratch_index (c, name) >= 0)
        return s_fail (c, "kf-scratch: NAME BYTES, with a name no tensor has");
    int64_t bytes;
    if (s_expr (c, &bytes))
        return -1;
    if (bytes <= 0 || bytes > ((int64_t) 1 << 40))
        return s_fail (c, "scratch '%s': %lld bytes", name, (long long) bytes);
    plan->scratch_bytes[plan->n_scratch++] = (uint64_t) bytes;
    return 0;
}

static int
s_tensors (s_ctx_t *c)
{
    static const char *const lists[] = { "inputs", "outputs" };
    for (int k = 0; k < 2; k++) {
        json_t *list = json_object_get (c->task, lists[k]);
        size_t i;
        json_t *t;
        json_array_foreach (list, i, t) {
            if (c->n_tensors >= S_MAX_TENSORS)
                return s_fail (c, "task: too many tensors");
            s_tensor_t *s = &c->tensors[c->n_tensors++];
            s->name = json_string_value (json_object_get (t, "name"));
            json_t *shape = json_object_get (t, "shape");
            s->rank = (int) json_array_size (shape);
            if (!s->name || s->rank > 8)
                return s_fail (c, "task: a tensor without a name or with rank > 8");
            for (int d = 0; d < s->rank; d++)
                s->shape[d] = json_integer_value (json_array_get (shape, (size_t) d));
        }
        if (k == 0)
            c->n_in = c->n_tensors;
    }
    return 0;
}

int
kf_ze_plan (const kf_ze_bundle_t *b, json_t *task, kf_ze_plan_t *plan, char *why,
            size_t why_size)
{
    memset (plan, 0, sizeof *plan);
    s_ctx_t c = { .b = b, .task = task, .plan = plan, .why = why, .why_size = why_size };
    if (s_tensors (&c))
        return -1;
    //  Two passes: every kf-scratch first, so a launch may name a buffer
    //  declared below it.
    for (int pass = 0; pass < 2; pass++) {
        const char *s = b->source, *end = s + b->source_size;
        c.line_no = 0;
        while (s < end) {
            const char *nl = memchr (s, '\n', (size_t) (end - s));
            size_t len = nl ? (size_t) (nl - s) : (size_t) (end - s);
            c.line_no++;
            const char *key = pass == 0 ? "kf-scratch:" : "kf-launch:";
            char line[1024];
            if (len < sizeof line) {
                memcpy (line, s, len);
                line[len] = 0;
                char *hit = strstr (line, key);
                if (hit) {
                    c.p = hit + strlen (key);
                    if ((pass == 0 ? s_scratch_line (&c) : s_launch_line (&c)) != 0)
                        return -1;
                }
            }
            s = nl ? nl + 1 : end;
        }
    }
    if (plan->n_launches == 0) {
        c.line_no = 0;
        snprintf (why, why_size, "kf-launch: the source has no kf-launch line");
        return -1;
    }
    return 0;
}
