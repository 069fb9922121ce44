/*  kf_prompt_layout.c - whether a PyTorch reference's matrix product
 *  reads both operands along k as stored (kf_prompt_layout.h).
 *
 *  Round 14: torch.matmul(a, b.T) with b [768][1024] got the general host
 *  ideas ("i-k-j over a row-major [K][N] operand", "packing blocks of the
 *  strided operand"), written for a [K][N] operand it does not have; only
 *  nn.Linear was known to read both operands along k. This reader follows
 *  the common spellings of a product against a transposed operand, and
 *  since round 15 of a first operand used transposed (a.T @ b, whose
 *  prompt had no note and "dot products along k" where neither operand is
 *  contiguous along k), of both, and of a plain a @ b. It is
 *  no Python parser: a product whose operands it cannot read (indexing, a
 *  call it does not know, keyword arguments, einsum) makes the answer
 *  KF_PRODUCT_OTHER, and the prompt keeps its general advice. The ideas
 *  and figures that follow a layout read here are kf_prompt_layout_ideas.c.
 */
#include "kf_prompt_layout.h"
#include "kf_prompt_formula.h"
#include "kf_json.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool
s_word_char (char c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

//  Past the bracket group opening at P (one of "([{"), within END; END
//  where it does not close.
static const char *
s_past_group (const char *p, const char *end)
{
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '(' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == ')' || *p == ']' || *p == '}') && --depth == 0)
            return p + 1;
    }
    return end;
}

//  At the bracket group closing just before P, back to its opening, not
//  before START.
static const char *
s_before_group (const char *p, const char *start)
{
    int depth = 0;
    while (p > start) {
        p--;
        if (*p == ')' || *p == ']' || *p == '}')
            depth++;
        else if ((*p == '(' || *p == '[' || *p == '{') && --depth == 0)
            return p;
    }
    return start;
}

//  The input of SPEC that NAME in forward's code stands for, or NULL:
//  forward's argument i is in<i>; self.fc.weight is fc_weight.
static json_t *
s_input_of (json_t *spec, json_t *fwd, const char *name)
{
    char want[80] = "";
    size_t i;
    json_t *p;
    json_array_foreach (fwd, i, p)
        if (!strcmp (json_string_value (p), name))
            snprintf (want, sizeof want, "in%zu", i);
    if (!strncmp (name, "self.", 5)) {
        snprintf (want, sizeof want, "%s", name + 5);
        for (char *c = want; *c; c++)
            *c = *c == '.' ? '_' : *c;
    }
    json_t *t;
    json_array_foreach (json_object_get (spec, "inputs"), i, t)
        if (*want && !strcmp (kf_jstr (t, "name"), want))
            return t;
    return NULL;
}

typedef struct {
    char name[64];      /* the tensor as the code names it: "b", "self.weight" */
    int transposes;     /* of its last two dimensions */
    bool known;         /* the whole operand was read */
} s_operand_t;

//  Whether transpose(A, B) of a tensor of RANK dimensions (0: not known,
//  taken as 2) swaps its last two.
static bool
s_last_two (long a, long b, long rank)
{
    long r = rank ? rank : 2;
    a = a < 0 ? a + r : a;
    b = b < 0 ? b + r : b;
    return (a == r - 2 && b == r - 1) || (a == r - 1 && b == r - 2);
}

