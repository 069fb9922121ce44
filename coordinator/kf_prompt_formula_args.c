/*  kf_prompt_formula_args.c - a call's arguments, read for the formula
 *  reader (kf_prompt_formula_args.h).
 */
#include "kf_prompt_formula_args.h"
#include "kf_prompt_class.h"
#include "kf_json.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

//  The top-level arguments of the call whose '(' is OPEN and ')' CLOSE,
//  one after another: *ARG (ARG_SIZE bytes) the next one with its white
//  space removed (cut to fit), *AT where to go on from. False past the
//  last.
bool
kf_formula_next_arg (const char **at, const char *close, char *arg, size_t arg_size)
{
    const char *p = *at;
    if (p >= close)
        return false;
    size_t n = 0;
    for (int depth = 0; p < close && !(*p == ',' && depth == 0); p++) {
        depth += (*p == '(' || *p == '[') - (*p == ')' || *p == ']');
        if (!isspace ((unsigned char) *p) && n + 1 < arg_size)
            arg[n++] = *p;
    }
    arg[n] = '\0';
    *at = p + 1;
    return true;
}

//  Whether the call whose '(' is OPEN and ')' CLOSE has the literal 2 as
//  its last argument ("y.pow(2)", "torch.pow(y, 2.0)", "exponent=2"): a
//  square, one product, no libm call (round 18: an RMS norm's
//  y.pow(2) was costed as 524288 libm calls, 164% of the product's time,
//  and the prompt asked for a polynomial approximation of pow).
bool
kf_formula_pow_square (const char *open, const char *close)
{
    char arg[16] = "", last[16] = "";
    for (const char *at = open + 1; kf_formula_next_arg (&at, close, arg, sizeof arg);)
        memcpy (last, arg, sizeof last);
    const char *v = strncmp (last, "exponent=", 9) ? last : last + 9;
    return !strcmp (v, "2") || !strcmp (v, "2.") || !strcmp (v, "2.0");
}

//  Whether the call whose '(' is OPEN and ')' CLOSE has a third as its
//  last argument ("x.pow(1.0 / 3.0)", "exponent=1/3", "0.3333"): a cube
//  root, named so (round 20: "pow" said nothing of cbrtf, nor that the
//  vector ISAs have no cube root).
bool
kf_formula_pow_third (const char *open, const char *close)
{
    char arg[24] = "", last[24] = "", v[24];
    for (const char *at = open + 1; kf_formula_next_arg (&at, close, arg, sizeof arg);)
        memcpy (last, arg, sizeof last);
    const char *from = strncmp (last, "exponent=", 9) ? last : last + 9;
    size_t n = 0;
    for (const char *c = from; *c && n + 1 < sizeof v; c++)
        if (*c != ' ')
            v[n++] = *c;
    v[n] = '\0';
    static const char *const thirds[] = { "1/3", "1./3.", "1.0/3.0", "1/3.0", "1.0/3", "1./3",
                                          "1/3." };
    for (size_t i = 0; i < sizeof thirds / sizeof thirds[0]; i++)
        if (!strcmp (v, thirds[i]))
            return true;
    return !strncmp (v, "0.3333", 6);
}

//  Whether the call whose '(' is OPEN and ')' CLOSE names the last
//  dimension among its arguments: -1, dim=-1 or axis=-1, spaces aside.
//  A mean over another dimension, or over the whole tensor, is no
//  row function (round 18's open item: any mean after a product was).
//  Round 31: or dim 1 where the output has RANK 1, a matrix's rows each
//  reduced to one value (logsumexp(p, dim=1)); round 48: or RANK 2 with
//  keepdim=True (z - z.mean(dim=1, keepdim=True) read as no row function).
bool
kf_formula_last_dim (const char *open, const char *close, size_t rank)
{
    char arg[16];
    bool one = false, keep = false;
    for (const char *at = open + 1; kf_formula_next_arg (&at, close, arg, sizeof arg);) {
        if (!strcmp (arg, "-1") || !strcmp (arg, "dim=-1") || !strcmp (arg, "axis=-1"))
            return true;
        one |= !strcmp (arg, "1") || !strcmp (arg, "dim=1") || !strcmp (arg, "axis=1");
        keep |= !strcmp (arg, "keepdim=True");
    }
    return one && (rank == 1 || (rank == 2 && keep));
}

//  Whether F.normalize's call, whose '(' is OPEN and ')' CLOSE, scales
//  each row of an output of RANK dimensions to unit Euclidean length: p
//  2 (its default) and dim -1, or dim 1 (its default) of a matrix.
bool
kf_formula_normalize_rows (const char *open, const char *close, size_t rank)
{
    char arg[24], p[24] = "2", dim[24] = "1";
    int n = 0;
    for (const char *at = open + 1; kf_formula_next_arg (&at, close, arg, sizeof arg); n++) {
        if (!strncmp (arg, "p=", 2) || (n == 1 && !strchr (arg, '=')))
            snprintf (p, sizeof p, "%s", arg + (arg[0] == 'p' ? 2 : 0));
        else if (!strncmp (arg, "dim=", 4) || (n == 2 && !strchr (arg, '=')))
            snprintf (dim, sizeof dim, "%s", arg + (arg[0] == 'd' ? 4 : 0));
    }
    if (strcmp (p, "2") && strcmp (p, "2.") && strcmp (p, "2.0"))
        return false;
    return !strcmp (dim, "-1") || (rank == 2 && !strcmp (dim, "1"));
}


//  The elements of SPEC's input I, 0 where not known.
static double
s_input_elements (json_t *spec, size_t i)
{
    json_t *t = json_array_get (json_object_get (spec, "inputs"), i);
    return json_array_size (json_object_get (t, "shape")) ? kf_prompt_tensor_elements (t) : 0;
}

double
kf_formula_arg_broadcast (const char *open, const char *close, json_t *spec, json_t *params,
                          double outputs)
{
    double most = 0;
    for (const char *p = open + 1; p < close;) {
        if (!(isalpha ((unsigned char) *p) || *p == '_')
            || (p > open && (isalnum ((unsigned char) p[-1]) || p[-1] == '.'))) {
            p++;
            continue;
        }
        const char *q = p;
        while (q < close && (isalnum ((unsigned char) *q) || *q == '_' || *q == '.'))
            q++;
        const char *after = q;
        while (after < close && isspace ((unsigned char) *after))
            after++;
        //  A function's name (torch.tanh, F.silu) is no value.
        if (*after == '(') {
            p = q;
            continue;
        }
        size_t len = (size_t) (q - p), i;
        json_t *name;
        bool input = false;
        json_array_foreach (params, i, name)
            if (strlen (json_string_value (name)) == len
                && !strncmp (json_string_value (name), p, len)) {
                double n = s_input_elements (spec, i);
                if (!(n > 0) || n >= outputs)
                    return 0;
                most = n > most ? n : most;
                input = true;
            }
        if (!input)
            return 0;
        p = q;
    }
    return most;
}
