/*  test_ctl_text.c - worker text made fit to show a user (kfctl_text.c),
 *  a traceback's tail (common/kf_text.c), and a kernel's refusal read
 *  defensively (kf_eval_refusal.c): whole lines with the rest counted
 *  (the worker's own note folded into the count), the worker's file
 *  names given back as the user's without touching longer names, and a
 *  refusal bounded and made printable. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_text.h"
#include "../../exec-worker/kf_eval_check.h"
#include "../../compile-worker/kf_compile.h"
#include "kf_rename.h"
#include "kf_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_is (char *got, const char *want)
{
    int same = got && !strcmp (got, want);
    if (!same)
        printf ("    got  '%s'\n    want '%s'\n", got ? got : "(null)", want);
    free (got);
    return same;
}

static const char *s_refusal_text;
static const char *
s_refusal (void)
{
    return s_refusal_text;
}

int
main (void)
{
    /* Lines: the first ones, or the last ones, never part of one. */
    CHECK (s_is (kf_ctl_text_lines ("a\nb\nc\n\n", 5, false), "a\nb\nc"));
    CHECK (s_is (kf_ctl_text_lines ("a b\nc d\ne f\ng h", 2, false), "a b\nc d\n(2 more lines)"));
    CHECK (s_is (kf_ctl_text_lines ("a b\nc d\ne f\ng h", 3, true), "(1 more line)\nc d\ne f\ng h"));
    CHECK (s_is (kf_ctl_text_lines ("one long line, never cut", 1, false), "one long line, never cut"));
    /* A worker's own note among the lines left out adds its count. */
    CHECK (s_is (kf_ctl_text_lines ("(40 more lines)\nx\ny\nz", 2, true), "(41 more lines)\ny\nz"));
    CHECK (s_is (kf_ctl_text_lines ("e1\ne2\nw\n[7 more lines omitted]\n", 2, false),
                 "e1\ne2\n(8 more lines)"));
    CHECK (s_is (kf_ctl_text_lines ("(x) not a note\nb\nc", 1, true), "(2 more lines)\nc"));

    /* Names: whole names only, wherever a path or a quote puts them. */
    CHECK (s_is (kf_rename_file ("kernel.c:3:5: error: x\nIn file included from kernel.c:",
                                 "kernel.c", "my_softmax.c"),
                 "my_softmax.c:3:5: error: x\nIn file included from my_softmax.c:"));
    CHECK (s_is (kf_rename_file ("mykernel.c:1 kernel.cu:2 kernel.c_x:3 ./kernel.c:4",
                                 "kernel.c", "r.c"),
                 "mykernel.c:1 kernel.cu:2 kernel.c_x:3 ./r.c:4"));
    CHECK (s_is (kf_rename_file ("  File \"problem.py\", line 6, in forward\nsee problem.py.",
                                 "problem.py", "my_problem.py"),
                 "  File \"my_problem.py\", line 6, in forward\nsee my_problem.py."));
    CHECK (s_is (kf_rename_file ("", "kernel.c", "x.c"), ""));
    /* The user's name a path (the task's reference.path): the worker's
     * folder in front of its name goes with it; longer names stay. */
    CHECK (s_is (kf_rename_file ("/tmp/kf-build.Ab1/kernel.c:3:5: error: x\n"
                                 "In file included from ./kernel.c:2, mykernel.c:1 /x/mykernel.c:2",
                                 "kernel.c", "examples/tasks/t/reference.c"),
                 "examples/tasks/t/reference.c:3:5: error: x\n"
                 "In file included from examples/tasks/t/reference.c:2, mykernel.c:1 /x/mykernel.c:2"));
    CHECK (s_is (kf_rename_file ("kernel.cu(12): error: x", "kernel.cu", "/home/u/r.cu"),
                 "/home/u/r.cu(12): error: x"));
    /* ... by the task's reference: the worker's name for its language. */
    json_t *t = json_pack ("{s:{s:s, s:s, s:s}}", "reference", "language", "cuda", "source",
                           "x", "path", "k/r.cu");
    CHECK (s_is (kf_rename_reference (t, "kernel.cu(3): error\nkernel.c:1"),
                 "k/r.cu(3): error\nkernel.c:1"));
    json_object_set_new (json_object_get (t, "reference"), "language", json_string ("pytorch"));
    json_object_set_new (json_object_get (t, "reference"), "path", json_string ("p.py"));
    CHECK (s_is (kf_rename_reference (t, "File \"problem.py\", line 2"), "File \"p.py\", line 2"));
    json_object_del (json_object_get (t, "reference"), "path");
    CHECK (s_is (kf_rename_reference (t, "File \"problem.py\""), "File \"problem.py\""));
    json_decref (t);

    /* A traceback's tail (kf_text.c): whole lines, the rest counted. */
    CHECK (s_is (kf_text_tail ("a\nb\nc\n", 100), "a\nb\nc"));
    CHECK (s_is (kf_text_tail ("first line\nsecond line\nthird\n", 14), "(2 more lines)\nthird"));
    CHECK (s_is (kf_text_tail ("one\ntwo words here\nend", 12), "(2 more lines)\nend"));
    CHECK (s_is (kf_text_tail ("one enormous line", 8), "... line"));
    CHECK (s_is (kf_text_tail ("a\nan enormous last line", 8), "(1 more line)\n... line"));
    CHECK (s_is (kf_text_tail ("", 10), ""));

    /* A head for a stored reason (kf_text_head): whole lines, or words. */
    CHECK (s_is (kf_text_head ("short\n", 100), "short"));
    CHECK (s_is (kf_text_head ("line one\nline two\nline three", 12), "line one\n(2 more lines)"));
    CHECK (s_is (kf_text_head ("one enormous first line", 12), "one enormous ..."));
    CHECK (s_is (kf_text_head ("one enormous first line\nx", 12), "one enormous ...\n(1 more line)"));
    /* ... and the same cut inside a reason (kf_text_head_in). */
    char in[64];
    CHECK (!strcmp (kf_text_head_in (in, sizeof in, "failed: ", "line one\nline two\nline three",
                                     12, " (after 3 attempts)"),
                    "failed: line one\n(2 more lines) (after 3 attempts)"));
    CHECK (!strcmp (kf_text_head_in (in, 16, "pre ", "a b c d e f g h i j", 100, " post"),
                    "pre a b c d e f"));
    CHECK (!strcmp (kf_text_head_in (in, sizeof in, "", NULL, 10, "."), "."));

    /* A refusal: bounded, one line, printable. */
    char why[KF_REFUSAL_MAX + 1];
    s_refusal_text = "expects a square matrix, got 512 x 256";
    CHECK (kf_eval_refusal_read (s_refusal, why, sizeof why) == strlen (s_refusal_text));
    CHECK (!strcmp (why, s_refusal_text));
    s_refusal_text = "first line\nsecond line";
    kf_eval_refusal_read (s_refusal, why, sizeof why);
    CHECK (!strcmp (why, "first line"));
    s_refusal_text = "bell\a and \x80\xff high\ttab  ";
    kf_eval_refusal_read (s_refusal, why, sizeof why);
    CHECK (!strcmp (why, "bell? and ?? high tab"));
    static char big[1000];
    memset (big, 'x', sizeof big - 1);
    s_refusal_text = big;
    CHECK (kf_eval_refusal_read (s_refusal, why, sizeof why) == KF_REFUSAL_MAX);
    char small[8];
    CHECK (kf_eval_refusal_read (s_refusal, small, sizeof small) == 7);
    s_refusal_text = NULL;
    CHECK (kf_eval_refusal_read (s_refusal, why, sizeof why) == 0 && why[0] == 0);
    CHECK (kf_eval_refusal_read (NULL, why, sizeof why) == 0 && why[0] == 0);
    CHECK (kf_eval_refusal_beside (NULL) == NULL);
    CHECK (kf_eval_refusal_beside ((const void *) main) == NULL);   /* the program has none */
    /* Which details are refusals (not retried). */
    CHECK (kf_eval_is_refusal ("reference refused on set 0: expects a square matrix"));
    CHECK (kf_eval_is_refusal ("reference: reference refused on set 1: x"));
    CHECK (!kf_eval_is_refusal ("reference kf_forward returned 1 on set 0"));
    CHECK (!kf_eval_is_refusal ("reference: segmentation fault"));
    CHECK (!kf_eval_is_refusal (NULL));

    /* A compiler log of one enormous line is cut at a word, and says so. */
    char *line = malloc (9000);
    size_t n = 0;
    n += (size_t) sprintf (line, "kernel.c:1:1: error:");
    while (n < 8900)
        n += (size_t) sprintf (line + n, " word%zu", n);
    char *trimmed = kf_compile_trim_log (line, NULL, 1024);
    CHECK (trimmed && strlen (trimmed) <= 1024);
    CHECK (trimmed && strstr (trimmed, "(line cut)") != NULL);
    if (trimmed) {
        char *cut = strstr (trimmed, " (line cut)");
        /* What comes before the note ends a whole word of the line. */
        CHECK (cut && cut > trimmed && !strncmp (line, trimmed, (size_t) (cut - trimmed))
               && line[cut - trimmed] == ' ');
    }
    free (trimmed);
    free (line);
    return kf_test_done ("test_ctl_text");
}