//  TEXT [P, END) as one operand: a name, then .T, .t(), .mT,
//  .transpose(i, j) and calls that keep the layout (.contiguous()).
static void
s_operand (json_t *spec, json_t *fwd, const char *p, const char *end, s_operand_t *op)
{
    memset (op, 0, sizeof *op);
    while (p < end && isspace ((unsigned char) *p))
        p++;
    while (end > p && isspace ((unsigned char) end[-1]))
        end--;
    if (p < end && *p == '(' && s_past_group (p, end) == end) {
        s_operand (spec, fwd, p + 1, end - 1, op);
        return;
    }
    size_t n = 0;
    long rank = -1;     //  -1: the name is still being read
    while (p < end) {
        if (n && *p != '.')
            return;
        if (n)
            p++;
        const char *w = p;
        while (p < end && s_word_char (*p))
            p++;
        size_t wl = (size_t) (p - w);
        const char *args = p < end && *p == '(' ? p : NULL;
        const char *after = args ? s_past_group (args, end) : p;
        if (wl == 0 || (args && after[-1] != ')') || isdigit ((unsigned char) *w))
            return;
        char word[32];
        snprintf (word, sizeof word, "%.*s", (int) wl, w);
        bool empty = args && after == args + 2;
        bool suffix = (!args && (!strcmp (word, "T") || !strcmp (word, "mT")))
                      || (args && (!strcmp (word, "t") || !strcmp (word, "transpose")
                                   || !strcmp (word, "contiguous") || !strcmp (word, "float")
                                   || !strcmp (word, "clone") || !strcmp (word, "detach")));
        if (rank < 0 && !suffix) {
            if (args || n + wl + 2 > sizeof op->name)
                return;
            n += (size_t) snprintf (op->name + n, sizeof op->name - n, "%s%s", n ? "." : "",
                                    word);
            continue;
        }
        if (rank < 0) {
            json_t *t = s_input_of (spec, fwd, op->name);
            rank = t ? (long) json_array_size (json_object_get (t, "shape")) : 0;
        }
        if (!strcmp (word, "T") || (!strcmp (word, "t") && empty)) {
            if (rank > 2)
                return;     //  of more dimensions .T reverses them all
            op->transposes++;
        }
        else if (!strcmp (word, "mT"))
            op->transposes++;
        else if (!strcmp (word, "transpose")) {
            char *e1, *e2;
            long a = strtol (args + 1, &e1, 10);
            while (isspace ((unsigned char) *e1))
                e1++;
            if (e1 == args + 1 || *e1 != ',')
                return;
            long b = strtol (e1 + 1, &e2, 10);
            while (isspace ((unsigned char) *e2))
                e2++;
            if (e2 == e1 + 1 || *e2 != ')' || !s_last_two (a, b, rank))
                return;
            op->transposes++;
        }
        else if (!empty)
            return;
        p = after;
    }
    op->known = n > 0;
}

//  How the first operand's TEXT [P, END) is used: 0 as stored, 1
//  transposed (read, its name into OP), -1 not known. One not read is
//  taken as stored where it has no transposing word (torch.relu(x) @ w.T).
static int
s_first (json_t *spec, json_t *fwd, const char *p, const char *end, s_operand_t *op)
{
    s_operand (spec, fwd, p, end, op);
    if (op->known)
        return op->transposes % 2;
    static const char *const words[] = { ".T", ".t(", ".mT", "transpose", "permute", "swap" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t wl = strlen (words[i]);
        for (const char *at = p; at + wl <= end; at++)
            if (!strncmp (at, words[i], wl) && (at + wl == end || !s_word_char (at[wl])
                                                || words[i][wl - 1] != 'T'))
                return -1;
    }
    return p < end ? 0 : -1;
}

typedef struct {
    json_t *spec, *fwd;
    int products;
    bool other;             /* products of different layouts, or one not read */
    kf_product_t first;     /* the first product's layout and operands */
} s_scan_t;

static void
s_product (s_scan_t *s, const char *a, const char *a_end, const char *b, const char *b_end)
{
    s_operand_t opa, opb;
    s_operand (s->spec, s->fwd, b, b_end, &opb);
    int a_t = s_first (s->spec, s->fwd, a, a_end, &opa);
    s->products++;
    if (!opb.known || a_t < 0) {
        s->other = true;
        return;
    }
    //  Round 15: a.T @ b, a stored [K][M], is read too (it had no note).
    bool b_t = opb.transposes % 2;
    kf_product_layout_t kind = b_t ? (a_t ? KF_PRODUCT_BOTH_TRANSPOSED : KF_PRODUCT_TRANSPOSED)
                                   : (a_t ? KF_PRODUCT_FIRST_TRANSPOSED : KF_PRODUCT_PLAIN);
    if (s->products > 1) {
        s->other |= kind != s->first.kind;
        //  Round 38: (a @ w) * sigmoid(a @ v) named w alone where v is
        //  the other product's second operand.
        if (s->products == 2 && opa.known && !strcmp (opa.name, s->first.a)
            && strcmp (opb.name, s->first.b))
            snprintf (s->first.b2, sizeof s->first.b2, "%s", opb.name);
        return;
    }
    s->first.kind = kind;
    snprintf (s->first.a, sizeof s->first.a, "%s", opa.known ? opa.name : "");
    snprintf (s->first.b, sizeof s->first.b, "%s", opb.name);
}

