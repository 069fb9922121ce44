/*  test_report_diff.c - the report's line diff (the change each step of
 *  the best kernel's lineage made) and the HTML page: one file, nothing
 *  fetched, no script, every chart with one data point per figure, and a
 *  kernel's source shown as text, never as markup. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_diff.h"
#include "../../kfctl/kfctl_html.h"
#include "../../kfctl/kfctl_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The ops of the diff of A to B as a string: '=' same, '-' del, '+' add. */
static char *
s_ops (const char *a, const char *b)
{
    kf_ctl_diff_line_t *lines = NULL;
    long n = kf_ctl_diff (a, b, &lines);
    if (n < 0)
        return NULL;
    char *ops = malloc ((size_t) n + 1);
    for (long i = 0; i < n; i++)
        ops[i] = "=-+"[lines[i].op];
    ops[n] = 0;
    free (lines);
    return ops;
}

static int
s_count (const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr (p, needle)); p++)
        n++;
    return n;
}

static char *
s_hex (const char *text)
{
    size_t len = strlen (text);
    char *hex = malloc (len * 2 + 1);
    for (size_t i = 0; i < len; i++)
        sprintf (hex + 2 * i, "%02x", (unsigned char) text[i]);
    hex[len * 2] = 0;
    return hex;
}

int
main (void)
{
    char *ops;
    CHECK ((ops = s_ops ("a\nb\nc\n", "a\nx\nc\n")) && !strcmp (ops, "=-+="));
    free (ops);
    CHECK ((ops = s_ops ("", "one\ntwo")) && !strcmp (ops, "++"));
    free (ops);
    CHECK ((ops = s_ops ("same\nlines\n", "same\nlines\n")) && !strcmp (ops, "=="));
    free (ops);
    CHECK ((ops = s_ops ("a\nb\nc\nd\n", "b\nc\ne\n")) && !strcmp (ops, "-==-+"));
    free (ops);
    /* The kept lines are a longest common subsequence, not just the
     * common head and tail. */
    CHECK ((ops = s_ops ("h\n1\n2\n3\nt\n", "h\n2\nX\n3\nt\n")) && !strcmp (ops, "=-=+=="));
    free (ops);

    /* A changed middle too large for the table is replaced whole. */
    size_t big = 2100;
    char *a = malloc (big * 8 + 16), *b = malloc (big * 8 + 16);
    char *pa = a, *pb = b;
    pa += sprintf (pa, "head\n");
    pb += sprintf (pb, "head\n");
    for (size_t i = 0; i < big; i++) {
        pa += sprintf (pa, "a%zu\n", i);
        pb += sprintf (pb, "b%zu\n", i);
    }
    kf_ctl_diff_line_t *lines = NULL;
    long n = kf_ctl_diff (a, b, &lines);
    CHECK (n == (long) (2 * big + 1));
    CHECK (n > 0 && lines[0].op == KF_CTL_DIFF_SAME && lines[1].op == KF_CTL_DIFF_DEL
           && lines[n - 1].op == KF_CTL_DIFF_ADD && lines[n - 1].len == strlen ("b2099")
           && !memcmp (lines[n - 1].line, "b2099", 5));
    free (lines);
    free (a);
    free (b);

    /* The page. */
    const char *root = "float f (float x) { return x; }\n";
    const char *child = "float f (float x) { return x < 0 ? 0 : x; }\n";
    char *h1 = s_hex (root), *h2 = s_hex (child);
    json_t *body = json_pack (
        "{s:{s:i, s:s, s:s, s:f, s:i}, s:[{s:i, s:i, s:i, s:s, s:f, s:s},"
        " {s:i, s:i, s:i, s:s, s:n}, {s:i, s:i, s:i, s:s, s:f, s:i, s:s}],"
        " s:[{s:s, s:i, s:f, s:f}, {s:s, s:i, s:f, s:f}],"
        " s:[{s:i, s:n, s:s}, {s:i, s:i, s:s}],"
        " s:[{s:s, s:i, s:i, s:f, s:f}, {s:s, s:i, s:i, s:f, s:n}],"
        " s:[{s:i, s:f, s:f, s:[]}]}",
        "run", "id", 9, "task_name", "relu <&>", "status", "done", "best_speedup", 2.5,
        "best_candidate_id", 3,
        "candidates", "id", 1, "generation", 0, "slot", 0, "status", "correct", "speedup",
        1.5, "coords", "{0,1,0}", "id", 2, "generation", 0, "slot", 1, "status", "incorrect",
        "speedup", "id", 3, "generation", 1, "slot", 0, "status", "correct", "speedup", 2.5,
        "parent_id", 1, "coords", "{2,1,3}",
        "archive", "cell", "{0,1,0}", "candidate_id", 1, "speedup", 1.5, "fitness", 1.5,
        "cell", "{2,1,3}", "candidate_id", 3, "speedup", 2.5, "fitness", 2.5,
        "lineage", "id", 3, "parent_id", "source_hex", h2, "id", 1, "depth", 1, "source_hex",
        h1,
        "stages", "kind", "generate", "jobs", 3, "failed", 0, "total_s", 4.0, "work_s", 3.0,
        "kind", "compile", "jobs", 2, "failed", 0, "total_s", 1.5, "work_s",
        "prompt_versions", "number", 1, "fitness", 0.5, "best_speedup", 2.5, "edits");
    CHECK (body != NULL);
    json_object_set_new (json_array_get (json_object_get (body, "lineage"), 0), "parent_id",
                         json_integer (1));
    char path[] = "/tmp/kf-report-html-XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    close (fd);
    char *err = NULL;
    CHECK (kf_ctl_report_html (body, path, &err) == 0);
    CHECK (err == NULL);
    FILE *f = fopen (path, "r");
    char *page = calloc (1, 1 << 20);
    size_t got = f ? fread (page, 1, (1 << 20) - 1, f) : 0;
    if (f)
        fclose (f);
    CHECK (got > 0);
    CHECK (strstr (page, "<!DOCTYPE html>") == page);
    CHECK (strstr (page, "</html>") != NULL);
    CHECK (!strstr (page, "<script") && !strstr (page, "http://") && !strstr (page, "https://")
           && !strstr (page, " src="));
    CHECK (strstr (page, "relu &lt;&amp;&gt;") != NULL);
    CHECK (s_count (page, "data-chart=\"") == 1 + 1 + 3 + 1 + 1 + 1);
    CHECK (s_count (page, "class=\"point\"") == 3);
    CHECK (s_count (page, "data-value=\"1.5\" data-best=\"1.5\"") == 1);
    CHECK (s_count (page, "data-value=\"\" data-best=\"1.5\"") == 1);
    CHECK (s_count (page, "data-value=\"2.5\" data-best=\"2.5\"") == 1);
    /* Verdicts: two kinds; heat maps: two occupied cells in each grid. */
    CHECK (s_count (page, "<rect class=\"bar\" data-label=") == 2);
    CHECK (s_count (page, "<rect class=\"cell\"") == 6);
    CHECK (s_count (page, "<circle class=\"node\"") == 2);
    CHECK (s_count (page, "<li class=\"step\"") == 2);
    CHECK (strstr (page, "data-candidate=\"3\" data-parent=\"1\" data-value=\"2.5\"") != NULL);
    /* The step's diff: one line out, one in; the source as text. */
    CHECK (strstr (page, "data-added=\"1\" data-removed=\"1\"") != NULL);
    CHECK (strstr (page, "return x &lt; 0 ? 0 : x;") != NULL);
    CHECK (s_count (page, "<rect class=\"bar\" data-kind=") == 2);
    CHECK (strstr (page, "data-kind=\"generate\" data-value=\"4\" data-jobs=\"3\"") != NULL);
    CHECK (s_count (page, "<tr class=\"version\"") == 1);
    free (page);
    unlink (path);

    /* An unwritable path: the error names it. */
    CHECK (kf_ctl_report_html (body, "/no/such/dir/r.html", &err) == -1);
    CHECK (err && strstr (err, "cannot write /no/such/dir/r.html"));
    free (err);
    json_decref (body);
    free (h1);
    free (h2);
    return kf_test_done ("test_report_diff");
}
