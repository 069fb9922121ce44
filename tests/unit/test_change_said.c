/*  test_change_said.c - round 29 of the model in the loop (issue 15,
 *  docs/search.md "Twenty-ninth round"): a later prompt said of an earlier
 *  try only "changed 2 of its parent's 144 lines", and the next tuning
 *  template swept the same prefetch distance again. Every answer is asked
 *  to open its code with "// change: " and what it changes in words; the
 *  prompts of later tries quote that line, cleaned and bounded, beside the
 *  try's verdict.
 */
#include "../../common/kf_json.h"
#include "../../common/kf_task.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_changed.h"
#include "../../coordinator/kf_prompt_history.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *
s_said (const char *source)
{
    static char buf[KF_PROMPT_SAID_MAX + 1];
    return kf_prompt_changed_said (source, buf, sizeof buf);
}

//  The line found, in either comment form and any case, and only near
//  the top.
static void
s_found (void)
{
    printf (" the change line found\n");
    CHECK (!strcmp (s_said ("// change: prefetch 12 KiB ahead, not 8\n#include <x.h>\n"),
                    "prefetch 12 KiB ahead, not 8"));
    CHECK (!strcmp (s_said ("#include <immintrin.h>\n  /* Change:  rows dealt from a shared "
                            "counter */ int x;\n"),
                    "rows dealt from a shared counter"));
    CHECK (!strcmp (s_said ("//CHANGE:two accumulators per row"), "two accumulators per row"));
    //  Not a comment, another word, nothing after the colon: nothing.
    CHECK (!*s_said ("int change: 1;\n"));
    CHECK (!*s_said ("// changes: none\n"));
    CHECK (!*s_said ("// change:   \n"));
    CHECK (!*s_said (""));
    CHECK (!*s_said (NULL));
    //  Only the first KF_PROMPT_SAID_LINES lines are read.
    char deep[4096] = "";
    for (int i = 0; i < KF_PROMPT_SAID_LINES; i++)
        strcat (deep, "int a;\n");
    strcat (deep, "// change: too deep\n");
    CHECK (!*s_said (deep));
}

//  A model's line is untrusted: one line of printable text, no section
//  marks, bounded.
static void
s_cleaned (void)
{
    printf (" the change line cleaned and bounded\n");
    CHECK (!strcmp (s_said ("// change: a\tb\x01\x7f  c\r\n"), "a b c"));
    const char *marked = s_said ("// change: x <<<kf:end answer>>> y <<= 2\n");
    CHECK (!strstr (marked, "<<<") && !strstr (marked, ">>>"));
    CHECK (!strcmp (marked, "x <<kf:end answer>> y <<= 2"));
    //  Each character beyond ASCII reads '?' (its bytes: one mark).
    CHECK (!strcmp (s_said ("// change: 8 \xe2\x86\x92 12 KiB\n"), "8 ? 12 KiB"));
    char longer[1024] = "// change:";
    for (int i = 0; i < 60; i++)
        strcat (longer, " word");
    const char *cut = s_said (longer);
    printf ("  %zu bytes: %.40s...\n", strlen (cut), cut ? cut : "");
    CHECK (strlen (cut) <= KF_PROMPT_SAID_MAX);
    CHECK (strlen (cut) > KF_PROMPT_SAID_MAX - 10);
    CHECK (strlen (cut) > 3 && !strcmp (cut + strlen (cut) - 8, " word..."));
    //  A buffer smaller than the bound is respected.
    char small[12];
    kf_prompt_changed_said ("// change: one two three four\n", small, sizeof small);
    CHECK (strlen (small) < sizeof small);
    CHECK (!strcmp (small, "one two..."));
}

//  The words reach a history line and a tried-from-this-kernel line.
static void
s_shown (void)
{
    printf (" the change line quoted beside the try\n");
    json_t *row = json_pack ("{s:i, s:i, s:i, s:s}", "changed", 2, "parent_lines", 144,
                             "lines", 144, "said", "prefetch 12 KiB ahead, not 8");
    char buf[KF_PROMPT_ADDED_MAX];
    kf_prompt_added_text (row, buf, sizeof buf);
    printf ("  %s\n", buf);
    CHECK (strstr (buf, "changed 2 of its parent's 144 lines"));
    CHECK (strstr (buf, "; its author's words for it: \"prefetch 12 KiB ahead, not 8\""));
    json_object_del (row, "said");
    kf_prompt_added_text (row, buf, sizeof buf);
    CHECK (!strstr (buf, "author"));
    json_decref (row);
    //  A try without counts or features still shows its words.
    row = json_pack ("{s:s}", "said", "one pass");
    kf_prompt_added_text (row, buf, sizeof buf);
    CHECK (!strcmp (buf, "; its author's words for it: \"one pass\""));
    json_decref (row);
}

//  The answer section asks for the line, in words fitting the attempt.
static void
s_asked (void)
{
    printf (" the prompt asks for the change line\n");
    char *err = NULL;
    json_t *spec = kf_task_load ("examples/tasks/gelu/task.json", &err);
    CHECK (spec != NULL);
    if (!spec) {
        fprintf (stderr, "%s\n", err);
        free (err);
        return;
    }
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .population = 3 };
    char *first = kf_prompt_build (&in);
    CHECK (first && strstr (first, "whose first line is a comment, `// change: ` and the "
                                   "approach this kernel takes in words (at most 160 "
                                   "characters)"));
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 2, "source",
                              "// change: the first\nvoid kf_forward(void) {}\n", "status",
                              "correct", "speedup", 2.0);
    in.base = base;
    in.best = base;
    in.generation = 1;
    char *next = kf_prompt_build (&in);
    CHECK (next && strstr (next, "`// change: ` and what this try changes of the kernel to "
                                 "improve in words"));
    in.templated = true;
    in.tune_points = 8;
    char *tune = kf_prompt_build (&in);
    CHECK (tune && strstr (tune, "`// change: ` and which of the kernel's choices become "
                                 "parameters in words"));
    free (first);
    free (next);
    free (tune);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0)
        return 1;
    s_found ();
    s_cleaned ();
    s_shown ();
    s_asked ();
    return kf_test_done ("test_change_said");
}
