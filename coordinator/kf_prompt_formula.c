/*  kf_prompt_formula.c - a PyTorch reference's forward, read for the
 *  arithmetic and the libm calls it does per output element
 *  (kf_prompt_formula.h).
 *
 *  A small tokenizer, not a Python parser: it knows the operators, the
 *  elementwise functions of torch and torch.nn.functional a task's
 *  forward calls, and a matrix product's names. Anything else (a call it
 *  does not know, indexing, a loop) makes the count "not counted", so a
 *  prompt says nothing rather than a wrong figure.
 */
#include "kf_prompt_formula.h"
#include "kf_prompt_formula_args.h"
#include "kf_prompt_class.h"
#include "kf_json.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
kf_prompt_python_code (const char *src)
{
    char *out = strdup (src);
    for (char *p = out; p && *p;) {
        if (*p == '#') {
            while (*p && *p != '\n')
                *p++ = ' ';
            continue;
        }
        if (*p != '"' && *p != '\'') {
            p++;
            continue;
        }
        char q = *p;
        bool triple = p[1] == q && p[2] == q;
        char *start = p;
        p += triple ? 3 : 1;
        while (*p && !(triple ? (p[0] == q && p[1] == q && p[2] == q) : (*p == q || *p == '\n'))) {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        if (*p && *p != '\n')
            p += triple ? 3 : 1;
        for (char *b = start; b < p; b++)
            if (*b != '\n')
                *b = ' ';
    }
    return out;
}

json_t *
kf_prompt_python_params (const char *src, const char *name)
{
    char needle[64];
    snprintf (needle, sizeof needle, "def %s(", name);
    const char *at = strstr (src, needle);
    if (!at)
        return NULL;
    at += strlen (needle);
    const char *end = strchr (at, ')');
    if (!end)
        return NULL;
    json_t *names = json_array ();
    while (at < end) {
        while (at < end && (isspace ((unsigned char) *at) || *at == ','))
            at++;
        const char *start = at;
        while (at < end && (isalnum ((unsigned char) *at) || *at == '_'))
            at++;
        if (at > start)
            json_array_append_new (names, json_stringn (start, (size_t) (at - start)));
        while (at < end && *at != ',')
            at++;   //  annotations and defaults
    }
    //  Not self.
    if (json_array_size (names) && !strcmp (json_string_value (json_array_get (names, 0)),
                                             "self"))
        json_array_remove (names, 0);
    return names;
}

#define S_BIT(k) (1u << KF_OP_##k)

//  Elementwise functions and the operations each does per element.
static const struct { const char *name; int ops; unsigned kinds; } s_arith[] = {
    { "abs", 1, S_BIT (ABS) }, { "absolute", 1, S_BIT (ABS) },
    { "softsign", 3, S_BIT (ABS) | S_BIT (ADD) | S_BIT (DIV) },
    { "relu", 1, S_BIT (MINMAX) }, { "relu6", 2, S_BIT (MINMAX) },
    { "hardtanh", 2, S_BIT (MINMAX) }, { "clamp", 2, S_BIT (MINMAX) },
    { "clip", 2, S_BIT (MINMAX) }, { "clamp_min", 1, S_BIT (MINMAX) },
    { "clamp_max", 1, S_BIT (MINMAX) }, { "minimum", 1, S_BIT (MINMAX) },
    { "maximum", 1, S_BIT (MINMAX) }, { "fmin", 1, S_BIT (MINMAX) },
    { "fmax", 1, S_BIT (MINMAX) }, { "sqrt", 1, S_BIT (SQRT) },
    { "rsqrt", 2, S_BIT (SQRT) | S_BIT (DIV) }, { "reciprocal", 1, S_BIT (DIV) },
    { "square", 1, S_BIT (MUL) }, { "neg", 1, S_BIT (ADD) }, { "negative", 1, S_BIT (ADD) },
    { "add", 1, S_BIT (ADD) }, { "sub", 1, S_BIT (ADD) }, { "subtract", 1, S_BIT (ADD) },
    { "mul", 1, S_BIT (MUL) }, { "multiply", 1, S_BIT (MUL) }, { "div", 1, S_BIT (DIV) },
    { "divide", 1, S_BIT (DIV) }, { "true_divide", 1, S_BIT (DIV) },
    { "hardsigmoid", 4, S_BIT (ADD) | S_BIT (MUL) | S_BIT (MINMAX) },
    { "hardswish", 5, S_BIT (ADD) | S_BIT (MUL) | S_BIT (MINMAX) },
    { "leaky_relu", 2, S_BIT (MUL) | S_BIT (MINMAX) }, { "where", 1, S_BIT (CMP) },
    { "sign", 1, S_BIT (CMP) },
    //  A scan's running operation: one per element, along its dimension
    //  (round 27: cumsum(x * sigmoid(g)) read "compute: not known").
    { "cumsum", 1, S_BIT (ADD) }, { "cumprod", 1, S_BIT (MUL) },
    { "cummax", 1, S_BIT (MINMAX) }, { "cummin", 1, S_BIT (MINMAX) },
};

//  Functions a compiler makes libm calls of, how many a call makes
//  (softplus: an exp and a log1p; mish: those and a tanh); round 38: the
//  vector instructions a vector of them takes as SIMD code near f32
//  precision: a range reduction and a polynomial (exp about 10: a product
//  and rounding, two multiply-adds, six of the polynomial's, the exponent
//  put in), a division where needed (tanh, sigmoid, atan's reduction).
//  Assumed, not measured: atan(x) * exp(-x*x/8) came to 30, its kernels to 29 cycles a vector.
static const struct { const char *name; int calls, vops; } s_libm[] = {
    { "tanh", 1, 16 }, { "exp", 1, 10 }, { "exp2", 1, 8 }, { "expm1", 1, 14 },
    { "log", 1, 12 }, { "log2", 1, 12 }, { "log10", 1, 13 }, { "log1p", 1, 14 },
    { "erf", 1, 16 }, { "erfc", 1, 20 }, { "sigmoid", 1, 13 }, { "logsigmoid", 2, 26 },
    { "gelu", 1, 20 }, { "silu", 1, 14 }, { "swish", 1, 14 }, { "softplus", 2, 26 },
    { "elu", 1, 12 }, { "selu", 1, 13 }, { "celu", 1, 13 }, { "mish", 3, 42 },
    { "sin", 1, 16 }, { "cos", 1, 16 }, { "tan", 1, 24 }, { "pow", 1, 24 }, { "atan", 1, 16 },
    { "tanhshrink", 1, 17 }, { "cosh", 1, 13 }, { "sinh", 1, 14 }, { "asinh", 1, 26 },
    { "acosh", 1, 26 }, { "atanh", 1, 18 }, { "asin", 1, 18 }, { "acos", 1, 19 },
    { "atan2", 1, 20 }, { "arctan2", 1, 20 }, { "hypot", 1, 4 }, { "cbrt", 1, 16 },
};

const char *
kf_prompt_libm_name (size_t i)
{
    return i < sizeof s_libm / sizeof s_libm[0] ? s_libm[i].name : NULL;
}

int
kf_prompt_libm_vops (const char *name)
{
    for (size_t i = 0; name && i < sizeof s_libm / sizeof s_libm[0]; i++)
        if (!strcmp (s_libm[i].name, name))
            return s_libm[i].vops;
    return 0;
}

static const char *const s_products[] = { "matmul", "mm", "bmm", "linear", "addmm", "einsum",
                                          NULL };

//  Functions of a whole row (the last dimension) an epilogue may apply.
//  Round 18: an RMS norm written as y.pow(2).mean(dim=-1) was read as
//  elementwise work, and its fusion told to finish each tile of outputs
//  in registers, where each row's mean is needed first.
//  Round 19: and a row's largest magnitude, z / z.abs().amax(dim=-1).
//  Round 30: and F.normalize(a @ w.t(), dim=1), each row scaled to unit
//  length, whose fusion was offered as "(bias, activation)".
//  Round 31: and logsumexp(a @ w.t(), dim=1), each row reduced to one value.
//  Round 46: and tanh(x @ w / s).sum(dim=1), whose tanh was counted over
//  the 2048 outputs, not the 2.1 million products it runs on.
static const char *const s_row_fns[] = { "softmax", "log_softmax", "layer_norm", "mean", "amax",
                                         "normalize", "logsumexp", "sum", NULL };
//  Of those, the reductions: row functions over the last dimension only.
static const char *const s_row_reductions[] = { "mean", "amax", "logsumexp", "sum", NULL };

//  Round 24: reductions over the product's rows (each column's), which
//  an epilogue may apply over dim 0 or -2; of them the norms take no
//  positional dimension (their second argument is the order).
//  Round 32: and the softmaxes, which map each column rather than reduce
//  it (softmax(a @ w.t(), dim=0) read as a softmax over each row).
static const char *const s_col_fns[] = { "mean", "sum", "amax", "amin", "norm", "vector_norm",
                                         "softmax", "log_softmax", NULL };
static const char *const s_softmaxes[] = { "softmax", "log_softmax", NULL };
static const char *const s_norms[] = { "norm", "vector_norm", NULL };

//  Python words that bring control flow or a construct the count cannot
//  follow.
static const char *const s_refused[] = { "for", "while", "if", "elif", "else", "lambda", "in",
                                         "not", "and", "or", "with", "try", "yield", "import",
                                         "def", "class", "del", "assert", "global", NULL };

static bool
s_in (const char *word, size_t n, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strlen (list[i]) == n && !strncmp (word, list[i], n))
            return true;
    return false;
}

