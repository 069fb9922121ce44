/*  kfctl_html_suite.c - `kfctl report --suite ID -o FILE.html`: a suite as
 *  one self-contained page (inline CSS and SVG, no script, nothing
 *  fetched), from one SUITE reply: the figures against each baseline,
 *  the fast_p curve (the share of problems correct and more than p times
 *  faster, over p) and a row per problem.
 *
 *  As on the run's page (kfctl_html.c), each chart is an element with
 *  `data-chart` and each of its points carries `data-value`, so a test
 *  can count and check what the browser drew.
 */
#include "kfctl_fields.h"
#include "kfctl_html.h"
#include "kfctl_report.h"
#include "kfctl_suite.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The curve is sampled every S_STEP up to its end, or in S_MAX_POINTS
 * steps when the speedups reach far (so 1, 1.5 and 2 are points of it
 * whenever they can be told apart at all). */
#define S_STEP 0.05
#define S_MAX_POINTS 400

static const char *s_colours[KF_CTL_SUITE_N_BASELINES] = { "#1f77b4", "#ff7f0e" };
static const char *s_titles[KF_CTL_SUITE_N_BASELINES] = { "PyTorch eager", "torch.compile" };

static void
s_figures (FILE *f, json_t *figures)
{
    static const char *keys[] = { "fast_0", "fast_1", "fast_1.5", "fast_2", "geomean" };
    fprintf (f, "<h2 id=\"figures\">Figures</h2>\n<table data-chart=\"figures\"><tr>"
                "<th class=\"l\">baseline</th>");
    for (size_t k = 0; k < 5; k++)
        fprintf (f, "<th>%s</th>", keys[k]);
    fprintf (f, "<th>problems with it</th></tr>\n");
    for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++) {
        json_t *obj = json_object_get (figures, kf_ctl_suite_baseline_name (b));
        fprintf (f, "<tr><td class=\"l\">%s</td>", s_titles[b]);
        for (size_t k = 0; k < 5; k++) {
            double v = 0;
            bool has = kf_ctl_real (obj, keys[k], &v);
            char value[32] = "";
            if (has)
                snprintf (value, sizeof value, "%.6g", v);
            fprintf (f, "<td class=\"figure\" data-baseline=\"%s\" data-figure=\"%s\""
                        " data-value=\"%s\">", kf_ctl_suite_baseline_name (b), keys[k], value);
            if (!has)
                fprintf (f, "n/a");
            else if (k == 4)
                fprintf (f, "%.2fx", v);
            else
                fprintf (f, "%.2f", v);
            fprintf (f, "</td>");
        }
        fprintf (f, "<td>%lld of %lld</td></tr>\n", kf_ctl_int (obj, "with_baseline", 0),
                 kf_ctl_int (figures, "problems", 0));
    }
    fprintf (f, "</table>\n<p class=\"note\">fast_p: the share of all problems of the suite"
                " that are correct and more than p times faster than the baseline (fast_0:"
                " the share correct); geomean: the geometric mean speedup of the correct"
                " problems. n/a: no problem has that baseline (a native task is timed against"
                " its own reference only).</p>\n");
}

static void
s_curve (FILE *f, const kf_ctl_suite_problem_t *problems, size_t n)
{
    enum { W = 760, H = 340, LEFT = 60, RIGHT = 130, TOP = 16, BOTTOM = 44 };
    const double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    double pmax = 2;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++)
            if (problems[i].correct && problems[i].speedup[b] > pmax
                && isfinite (problems[i].speedup[b]))
                pmax = problems[i].speedup[b];
    pmax = ceil (pmax * 2 + 1e-9) / 2;   /* up to the next half */
    int steps = (int) lround (pmax / S_STEP);
    if (steps > S_MAX_POINTS)
        steps = S_MAX_POINTS;
    fprintf (f, "<h2 id=\"fastp\">fast_p over p</h2>\n<svg data-chart=\"fastp\" width=\"%d\""
                " height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"12\">\n", W, H, W, H);
