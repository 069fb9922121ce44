/*  test_tune_space.c - kf_tune (common/kf_tune.c) reads kf-tune lines and
 *  picks points: the cap, the defaults first, determinism, bad lines
 *  skipped; conditions (`NAME=... when OTHER=...`): the space counts
 *  distinct points, an inactive parameter is built at its default, a
 *  budget below the space gets distinct points, a move of a parameter
 *  inactive at the defaults turns on what it needs, and every malformed
 *  condition is refused with its reason. Split from test_tune.c, whose
 *  sweeps build and run kernels. */
#include "kf_tune.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *s_softmax_head =
    "/* kf-params: LANES=8 ALGO=twopass EXP=poly RECIP=1 */\n"
    "/* kf-tune: LANES=1,2,4,8,16 ALGO=threepass,twopass,online EXP=libm,poly RECIP=0,1 */\n"
    "#ifndef LANES\n#define LANES 8\n#endif\n"
    "#ifndef ALGO\n#define ALGO twopass\n#endif\n"
    "#ifndef EXP\n#define EXP poly\n#endif\n"
    "#ifndef RECIP\n#define RECIP 1\n#endif\n";

static char *
s_source (const char *head, const char *tail)
{
    size_t n = strlen (head) + strlen (tail) + 1;
    char *s = malloc (n);
    snprintf (s, n, "%s%s", head, tail);
    return s;
}

static int
s_differences (json_t *a, json_t *b)
{
    int d = 0;
    const char *key;
    json_t *v;
    json_object_foreach (a, key, v)
        d += !json_equal (v, json_object_get (b, key));
    return d;
}

static void
s_test_parse (void)
{
    char *src = s_source (s_softmax_head, "int kf_forward;\n");
    kf_tune_t *t = kf_tune_new (src, strlen (src), 16);
    CHECK (t != NULL);
    CHECK (kf_tune_params (t) == 4);
    CHECK (kf_tune_space (t) == 60);
    CHECK (kf_tune_configs (t) == 16);
    CHECK (kf_tune_skipped (t) == 44);
    char label[256];
    kf_tune_config_label (t, 0, label, sizeof label);
    printf ("  default point: %s\n", label);
    CHECK (!strcmp (label, "LANES=8 ALGO=twopass EXP=poly RECIP=1"));
    json_t *p0 = kf_tune_config_json (t, 0);
    CHECK (json_is_integer (json_object_get (p0, "LANES")));
    CHECK (json_is_string (json_object_get (p0, "ALGO")));
    char def[64];
    CHECK (kf_tune_config_define (t, 0, 1, def, sizeof def) == 0 && !strcmp (def, "-DALGO=twopass"));
    CHECK (kf_tune_config_define (t, 16, 0, def, sizeof def) == -1);
    CHECK (kf_tune_config_json (t, 16) == NULL);
    //  Then the eight one-parameter moves (4 + 2 + 1 + 1), then the spread.
    for (int i = 1; i <= 8; i++) {
        json_t *p = kf_tune_config_json (t, i);
        CHECK (s_differences (p, p0) == 1);
        json_decref (p);
    }
    //  All distinct, and every value of LANES and ALGO is visited.
    bool lanes_seen[17] = { false }, online = false;
    for (int i = 0; i < 16; i++) {
        json_t *p = kf_tune_config_json (t, i);
        for (int j = 0; j < i; j++) {
            json_t *q = kf_tune_config_json (t, j);
            CHECK (!json_equal (p, q));
            json_decref (q);
        }
        int lanes = (int) json_integer_value (json_object_get (p, "LANES"));
        if (lanes >= 0 && lanes <= 16)
            lanes_seen[lanes] = true;
        online |= !strcmp (json_string_value (json_object_get (p, "ALGO")), "online");
        json_decref (p);
    }
    CHECK (lanes_seen[1] && lanes_seen[2] && lanes_seen[4] && lanes_seen[8] && lanes_seen[16]);
    CHECK (online);
    //  Deterministic: the same source and cap, the same points.
    kf_tune_t *again = kf_tune_new (src, strlen (src), 16);
    for (int i = 0; i < 16; i++) {
        json_t *p = kf_tune_config_json (t, i), *q = kf_tune_config_json (again, i);
        CHECK (json_equal (p, q));
        json_decref (p);
        json_decref (q);
    }
    kf_tune_destroy (&again);
    json_decref (p0);
    kf_tune_destroy (&t);
    CHECK (t == NULL);
    kf_tune_destroy (&t);

    //  Under the cap: the whole space. A cap of 1: the defaults alone.
    t = kf_tune_new (src, strlen (src), 100);
    CHECK (kf_tune_configs (t) == 60 && kf_tune_skipped (t) == 0);
    kf_tune_destroy (&t);
    t = kf_tune_new (src, strlen (src), 1);
    CHECK (kf_tune_configs (t) == 1);
    kf_tune_config_label (t, 0, label, sizeof label);
    CHECK (!strcmp (label, "LANES=8 ALGO=twopass EXP=poly RECIP=1"));
    kf_tune_destroy (&t);
    free (src);

    //  Bad lines are skipped whole; a good one among them still counts;
    //  a default missing from the list joins it; no #define: the first.
    const char *mixed =
        "// kf-tune: A=1,,2\n"
        "// kf-tune: 9X=1,2\n"
        "// kf-tune: C=1.5,2\n"
        "// kf-tune: D=1,2 D=3\n"
        "// kf-tune: E=1,1\n"
        "// kf-tune: F\n"
        "int x = 1; // kf-tune: G=1,2\n"
        "/* kf-tune: B=1,2 K=left,right */\n"
        "/* kf-tune: B=7,8 */\n"
        "#define B 3\n";
    t = kf_tune_new (mixed, strlen (mixed), 16);
    CHECK (t != NULL);
    CHECK (kf_tune_params (t) == 2);
    CHECK (kf_tune_space (t) == 6);
    kf_tune_config_label (t, 0, label, sizeof label);
    printf ("  mixed lines: %d params, default %s\n", kf_tune_params (t), label);
    CHECK (!strcmp (label, "B=3 K=left"));
    kf_tune_destroy (&t);
    const char *none = "/* kf-tune: */\n// kf-tune: =1\nint kf_forward;\n";
    CHECK (kf_tune_new (none, strlen (none), 16) == NULL);
    CHECK (kf_tune_new ("int y;", 6, 16) == NULL);
    CHECK (kf_tune_new (NULL, 0, 16) == NULL);
    //  Not NUL-terminated: only SIZE bytes are read.
    const char *cut = "// kf-tune: Z=1,2 Q=5,6";
    t = kf_tune_new (cut, 17, 16);
    CHECK (t && kf_tune_params (t) == 1 && kf_tune_space (t) == 2);
    kf_tune_destroy (&t);
}