const char *
kf_prompt_forward_from (const char *source)
{
    const char *def = source ? strstr (source, "def forward") : NULL;
    return def ? def : source;
}

//  forward's body in CODE: [*start, *end), or false.
static bool
s_forward (const char *code, const char **start, const char **end)
{
    const char *def = strstr (code, "def forward");
    if (!def)
        return false;
    const char *line = def;
    while (line > code && line[-1] != '\n')
        line--;
    size_t indent = (size_t) (def - line);
    const char *p = strchr (def, '\n');
    if (!p)
        return false;
    *start = ++p;
    while (*p) {
        const char *text = p;
        while (*text == ' ' || *text == '\t')
            text++;
        if (*text && *text != '\n' && (size_t) (text - p) <= indent)
            break;
        const char *next = strchr (p, '\n');
        if (!next) {
            p += strlen (p);
            break;
        }
        p = next + 1;
    }
    *end = p;
    return true;
}

//  Whether the sign at P (CODE's) is one of a literal or a name, not an
//  operation between two values: after '=', '(', ',', '[' or ':'.
static bool
s_unary (const char *code, const char *p)
{
    while (p > code && (p[-1] == ' ' || p[-1] == '\t'))
        p--;
    return p == code || strchr ("=(,[:\n", p[-1]) != NULL;
}