#define S_X(v) (LEFT + (v) / pmax * pw)
#define S_Y(v) (TOP + ph - (v) * ph)
    fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n",
             LEFT, TOP + ph, LEFT + pw, TOP + ph, LEFT, TOP, LEFT, TOP + ph);
    for (int t = 0; t <= 4; t++)
        fprintf (f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", LEFT - 6,
                 S_Y (t / 4.0) + 4, t / 4.0);
    for (double p = 0; p <= pmax + 1e-9; p += pmax > 10 ? 5 : 1)
        fprintf (f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                 S_X (p), TOP, S_X (p), TOP + ph, S_X (p), TOP + ph + 16, p);
    fprintf (f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">p (speedup over the"
                " baseline)</text>\n", LEFT + pw / 2, H - 8);
    int legend = 0;
    for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++) {
        if (kf_ctl_suite_fast_p (problems, n, b, 0) < 0)
            continue;   /* no problem has this baseline: nothing to draw */
        fprintf (f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", s_colours[b]);
        for (int k = 0; k <= steps; k++) {
            double p = pmax * k / steps;
            double v = kf_ctl_suite_fast_p (problems, n, b, p);
            fprintf (f, k ? " L %.1f %.1f" : "M %.1f %.1f", S_X (p), S_Y (v));
        }
        fprintf (f, "\"/>\n");
        for (int k = 0; k <= steps; k++) {
            double p = pmax * k / steps;
            double v = kf_ctl_suite_fast_p (problems, n, b, p);
            fprintf (f, "<circle class=\"point\" data-baseline=\"%s\" data-p=\"%.6g\""
                        " data-value=\"%.6g\" cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\">"
                        "<title>%s: fast_%.3g = %.3g</title></circle>\n",
                     kf_ctl_suite_baseline_name (b), p, v, S_X (p), S_Y (v), s_colours[b],
                     s_titles[b], p, v);
        }
        fprintf (f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                    "<text x=\"%d\" y=\"%d\">%s</text>\n", W - RIGHT + 12, TOP + 4 + legend * 20,
                 s_colours[b], W - RIGHT + 30, TOP + 14 + legend * 20, s_titles[b]);
        legend++;
    }
#undef S_X
#undef S_Y
    fprintf (f, "</svg>\n");
    if (!legend)
        fprintf (f, "<p class=\"note\">No curve: no problem of this suite has a PyTorch"
                    " baseline.</p>\n");
}

/* A speedup cell: "2.31x", or "-". */
static void
s_speedup_cell (FILE *f, double v)
{
    if (v >= 0)
        fprintf (f, "<td>%.2fx</td>", v);
    else
        fprintf (f, "<td>-</td>");
}