//  A @ B: the operands either side, as far as names, attributes, calls
//  and subscripts reach.
static void
s_at_sign (s_scan_t *s, const char *code, const char *at)
{
    const char *line = at;
    while (line > code && line[-1] != '\n')
        line--;
    const char *q = line;
    while (q < at && isspace ((unsigned char) *q))
        q++;
    if (q == at)
        return;     //  a decorator
    const char *a_end = at;
    while (a_end > code && isspace ((unsigned char) a_end[-1]))
        a_end--;
    const char *a = a_end;
    while (a > code) {
        if (a[-1] == ')' || a[-1] == ']')
            a = s_before_group (a, code);
        else if (s_word_char (a[-1]) || a[-1] == '.')
            a--;
        else
            break;
    }
    const char *end = at + strlen (at);
    const char *b = at + 1 + (at[1] == '=');
    while (b < end && isspace ((unsigned char) *b))
        b++;
    const char *b_end = b;
    while (b_end < end) {
        if (*b_end == '(' || *b_end == '[')
            b_end = s_past_group (b_end, end);
        else if (s_word_char (*b_end) || *b_end == '.')
            b_end++;
        else
            break;
    }
    s_product (s, a, a_end, b, b_end);
}

//  NAME( at AT: torch.matmul(a, b), torch.addmm(c, a, b), a.matmul(b).
static void
s_call (s_scan_t *s, const char *code, const char *at, size_t name_len, int skip)
{
    const char *open = at + name_len;
    while (isspace ((unsigned char) *open))
        open++;
    const char *end = open + strlen (open);
    const char *close = s_past_group (open, end);
    if (close == end && (close == open || close[-1] != ')')) {
        s->other = true;
        return;
    }
    //  The receiver: torch, torch.linalg, none (a function), or a tensor.
    const char *r = at;
    bool method = r > code && r[-1] == '.';
    const char *r_end = method ? r - 1 : r;
    if (method) {
        r = r_end;
        while (r > code) {
            if (r[-1] == ')' || r[-1] == ']')
                r = s_before_group (r, code);
            else if (s_word_char (r[-1]) || r[-1] == '.')
                r--;
            else
                break;
        }
        size_t rl = (size_t) (r_end - r);
        if ((rl == 5 && !strncmp (r, "torch", 5)) || (rl == 12 && !strncmp (r, "torch.linalg", 12))
            || (rl == 6 && !strncmp (r, "linalg", 6)))
            method = false;
    }
    const char *args[4];
    const char *ends[4];
    int n = 0;
    const char *p = open + 1;
    while (p < close - 1 && n < 4) {
        const char *e = p;
        while (e < close - 1 && *e != ',') {
            if (*e == '(' || *e == '[' || *e == '{')
                e = s_past_group (e, close - 1);
            else if (*e == '=' && e[1] != '=' && e > p && !strchr ("=!<>", e[-1])) {
                s->other = true;     //  a keyword argument
                return;
            }
            else
                e++;
        }
        args[n] = p;
        ends[n++] = e;
        p = e + 1;
    }
    if (method && !skip && n >= 1)
        s_product (s, r, r_end, args[0], ends[0]);
    else if (!method && n >= skip + 2)
        s_product (s, args[skip], ends[skip], args[skip + 1], ends[skip + 1]);
    else
        s->other = true;
}