//  Where the right operand of the @ before P ends, before END: a name
//  chain with its calls and indexing (k.transpose(1, 2)), or a
//  parenthesised expression.
static const char *
s_operand_end (const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (p < end) {
        if (*p == '(' || *p == '[') {
            char open = *p, close = open == '(' ? ')' : ']';
            int depth = 0;
            for (; p < end; p++) {
                depth += *p == open;
                if (*p == close && --depth == 0)
                    break;
            }
            p += p < end;
            continue;
        }
        if (isalnum ((unsigned char) *p) || *p == '_' || *p == '.') {
            p++;
            continue;
        }
        break;
    }
    return p;
}

//  The ')' that closes the '(' at OPEN, before END; END when none.
static const char *
s_close (const char *open, const char *end)
{
    int depth = 0;
    for (const char *p = open; p < end; p++) {
        depth += *p == '(';
        if (*p == ')' && --depth == 0)
            return p;
    }
    return end;
}

//  Round 26: where (a > 0, log1p (a), expm1 (a)) was handed the idea of
//  an identity that shares the calls, twice: the two take the same
//  argument, but each element needs only one. Whether the calls at A and
//  B lie in different arguments of one where (...) of CODE (up to END).
static bool
s_other_arms (const char *code, const char *end, const char *a, const char *b)
{
    for (const char *w = code; (w = strstr (w, "where")) && w < end; w += 5) {
        const char *open = w + 5;
        while (open < end && (*open == ' ' || *open == '\t'))
            open++;
        if (open >= end || *open != '(' || (w > code && (isalnum ((unsigned char) w[-1])
                                                        || w[-1] == '_')))
            continue;
        const char *close = s_close (open, end);
        if (!(a > open && a < close && b > open && b < close))
            continue;
        //  Which top-level argument each lies in.
        int depth = 0, arg = 0, arg_a = -1, arg_b = -1;
        for (const char *p = open + 1; p < close; p++) {
            if (p == a)
                arg_a = arg;
            if (p == b)
                arg_b = arg;
            depth += *p == '(' || *p == '[';
            depth -= *p == ')' || *p == ']';
            arg += depth == 0 && *p == ',';
        }
        return arg_a >= 0 && arg_b >= 0 && arg_a != arg_b;
    }
    return false;
}