static void
s_problems (FILE *f, json_t *runs)
{
    fprintf (f, "<h2 id=\"problems\">Problems</h2>\n<table data-chart=\"problems\"><tr>"
                "<th>run</th><th class=\"l\">problem</th><th class=\"l\">task</th>"
                "<th class=\"l\">status</th><th class=\"l\">correct</th><th>speedup</th>"
                "<th>vs eager</th><th>vs torch.compile</th><th>eager</th>"
                "<th>torch.compile</th><th>candidates</th></tr>\n");
    size_t i;
    json_t *run;
    json_array_foreach (runs, i, run) {
        kf_ctl_suite_problem_t p;
        kf_ctl_suite_problem_of (run, &p);
        double best = -1, eager = 0, compiled = 0;
        if (!p.correct || !kf_ctl_real (run, "best_speedup", &best))
            best = -1;
        char value[32] = "";
        if (best >= 0)
            snprintf (value, sizeof value, "%.6g", best);
        fprintf (f, "<tr class=\"problem\" data-run=\"%lld\" data-correct=\"%s\""
                    " data-value=\"%s\"><td>%lld</td><td class=\"l\">",
                 kf_ctl_int (run, "id", 0), p.correct ? "yes" : "no", value,
                 kf_ctl_int (run, "id", 0));
        kf_ctl_html_esc (f, kf_ctl_str (run, "suite_problem"));
        fprintf (f, "</td><td class=\"l\">");
        kf_ctl_html_esc (f, kf_ctl_str (run, "task_name"));
        fprintf (f, "</td><td class=\"l\">");
        kf_ctl_html_esc (f, kf_ctl_str (run, "status"));
        fprintf (f, "</td><td class=\"l\">%s</td>", p.correct ? "yes" : "no");
        s_speedup_cell (f, best);
        s_speedup_cell (f, p.correct ? p.speedup[KF_CTL_SUITE_EAGER] : -1);
        s_speedup_cell (f, p.correct ? p.speedup[KF_CTL_SUITE_COMPILED] : -1);
        if (kf_ctl_real (run, "ref_eager_ns", &eager) && eager > 0)
            fprintf (f, "<td>%.1f us</td>", eager / 1e3);
        else
            fprintf (f, "<td>-</td>");
        if (kf_ctl_real (run, "ref_compiled_ns", &compiled) && compiled > 0)
            fprintf (f, "<td>%.1f us</td>", compiled / 1e3);
        else
            fprintf (f, "<td>-</td>");
        fprintf (f, "<td>%lld/%lld</td></tr>\n", kf_ctl_int (run, "done", 0),
                 kf_ctl_int (run, "total", 0));
    }
    fprintf (f, "</table>\n<p class=\"note\">speedup: each run's own figure (a PyTorch"
                " problem's against eager, a native task's against its reference);"
                " eager and torch.compile: the reference medians.</p>\n");
    json_array_foreach (runs, i, run) {
        const char *status = kf_ctl_str (run, "status");
        if (!strcmp (status, "done") || !json_is_string (json_object_get (run, "reason")))
            continue;
        fprintf (f, "<p class=\"note\">run %lld ", kf_ctl_int (run, "id", 0));
        kf_ctl_html_esc (f, status);
        fprintf (f, ": ");
        kf_ctl_html_esc (f, kf_ctl_str (run, "reason"));
        fprintf (f, "</p>\n");
    }
}

int
kf_ctl_html_suite (json_t *body, json_t *figures, const char *path, char **err)
{
    json_t *suite = json_object_get (body, "suite");
    json_t *runs = json_object_get (body, "runs");
    size_t n = json_array_size (runs);
    kf_ctl_suite_problem_t *problems = calloc (n ? n : 1, sizeof *problems);
    if (!problems) {
        *err = strdup ("out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        kf_ctl_suite_problem_of (json_array_get (runs, i), &problems[i]);
    FILE *f = kf_ctl_report_open (path, err);
    if (!f) {
        free (problems);
        return -1;
    }
    kf_ctl_html_head (f, "Suite", kf_ctl_int (suite, "id", 0), kf_ctl_str (suite, "name"));
    fprintf (f, "</h1>\n<p>%zu problem%s, %lld correct; created ", n, n == 1 ? "" : "s",
             kf_ctl_int (figures, "correct", 0));
    kf_ctl_html_esc (f, kf_ctl_str (suite, "created_at"));
    long long running = kf_ctl_int (figures, "running", 0);
    if (running)
        fprintf (f, "; %lld run%s still running, so the figures are so far", running,
                 running == 1 ? "" : "s");
    fprintf (f, ".</p>\n");
    s_figures (f, figures);
    s_curve (f, problems, n);
    s_problems (f, runs);
    size_t i;
    json_t *s;
    json_t *skipped = json_object_get (suite, "skipped");
    if (json_array_size (skipped)) {
        fprintf (f, "<h2 id=\"skipped\">Skipped</h2>\n<ul>\n");
        json_array_foreach (skipped, i, s) {
            fprintf (f, "<li>");
            kf_ctl_html_esc (f, kf_ctl_str (s, "path"));
            fprintf (f, ": ");
            kf_ctl_html_esc (f, kf_ctl_str (s, "reason"));
            fprintf (f, "</li>\n");
        }
        fprintf (f, "</ul>\n");
    }
    fprintf (f, "<p class=\"note\">Written by kfctl report --suite from the coordinator's"
                " SUITE reply.</p>\n</body>\n</html>\n");
    free (problems);
    return kf_ctl_report_close (f, path, err);
}