kf_product_layout_t
kf_prompt_product_read (json_t *spec, kf_product_t *product)
{
    kf_product_t none = { .kind = KF_PRODUCT_OTHER };
    if (product)
        *product = none;
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    char *code = kf_prompt_python_code (src);
    if (!code)
        return KF_PRODUCT_OTHER;
    //  Round 11: only the code counts, not a docstring's words.
    if (strstr (code, "nn.Linear") || strstr (code, "F.linear")
        || strstr (code, "functional.linear")) {
        free (code);
        if (product)
            product->kind = KF_PRODUCT_LINEAR;
        return KF_PRODUCT_LINEAR;
    }
    s_scan_t s = { .spec = spec, .fwd = kf_prompt_python_params (src, "forward") };
    static const struct { const char *name; int skip; } calls[] = {
        { "matmul", 0 }, { "mm", 0 }, { "bmm", 0 }, { "addmm", 1 }, { "baddbmm", 1 },
        { "einsum", -1 }, { "tensordot", -1 }, { "multi_dot", -1 }, { "chain_matmul", -1 } };
    for (const char *p = code; *p && !s.other; p++) {
        if (*p == '@') {
            s_at_sign (&s, code, p);
            continue;
        }
        if (!s_word_char (*p) || (p > code && s_word_char (p[-1])))
            continue;
        size_t wl = 0;
        while (s_word_char (p[wl]))
            wl++;
        const char *after = p + wl;
        while (*after == ' ')
            after++;
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            if (wl == strlen (calls[i].name) && !strncmp (p, calls[i].name, wl) && *after == '('
                && !(p >= code + 4 && !strncmp (p - 4, "def ", 4))) {
                if (calls[i].skip < 0)
                    s.other = true;
                else
                    s_call (&s, code, p, wl, calls[i].skip);
            }
        p += wl - 1;
    }
    json_decref (s.fwd);
    free (code);
    if (s.other || !s.products)
        return KF_PRODUCT_OTHER;
    if (product)
        *product = s.first;
    return s.first.kind;
}

kf_product_layout_t
kf_prompt_product_layout (json_t *spec, char *operand, size_t size)
{
    kf_product_t p;
    kf_prompt_product_read (spec, &p);
    const char *name = p.kind == KF_PRODUCT_FIRST_TRANSPOSED ? p.a
                       : p.kind == KF_PRODUCT_TRANSPOSED || p.kind == KF_PRODUCT_BOTH_TRANSPOSED
                       ? p.b : "";
    if (operand && size)
        snprintf (operand, size, "%s", name);
    return p.kind;
}

const char *
kf_prompt_product_input (json_t *spec, const char *name)
{
    json_t *fwd = kf_prompt_python_params (kf_jstr (json_object_get (spec, "reference"),
                                                    "source"), "forward");
    json_t *t = name && *name ? s_input_of (spec, fwd, name) : NULL;
    json_decref (fwd);
    return t ? kf_jstr (t, "name") : name;
}

static void
s_dims (FILE *f, json_t *shape)
{
    size_t i;
    json_t *d;
    json_array_foreach (shape, i, d)
        fprintf (f, "[%lld]", (long long) json_integer_value (d));
}

//  Round 4: the weight of nn.Linear / F.linear is [out][in], so x @ W^T
//  reads both operands along the reduction dimension; generic advice to
//  "transpose or pack the strided operand" pushed a model to a transpose
//  it did not need. Round 14: the same of a @ b.T, b named as the task
//  names it.
void
kf_prompt_product_name (FILE *f, json_t *spec, const char *name)
{
    const char *in = kf_prompt_product_input (spec, name);
    if (strcmp (in, name))
        fprintf (f, "%s (%s in its code)", in, name);
    else
        fputs (name, f);
}

//  " in0 is [1024][384], stored row-major as [K][M]: K = 1024 ..., M = 384
//  output rows." for the operand the code calls NAME, stored as
//  [ROWS][COLS] of those letters.
static void
s_stored (FILE *f, json_t *spec, const char *name, char rows, char cols)
{
    const char *in = kf_prompt_product_input (spec, name);
    json_t *fwd = kf_prompt_python_params (kf_jstr (json_object_get (spec, "reference"),
                                                    "source"), "forward");
    json_t *t = s_input_of (spec, fwd, name);
    json_decref (fwd);
    json_t *shape = t ? json_object_get (t, "shape") : NULL;
    size_t rank = json_array_size (shape);
    fprintf (f, " %s is ", in);
    if (rank < 2) {
        fprintf (f, "stored row-major as [%c][%c].", rows, cols);
        return;
    }
    s_dims (f, shape);
    fprintf (f, ", %s row-major as [%c][%c]:", rank > 2 ? "each of its matrices stored" : "stored",
             rows, cols);
    for (int d = 0; d < 2; d++) {
        char c = d ? cols : rows;
        fprintf (f, "%s %c = %lld %s", d ? "," : "", c,
                 (long long) json_integer_value (json_array_get (shape, rank - 2 + (size_t) d)),
                 c == 'K' ? "the reduction dimension" : c == 'M' ? "output rows"
                                                                 : "output columns");
    }
    fputs (".", f);
}