//  What kf_tune_new logs about SOURCE (its refusals), into BUF; how many
//  parameters it kept.
static int
s_tune_log (const char *source, char *buf, size_t size)
{
    fflush (stderr);
    FILE *tmp = tmpfile ();
    int saved = dup (STDERR_FILENO);
    dup2 (fileno (tmp), STDERR_FILENO);
    kf_tune_t *t = kf_tune_new (source, strlen (source), 16);
    fflush (stderr);
    dup2 (saved, STDERR_FILENO);
    close (saved);
    rewind (tmp);
    size_t n = fread (buf, 1, size - 1, tmp);
    buf[n] = 0;
    fclose (tmp);
    fputs (buf, stderr);
    int params = kf_tune_params (t);
    kf_tune_destroy (&t);
    return params;
}

//  The label of point I with DIST left out where PREFETCH=0: what the
//  code of the point depends on.
static void
s_code_label (kf_tune_t *t, int i, char *buf, size_t size)
{
    json_t *p = kf_tune_config_json (t, i);
    if (json_integer_value (json_object_get (p, "PREFETCH")) == 0)
        json_object_del (p, "DIST");
    kf_tune_params_label (p, buf, size);
    json_decref (p);
}

//  Points I and J of T are the same code: equal labels once DIST is left
//  out where PREFETCH=0. Counts such pairs, and the points that build an
//  inactive DIST at other than its default DFLT.
static void
s_wasted (kf_tune_t *t, const char *dflt, int *dup, int *not_default)
{
    char label[256], other[256], def[64];
    *dup = *not_default = 0;
    for (int i = 0; i < kf_tune_configs (t); i++) {
        s_code_label (t, i, label, sizeof label);
        for (int j = 0; j < i; j++) {
            s_code_label (t, j, other, sizeof other);
            *dup += !strcmp (label, other);
        }
        json_t *p = kf_tune_config_json (t, i);
        kf_tune_config_define (t, i, 1, def, sizeof def);
        *not_default += json_integer_value (json_object_get (p, "PREFETCH")) == 0
                        && strcmp (def, dflt);
        json_decref (p);
    }
}