bool
kf_prompt_formula_sums_calls (const kf_formula_t *fm)
{
    return fm->calls > 0 && (fm->call_sum || !strcmp (fm->row, "sum"));
}

//  The parenthesis group around AT in [FROM, END): its '(' and ')' into
//  *LO and *HI, or the line's ends where no parenthesis holds it.
static void
s_group (const char *from, const char *end, const char *at, const char **lo, const char **hi)
{
    int depth = 0;
    const char *q;
    for (q = at; q > from; q--) {
        if (q[-1] == ')')
            depth++;
        else if ((q[-1] == '(' && depth-- == 0) || (q[-1] == '\n' && depth == 0))
            break;
    }
    *lo = q > from ? q - 1 : from;
    depth = 0;
    for (q = at; q < end; q++) {
        if (*q == '(')
            depth++;
        else if ((*q == ')' && depth-- == 0) || (*q == '\n' && depth == 0))
            break;
    }
    *hi = q;
}

//  Whether the call whose '(' is OPEN and ')' CLOSE reduces over the
//  rows of a matrix: dim 0 or -2 among its arguments (dim=, axis=, a
//  one-entry tuple or list; a bare one only where POSITIONAL), into *DIM.
static bool
s_rows_dim (const char *open, const char *close, bool positional, int *dim)
{
    char arg[16];
    for (const char *at = open + 1; kf_formula_next_arg (&at, close, arg, sizeof arg);) {
        const char *v = !strncmp (arg, "dim=", 4) ? arg + 4 : !strncmp (arg, "axis=", 5) ? arg + 5
                        : positional ? arg : NULL;
        static const char *const zero[] = { "0", "(0,)", "[0]", NULL };
        static const char *const minus2[] = { "-2", "(-2,)", "[-2]", NULL };
        if (v && (s_in (v, strlen (v), zero) || s_in (v, strlen (v), minus2))) {
            *dim = s_in (v, strlen (v), zero) ? 0 : -2;
            return true;
        }
    }
    return false;
}

//  Where the receiver of the call whose name chain starts at AT (CODE's)
//  begins: "(p * p)" of (p * p).mean(0), "p.pow(2)" of p.pow(2).sum(0),
//  AT itself where the chain starts with a name (p.sum(0), torch.sum).
static const char *
s_receiver (const char *code, const char *at)
{
    const char *s = at;
    while (*s == '.' && s > code && (s[-1] == ')' || s[-1] == ']')) {
        int depth = 0;
        for (s--; s > code; s--) {
            depth += (*s == ')' || *s == ']') - (*s == '(' || *s == '[');
            if (depth == 0)
                break;
        }
        while (s > code && (isalnum ((unsigned char) s[-1]) || s[-1] == '_' || s[-1] == '.'))
            s--;
    }
    return s;
}

bool
kf_prompt_formula_named (const char *names, const char *word)
{
    size_t len = strlen (word);
    for (const char *at = strstr (names, word); at; at = strstr (at + 1, word))
        if ((at == names || at[-1] == ' ') && (at[len] == ',' || !at[len]))
            return true;
    return false;
}

static void
s_add_name (kf_formula_t *f, const char *name, size_t n)
{
    char word[24];
    snprintf (word, sizeof word, "%.*s", (int) n, name);
    //  A whole entry of the list only (round 14: "sigmoid" was found at
    //  the end of "logsigmoid", and a formula of both was named
    //  "logsigmoid" alone).
    size_t len = strlen (word);
    if (kf_prompt_formula_named (f->names, word))
        return;
    size_t used = strlen (f->names);
    if (used + len + 3 < sizeof f->names)
        snprintf (f->names + used, sizeof f->names - used, "%s%s", used ? ", " : "", word);
}