//  Round 15: relu(a.T @ b + bias), a stored [K][M], had no note, and the
//  ideas' "dot products along k" did not fit it: for each k a row of a
//  holds the output rows' values contiguously, the friendly layout for
//  the outer-product order, and packing it needs no transpose.
static void
s_note_first (FILE *f, json_t *spec, const kf_product_t *p)
{
    bool both = p->kind == KF_PRODUCT_BOTH_TRANSPOSED;
    const char *a = kf_prompt_product_input (spec, p->a);
    const char *b = kf_prompt_product_input (spec, p->b);
    fputs ("Layout of the product: the reference multiplies ", f);
    kf_prompt_product_name (f, spec, p->a);
    fputs (" transposed by ", f);
    kf_prompt_product_name (f, spec, p->b);
    fputs (both ? " transposed." : ".", f);
    s_stored (f, spec, p->a, 'K', 'M');
    s_stored (f, spec, p->b, both ? 'N' : 'K', both ? 'K' : 'N');
    if (!both) {
        fprintf (f, " So for each k, %s[k][i0..i0+MR] is a contiguous run of %s's row k, as "
                 "%s[k][j0..j0+NR] is of %s's row k; neither operand is contiguous along k, "
                 "so dot products along k do not fit. The outer-product order reads both "
                 "along their rows: keep a register tile of C (MR rows by NR columns) over "
                 "all of k, and at each k broadcast %s[k][i] for each of its MR rows against "
                 "the vectors of %s[k][j0..j0+NR]. Packing %s for it is a plain strided copy "
                 "of those runs (MR floats of row k, then of row k+1), with no transpose.\n",
                 a, a, b, b, a, b, a);
        return;
    }
    fprintf (f, " So for each k, %s[k][i0..i0+V] is a contiguous run along the output rows "
             "i, while %s is contiguous along k (%s[j][k0..k0+V]): no loop order reads both "
             "along their rows as stored. The product is (%s @ %s) transposed: either a "
             "register tile over k takes vectors of %s's row k and broadcasts %s[j][k] for "
             "each output column j (values K floats apart), its vectors running along i, so "
             "the tile is transposed as it is stored; or each cache block of %s is packed "
             "transposed, as [K][N], and both are then read along rows in the outer-product "
             "order.\n", a, b, b, b, a, a, b, b);
}

bool
kf_prompt_product_is_self (kf_product_layout_t kind, const kf_product_t *p)
{
    return kind == KF_PRODUCT_TRANSPOSED && *p->a && !strcmp (p->a, p->b);
}

bool
kf_prompt_product_self (json_t *spec)
{
    kf_product_t p;
    kf_product_layout_t kind = kf_prompt_product_read (spec, &p);
    return kf_prompt_product_is_self (kind, &p);
}

