/*  test_tune_space.c - kf_tune (common/kf_tune.c) reads kf-tune lines and
 *  picks points: the cap, the defaults first, determinism, bad lines
 *  skipped. Split from test_tune.c, whose sweeps build and run kernels. */
#include "kf_tune.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
main (void)
{
    s_test_parse ();
    return kf_test_done ("test_tune_space");
}