bool
kf_prompt_formula (json_t *spec, kf_formula_t *f)
{
    memset (f, 0, sizeof *f);
    json_t *ref = json_object_get (spec, "reference");
    if (strcmp (kf_jstr (ref, "language"), "pytorch"))
        return false;
    char *code = kf_prompt_python_code (kf_jstr (ref, "source"));
    const char *p, *end;
    if (!code || !s_forward (code, &p, &end)) {
        free (code);
        return false;
    }
    f->counted = true;
    json_t *out0 = json_array_get (json_object_get (spec, "outputs"), 0);
    size_t rank = json_array_size (json_object_get (out0, "shape"));
    //  The libm calls' spans, to tell an epilogue's from the product.
    struct s_span { const char *at, *open, *close; int calls, vops; } spans[32];
    size_t n_spans = 0;
    //  The first product and where it ends: a call's closing ')', the
    //  end of the line of an @ (its operands are on it).
    const char *product = NULL, *product_end = NULL;
    //  Known functions' spans and operations, to count an epilogue's;
    //  the row function's span; the last operation or call.
    struct s_fn { const char *at, *close; int ops; unsigned kinds; } fns[32];
    size_t n_fns = 0;
    const char *row_at = NULL, *row_close = NULL, *latest = NULL;
    //  The column reduction's span (its receiver to its ')'), and the
    //  operators' places and kinds, to tell its argument's from the rest.
    const char *col_at = NULL, *col_close = NULL;
    struct s_op { const char *at; unsigned kinds; } op_list[64];
    size_t n_ops = 0;
    const char *from = p;
    while (p < end) {
        char c = *p;
        if (isspace ((unsigned char) c) || c == '(' || c == ')' || c == ',' || c == ':'
            || c == ']' || c == '\\' || c == ';') {
            p++;
            continue;
        }
        if (isdigit ((unsigned char) c) || (c == '.' && isdigit ((unsigned char) p[1]))) {
            for (p++; p < end && (isalnum ((unsigned char) *p) || *p == '.' || *p == '_'
                                  || ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')));
                 p++)
                ;
            continue;
        }
        if (isalpha ((unsigned char) c) || c == '_' || c == '.') {
            const char *at = p, *last = p;
            for (; p < end && (isalnum ((unsigned char) *p) || *p == '_' || *p == '.'); p++)
                if (*p == '.')
                    last = p + 1;
            size_t n = (size_t) (p - last);
            const char *q = p;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (last == at && s_in (last, n, s_refused))
                f->counted = false;
            if (q >= end || *q != '(')
                continue;
            bool known = false;
            latest = at;
            for (size_t i = 0; i < sizeof s_arith / sizeof s_arith[0]; i++)
                if (strlen (s_arith[i].name) == n && !strncmp (last, s_arith[i].name, n)) {
                    f->ops += s_arith[i].ops;
                    f->kinds |= s_arith[i].kinds;
                    if (n_fns < sizeof fns / sizeof fns[0])
                        fns[n_fns++] = (struct s_fn) { at, s_close (q, end), s_arith[i].ops,
                                                       s_arith[i].kinds };
                    known = true;
                }
            bool norm = n == 9 && !strncmp (last, "normalize", 9);
            if (s_in (last, n, s_row_fns) && !row_at
                && (!s_in (last, n, s_row_reductions) || kf_formula_last_dim (q, s_close (q, end), rank))
                && (!s_in (last, n, s_softmaxes)
                    || !s_rows_dim (q, s_close (q, end), true, &(int) { 0 }))
                && (!norm || kf_formula_normalize_rows (q, s_close (q, end), rank))) {
                row_at = at;
                row_close = s_close (q, end);
                snprintf (f->row, sizeof f->row, "%.*s", (int) n, last);
                f->counted = false;
                known = true;
            }
            if (s_in (last, n, s_col_fns) && !col_at
                && s_rows_dim (q, s_close (q, end), !s_in (last, n, s_norms), &f->col_dim)) {
                col_at = s_receiver (code, at);
                col_close = s_close (q, end);
                snprintf (f->col, sizeof f->col, "%.*s", (int) n, last);
            }
            if (n == 3 && !strncmp (last, "pow", 3) && kf_formula_pow_square (q, s_close (q, end))) {
                f->ops++;
                f->kinds |= S_BIT (MUL);
                if (n_fns < sizeof fns / sizeof fns[0])
                    fns[n_fns++] = (struct s_fn) { at, s_close (q, end), 1, S_BIT (MUL) };
                known = true;
            }
            for (size_t i = 0; !known && i < sizeof s_libm / sizeof s_libm[0]; i++)
                if (strlen (s_libm[i].name) == n && !strncmp (last, s_libm[i].name, n)) {
                    f->calls += s_libm[i].calls;
                    bool cbrt = n == 3 && !strncmp (last, "pow", 3)
                                && kf_formula_pow_third (q, s_close (q, end));
                    int vops = cbrt ? kf_prompt_libm_vops ("cbrt") : s_libm[i].vops;
                    f->call_vops += vops;
                    if (cbrt)
                        s_add_name (f, "cbrt", 4);
                    else
                        s_add_name (f, last, n);
                    if (n_spans < sizeof spans / sizeof spans[0])
                        spans[n_spans++] = (struct s_span) { at, q, s_close (q, end),
                                                             s_libm[i].calls, vops };
                    known = true;
                }
            if (s_in (last, n, s_products)) {
                if (!product) {
                    product = at;
                    product_end = s_close (q, end);
                }
                f->counted = false;
                known = true;
            }
            if (!known)
                f->counted = false;
            continue;
        }
        p++;
        const char *op_at = p - 1;
        int ops_before = f->ops;
        switch (c) {
        case '*':
            if (*p == '*') {
                //  A square is a product; any other power is pow().
                for (p++; p < end && *p == ' '; p++)
                    ;
                bool square = *p == '2' && !isdigit ((unsigned char) p[1]) && p[1] != '.';
                f->counted &= square;
                f->ops += square;
                f->kinds |= S_BIT (MUL);
            }
            else {
                f->ops++;
                f->kinds |= S_BIT (MUL);
            }
            break;
        case '/':
            f->counted &= *p != '/';
            f->ops++;
            f->kinds |= S_BIT (DIV);
            //  Round 39: by a value, not a literal (x / 8.0 a compiler
            //  may make a product; sin(2x) / (1 + x * x) stays one).
            {
                const char *q = p;
                while (q < end && *q == ' ')
                    q++;
                f->divs += q < end && !isdigit ((unsigned char) *q) && *q != '.';
            }
            break;
        case '+': case '-':
            if (c == '-' && *p == '>') {
                p++;    /* a return annotation, "-> Tensor" */
                break;
            }
            f->ops++;
            f->kinds |= S_BIT (ADD);
            break;
        case '<': case '>': case '!':
            f->ops++;
            f->kinds |= S_BIT (CMP);
            p += *p == '=';
            break;
        case '=':
            if (*p == '=') {
                f->ops++;
                f->kinds |= S_BIT (CMP);
                p++;
            }
            break;
        case '@':
            //  Its operands: the expression before it on its line, the
            //  operand after it (round 16: the / 8 after q @ k^T).
            if (!product) {
                product = p - 1;
                product_end = s_operand_end (p, end);
            }
            latest = op_at;
            f->counted = false;
            break;
        default:
            f->counted = false;
            break;
        }
        if (f->ops > ops_before && !((c == '-' || c == '+') && s_unary (code, op_at))) {
            latest = op_at;
            if (n_ops < sizeof op_list / sizeof op_list[0])
                op_list[n_ops++] = (struct s_op) { op_at, c == '*' ? S_BIT (MUL)
                                                          : c == '/' ? S_BIT (DIV)
                                                          : c == '+' || c == '-' ? S_BIT (ADD)
                                                                                 : S_BIT (CMP) };
            if (product && op_at >= product_end)
                f->epi_ops += f->ops - ops_before;
        }
    }
    f->product = product != NULL;
    for (size_t i = 0; i < n_ops; i++) {
        if (op_list[i].kinds != S_BIT (ADD))
            continue;
        const char *lo, *hi;
        s_group (from, end, op_list[i].at, &lo, &hi);
        for (size_t j = 0; j < n_spans; j++)
            f->call_sum |= spans[j].at > lo && spans[j].at < hi;
        for (size_t j = 0; j < n_fns; j++)
            f->call_sum |= (fns[j].kinds & (S_BIT (SQRT) | S_BIT (DIV))) && fns[j].at > lo
                           && fns[j].at < hi;
    }
    for (size_t i = 0; i < n_spans; i++) {
        f->related |= spans[i].calls > 1;
        for (size_t j = 0; j < n_spans; j++) {
            size_t a = (size_t) (spans[i].close - spans[i].open);
            bool inside = j != i && spans[j].at > spans[i].open && spans[j].at < spans[i].close;
            f->nested |= inside;
            f->related |= j != i && (inside
                                     || (j > i && a == (size_t) (spans[j].close - spans[j].open)
                                         && !strncmp (spans[i].open, spans[j].open, a)
                                         && !s_other_arms (code, end, spans[i].at, spans[j].at)));
        }
    }
    //  Round 50: a call of a broadcast input alone is made once a value.
    //  Forward's parameters read only where a call was found.
    json_t *params = n_spans ? kf_prompt_python_params (kf_jstr (ref, "source"), "forward")
                             : NULL;
    double outputs = rank ? kf_prompt_tensor_elements (out0) : 0;
    for (size_t i = 0; params && i < n_spans; i++) {
        double values = kf_formula_arg_broadcast (spans[i].open, spans[i].close, spec, params,
                                                  outputs);
        if (values > 0) {
            f->hoist_calls += spans[i].calls;
            f->hoist_vops += spans[i].vops;
            f->hoist_values = values > f->hoist_values ? values : f->hoist_values;
            size_t n = strlen (f->hoist_names);
            const char *fn = spans[i].at;
            for (const char *d = fn; d < spans[i].open; d++)
                if (*d == '.')
                    fn = d + 1;
            int len = (int) (spans[i].open - fn);
            if (n + (size_t) len + 3 < sizeof f->hoist_names)
                snprintf (f->hoist_names + n, sizeof f->hoist_names - n, "%s%.*s", n ? ", " : "",
                          len, fn);
        }
    }
    json_decref (params);
    //  An epilogue's call takes the product as its argument or comes
    //  after it; one inside it works on an operand.
    for (size_t i = 0; product && i < n_spans; i++)
        if (spans[i].at >= product_end || (spans[i].at < product && spans[i].close > product)) {
            f->after_product += spans[i].calls;
            f->after_vops += spans[i].vops;
        }
    for (size_t i = 0; product && i < n_fns; i++)
        if (fns[i].at >= product_end || (fns[i].at < product && fns[i].close > product))
            f->epi_ops += fns[i].ops;
    if (!product || !row_at
        || !(row_at >= product_end || (row_at < product && row_close > product)))
        f->row[0] = 0;
    f->row_outer = *f->row && (!latest || latest < row_close);
    if (!product || !col_at
        || !(col_at >= product_end || (col_at <= product && col_close > product)))
        f->col[0] = 0;
    if (*f->col) {
        //  What follows the statistic: the operations after it, and those
        //  before it on its own line (p * rsqrt(...)); not the product's
        //  line's (p = a @ b + bias).
        const char *line = col_at;
        while (line > code && line[-1] != '\n')
            line--;
        f->col_squares = s_in (f->col, strlen (f->col), s_norms);
        for (size_t i = 0; i < n_ops + n_fns; i++) {
            const char *at = i < n_ops ? op_list[i].at : fns[i - n_ops].at;
            unsigned kinds = i < n_ops ? op_list[i].kinds : fns[i - n_ops].kinds;
            bool inside = at >= col_at && at < col_close;
            f->col_squares |= inside && (kinds & S_BIT (MUL));
            f->col_abs |= inside && (kinds & S_BIT (ABS));
            if (!inside && at >= product_end && (at > col_close || at >= line))
                f->col_after |= kinds;
        }
        f->col_outer = !f->col_after && (!latest || latest <= col_close);
    }
    free (code);
    return true;
}

const char *
kf_prompt_formula_kinds (unsigned kinds, char *buf, size_t size)
{
    static const char *const words[KF_OP_KINDS] = {
        [KF_OP_ABS] = "absolute values", [KF_OP_ADD] = "additions", [KF_OP_DIV] = "divisions",
        [KF_OP_MINMAX] = "minima/maxima", [KF_OP_MUL] = "products",
        [KF_OP_SQRT] = "square roots", [KF_OP_CMP] = "comparisons"
    };
    int total = 0, shown = 0;
    for (int k = 0; k < KF_OP_KINDS; k++)
        total += (kinds >> k) & 1;
    size_t used = 0;
    if (size)
        buf[0] = 0;
    for (int k = 0; k < KF_OP_KINDS && size; k++) {
        if (!((kinds >> k) & 1))
            continue;
        shown++;
        const char *sep = shown == 1 ? "" : shown == total ? " and " : ", ";
        int w = snprintf (buf + used, size - used, "%s%s", sep, words[k]);
        if (w < 0 || (size_t) w >= size - used)
            break;
        used += (size_t) w;
    }
    return buf;
}

bool
kf_prompt_formula_no_identity (json_t *spec)
{
    kf_formula_t fm;
    return kf_prompt_formula (spec, &fm) && (fm.counted || fm.calls >= 1)
           && (fm.calls == 1 || !fm.related);
}