static void
s_test_conditions (void)
{
    //  DIST matters only when PREFETCH=1: 2 + 3 x 2 = 8 distinct points of 12.
    const char *src = "/* kf-tune: PREFETCH=0,1 DIST=8,4,16 when PREFETCH=1 UNROLL=1,2 */\n"
                      "#define PREFETCH 0\n#define DIST 8\n#define UNROLL 1\n";
    char label[256];
    int dup, not_default;
    for (int cap = 4; cap <= 16; cap += 2) {
        kf_tune_t *t = kf_tune_new (src, strlen (src), cap);
        CHECK (t && kf_tune_params (t) == 3 && kf_tune_space (t) == 8);
        CHECK (kf_tune_configs (t) == (cap < 8 ? cap : 8));
        CHECK (kf_tune_skipped (t) == 8 - kf_tune_configs (t));
        s_wasted (t, "-DDIST=8", &dup, &not_default);
        CHECK (dup == 0);
        CHECK (not_default == 0);
        if (cap == 4) {
            //  A move of DIST at the defaults turns PREFETCH on with it.
            kf_tune_config_label (t, 2, label, sizeof label);
            printf ("  conditional move: %s\n", label);
            CHECK (!strcmp (label, "PREFETCH=1 DIST=4 UNROLL=1"));
        }
        kf_tune_destroy (&t);
    }
    //  A budget well below the space: 4 + 8 x 4 = 36 points; the spread
    //  part must not spend points on DIST while PREFETCH=0.
    const char *wide = "/* kf-tune: PREFETCH=0,1 DIST=1,2,3,4,5,6,7,8 when PREFETCH=1 "
                       "UNROLL=1,2,4,8 */\n#define PREFETCH 0\n#define DIST 4\n";
    for (int cap = 8; cap <= 16; cap += 4) {
        kf_tune_t *t = kf_tune_new (wide, strlen (wide), cap);
        CHECK (t && kf_tune_space (t) == 36 && kf_tune_configs (t) == cap);
        s_wasted (t, "-DDIST=4", &dup, &not_default);
        CHECK (dup == 0);
        CHECK (not_default == 0);
        kf_tune_destroy (&t);
    }
    //  A chain, a condition with two values, a line naming an earlier
    //  line's parameter, and a condition on a default that the list lacks:
    //  (VEC=1 | VEC=4,8 x (UNROLL=1 | UNROLL=2 x TAIL)) x (P=0 x Q | P=1) = 7 x 3.
    const char *chain = "// kf-tune: VEC=1,4,8\n"
                        "// kf-tune: UNROLL=1,2 when VEC=4,8 TAIL=mask,scalar when UNROLL=2\n"
                        "// kf-tune: P=1 Q=2,3 when P=0\n#define P 0\n";
    kf_tune_t *t = kf_tune_new (chain, strlen (chain), 64);
    CHECK (t && kf_tune_params (t) == 5 && kf_tune_space (t) == 21 && kf_tune_configs (t) == 21);
    kf_tune_destroy (&t);
    const char *forward = "// kf-tune: B=1,2 when A=1 A=0,1\n";
    t = kf_tune_new (forward, strlen (forward), 16);
    CHECK (t && kf_tune_space (t) == 3 && kf_tune_configs (t) == 3);
    kf_tune_destroy (&t);

    //  Refused whole, each with its reason.
    static const struct { const char *line, *why; } bad[] = {
        { "// kf-tune: A=1,2 B=3,4 when C=1\n", "'C', which is not declared" },
        { "// kf-tune: B=3,4 when Z=1\n// kf-tune: Z=1,2\n", "'Z', which is not declared" },
        { "// kf-tune: Z=1,2 Y=1,2\n// kf-tune: when Z=1 A=1,2\n", "before any parameter" },
        { "// kf-tune: A=1,2 when A=1\n", "condition on itself" },
        { "// kf-tune: A=1,2 B=3,4 when A=5\n", "'5' is not one of A's values" },
        { "// kf-tune: A=1,2 when B=3 B=3,4 when A=1\n", "lead back" },
        { "// kf-tune: A=1,2 when C=1 B=1,2 when A=1 C=1,2 when B=2\n", "lead back" },
        { "// kf-tune: when A=1 A=1,2\n", "before any parameter" },
        { "// kf-tune: A=1,2 B=3,4 when\n", "names no condition" },
        { "// kf-tune: A=1,2 B=3,4 when A=1 when A=2\n", "second condition" },
        { "// kf-tune: A=1,2 B=3,4 when A\n", "is not OTHER=values" },
        { "// kf-tune: A=1,2 B=3,4 when A=\n", "is not OTHER=values" },
    };
    char log[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        //  Only a line without a condition is left, if any.
        int left = s_tune_log (bad[i].line, log, sizeof log);
        int want = strstr (bad[i].line, "Z=1,2") ? 1 + (strstr (bad[i].line, "Y=1,2") != NULL) : 0;
        if (left != want || !strstr (log, bad[i].why))
            fprintf (stderr, "  %s  -> %s", bad[i].line, log);
        CHECK (left == want && strstr (log, bad[i].why));
    }
}

int
main (void)
{
    s_test_parse ();
    s_test_conditions ();
    return kf_test_done ("test_tune_space");
}
