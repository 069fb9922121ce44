/*  test_prompt_diff.c - a variant of the kernel to improve is shown as its
 *  difference from it (kf_prompt_diff.h; round 12: inspirations and last
 *  tries that were variants cost a prompt about 200 lines each). */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_diff.h"
#include "../kf_test.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

//  A kernel of LINES lines "  y[i] = x[i] * K;" with line CHANGED (0:
//  none) saying "  y[i] = x[i] * 2 + K;" instead.
static char *
s_source (int lines, int changed)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    for (int k = 1; k <= lines; k++)
        fprintf (f, k == changed ? "  y[i] = x[i] * 2 + %d;\n" : "  y[i] = x[i] * %d;\n", k);
    fclose (f);
    return text;
}

static void
test_diff (void)
{
    char *a = s_source (40, 0), *b = s_source (40, 20);
    int common = 0, lines = 0;
    char *d = kf_prompt_diff (a, b, 0.5, &common, &lines);
    CHECK (d && common == 39 && lines == 40);
    //  One hunk: two lines of context each side of the change.
    CHECK (d && !strcmp (d, "@@ -18,5 +18,5 @@\n"
                            "   y[i] = x[i] * 18;\n"
                            "   y[i] = x[i] * 19;\n"
                            "-  y[i] = x[i] * 20;\n"
                            "+  y[i] = x[i] * 2 + 20;\n"
                            "   y[i] = x[i] * 21;\n"
                            "   y[i] = x[i] * 22;\n"));
    free (d);
    free (b);
    //  Two changes five lines apart share a hunk; twenty apart do not.
    b = s_source (40, 5);
    char *b2 = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&b2, &size);
    fputs (b, f);
    fclose (f);
    char *p = strstr (b2, "  y[i] = x[i] * 10;\n");
    memcpy (p, "  y[i] = x[i] + 10;\n", 20);
    d = kf_prompt_diff (a, b2, 0.5, &common, &lines);
    CHECK (d && strstr (d, "@@ -3,10 +3,10 @@\n") && !strstr (d + 1, "\n@@"));
    free (d);
    p = strstr (b2, "  y[i] = x[i] * 30;\n");
    memcpy (p, "  y[i] = x[i] + 30;\n", 20);
    d = kf_prompt_diff (a, b2, 0.5, &common, &lines);
    CHECK (d && strstr (d, "@@ -3,10 +3,10 @@\n") && strstr (d, "\n@@ -28,5 +28,5 @@\n"));
    CHECK (d && kf_test_has (d, "+  y[i] = x[i] + 30;\n") && kf_test_has (d, "-  y[i] = x[i] * 30;\n"));
    free (d);
    free (b2);
    free (b);
    //  Lines added and removed.
    d = kf_prompt_diff ("a\nb\nc\nd\n", "a\nb\nX\nc\nd\n", 0.5, &common, &lines);
    CHECK (d && !strcmp (d, "@@ -1,4 +1,5 @@\n a\n b\n+X\n c\n d\n") && common == 4);
    free (d);
    d = kf_prompt_diff ("a\nb\nc\nd\n", "a\nb\nd\n", 0.5, &common, &lines);
    CHECK (d && !strcmp (d, "@@ -1,4 +1,3 @@\n a\n b\n-c\n d\n"));
    free (d);
    //  The same source, a source too unlike, one too long: shown whole.
    CHECK (kf_prompt_diff (a, a, 0.5, &common, &lines) == NULL
           && common == 40);
    CHECK (kf_prompt_diff ("a\nb\nc\nd\n", "a\nx\ny\nz\n", 0.5, &common, &lines) == NULL
           && common == 1);
    char *big = s_source (KF_PROMPT_DIFF_MAX_LINES + 1, 0);
    CHECK (kf_prompt_diff (big, a, 0.5, &common, &lines) == NULL);
    CHECK (kf_prompt_diff (NULL, a, 0.5, &common, &lines) == NULL);
    free (big);
    free (a);
}

static json_t *
s_kernel (int id, double speedup, const char *coords, const char *source)
{
    return json_pack ("{s:i, s:s, s:s, s:f, s:s, s:f, s:f, s:s}", "id", id, "source", source,
                      "status", "correct", "speedup", speedup, "coords", coords,
                      "candidate_ns", 4.06e6, "reference_ns", 15e6, "fidelity", "full");
}

//  In a prompt: an inspiration and a last try that are variants of the
//  kernel to improve come as diffs; one that is not comes whole.
static void
test_prompt (void)
{
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}]}",
                              "name", "scale", "op", "elementwise", "description", "y = 2x",
                              "inputs", "name", "x", "shape", 4096, "dtype", "f32", "outputs",
                              "name", "y", "shape", 4096, "dtype", "f32");
    char *a = s_source (60, 0), *variant = s_source (60, 30), *other = s_source (60, 0);
    for (char *c = other; *c; c++)
        if (*c == '*')
            *c = '/';
    json_t *base = s_kernel (2, 3.0, "{1,0,0}", a);
    json_t *insp = json_pack ("[o, o]", s_kernel (4, 2.0, "{0,0,0}", variant),
                              s_kernel (5, 1.5, "{2,0,0}", other));
    json_t *last = s_kernel (7, 2.5, "{1,0,0}", variant);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .inspirations = insp };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "This kernel shares 59 of its 60 lines with the kernel to improve "
                           "(candidate 2), so only what differs is shown: a unified diff whose '-' "
                           "lines are the kernel to improve's, '+' lines this kernel's, with 2 "
                           "unchanged lines around each change.\n```diff\n@@ -28,5 +28,5 @@\n"));
    CHECK (kf_test_has (p, "+  y[i] = x[i] * 2 + 30;\n"));
    //  The other inspiration shares no line: whole.
    CHECK (kf_test_has (p, "```c\n  y[i] = x[i] / 1;\n"));
    free (p);
    in.inspirations = NULL;
    in.last = last;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "It shares 59 of its 60 lines with the kernel to improve (candidate 2)"));
    CHECK (!kf_test_has (p, "```c\n  y[i] = x[i] * 2 + 30;"));
    free (p);
    json_decref (last);
    json_decref (insp);
    json_decref (base);
    json_decref (spec);
    free (a);
    free (variant);
    free (other);
}

int
main (void)
{
    test_diff ();
    test_prompt ();
    return kf_test_done ("test_prompt_diff");
}