void
kf_prompt_layout_note (FILE *f, json_t *spec)
{
    kf_product_t p;
    kf_product_layout_t kind = kf_prompt_product_read (spec, &p);
    if (kind == KF_PRODUCT_OTHER || kind == KF_PRODUCT_PLAIN)
        return;
    if (kind == KF_PRODUCT_FIRST_TRANSPOSED || kind == KF_PRODUCT_BOTH_TRANSPOSED) {
        s_note_first (f, spec, &p);
        return;
    }
    const char *name = p.b;
    size_t i;
    json_t *t;
    if (kind == KF_PRODUCT_LINEAR) {
        fputs ("Layout of the linear layer: nn.Linear and F.linear store the weight as "
               "[out_features][in_features] (row-major)", f);
        json_array_foreach (json_object_get (spec, "inputs"), i, t) {
            const char *in = kf_jstr (t, "name");
            size_t n = strlen (in);
            json_t *shape = json_object_get (t, "shape");
            if (n >= 6 && !strcmp (in + n - 6, "weight") && json_array_size (shape) == 2) {
                fprintf (f, ", here %s ", in);
                s_dims (f, shape);
                break;
            }
        }
        fputs (": in y = x @ W^T both x's rows and W's rows are contiguous along the "
               "reduction dimension (in_features), so neither operand needs a transpose to "
               "be read contiguously; each output is a dot product of a row of x with a row "
               "of W.\n", f);
        return;
    }
    json_t *fwd = kf_prompt_python_params (kf_jstr (json_object_get (spec, "reference"),
                                                    "source"), "forward");
    t = s_input_of (spec, fwd, name);
    json_decref (fwd);
    const char *in = t ? kf_jstr (t, "name") : name;
    fputs ("Layout of the product: the reference multiplies by ", f);
    if (strcmp (in, name))
        fprintf (f, "%s (%s in its code) transposed. ", in, name);
    else
        fprintf (f, "%s transposed. ", name);
    json_t *shape = t ? json_object_get (t, "shape") : NULL;
    size_t rank = json_array_size (shape);
    if (rank >= 2) {
        fprintf (f, "%s is ", in);
        s_dims (f, shape);
        fprintf (f, ", %s row-major as [N][K]: N = %lld output columns, K = %lld the "
                 "reduction dimension.", rank > 2 ? "each of its matrices stored" : "stored",
                 (long long) json_integer_value (json_array_get (shape, rank - 2)),
                 (long long) json_integer_value (json_array_get (shape, rank - 1)));
    }
    else
        fprintf (f, "%s is stored row-major as [N][K] (N the output columns, K the reduction "
                 "dimension).", in);
    //  Round 17: the outer-product order's copy is not for unit stride.
    fprintf (f, " So the rows of both operands are contiguous along k: read %s along k as "
             "stored, each output a dot product of a row of the first operand with a row of "
             "%s; neither operand needs a transpose or a packed copy to be read "
             "contiguously. It is the x @ W^T of the strategies and ideas, with W = %s. A dot "
             "product ends in a sum across its vector's lanes, one per output; the "
             "outer-product order needs none, at the price of a copy of %s's block "
             "transposed to [K][NR] panels.", in, in, in, in);
    //  Round 41: x @ x.t() was described as any x @ W^T, and that its
    //  product is symmetric came from the problem's docstring alone.
    //  Round 42: the triangle kernels sat at 72-74% of one core against
    //  86% for full ones, the helper's guess the mirror's column stores.
    if (kf_prompt_product_is_self (kind, &p))
        fprintf (f, " Here the first operand is %s too: the product is %s times its own "
                 "transpose, so product[i][j] = product[j][i], and its diagonal and one "
                 "triangle, about half the multiply-adds, give all of it (each tile off the "
                 "diagonal computed once and stored twice, itself and its mirror transposed, an "
                 "elementwise epilogue applied to both). The mirror is a column walk where it "
                 "is stored a value at a time (each value in another row, N floats apart); "
                 "transposed in registers first, it is stored as whole row segments like the "
                 "tile.", in, in);
    //  Round 16: q @ k^T with K = 64 was told dot products along k, each
    //  4 vectors long and then summed across its lanes; the model found
    //  the broadcast form over a transposed block faster, and a meta
    //  round had to say so.
    long long k = rank >= 2 ? (long long) json_integer_value (json_array_get (shape, rank - 1))
                            : 0;
    if (k > 0 && k <= 128)
        fprintf (f, " K is short here (%lld): a dot product of %lld f32 is %lld AVX-512 "
                 "vectors (%lld AVX2), and summing its vector accumulator across the lanes at "
                 "the end costs about as much as its FMAs; a register tile of outputs fed by "
                 "broadcasts of the first operand against vectors of a transposed copy of %s's "
                 "block (the outer-product order, the copy a small [K][NR] panel) needs no "
                 "such sums, and is the alternative to time.", k, k, (k + 15) / 16, (k + 7) / 8,
                 in);
    fputc ('\n', f);
}
