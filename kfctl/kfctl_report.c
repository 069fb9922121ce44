/*  kfctl_report.c - `kfctl report`'s files, computed from one SHOW reply
 *  so a report needs no support from the coordinator: the limited-budget
 *  curve (CSV), the per-generation progress (CSV) and the curve as an SVG
 *  plot; and what the HTML page (kfctl_html.c) shares with them: the
 *  candidates' order, which of them count, a file opened and closed.
 */
#include "kfctl_fields.h"
#include "kfctl_report.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Candidates of a SHOW reply in (generation, slot) order: the reply is
 * ordered so already, but the report's budget axis depends on it. */
static int
s_by_generation_slot (const void *a, const void *b)
{
    json_t *x = *(json_t *const *) a, *y = *(json_t *const *) b;
    long long gx = kf_ctl_int (x, "generation", 0), gy = kf_ctl_int (y, "generation", 0);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    long long sx = kf_ctl_int (x, "slot", 0), sy = kf_ctl_int (y, "slot", 0);
    return sx < sy ? -1 : sx > sy;
}

/* The speedup of a candidate that counts for the curve: correct ones
 * only, since a fast wrong kernel is no kernel, and of those not the ones
 * held for audit nor the ones timed only by a screen, as for the run's
 * best (S_COUNTS in kf_search.c): a
 * curve that ends above the run's best would report what the run does
 * not. */
bool
kf_ctl_report_counts (json_t *c, double *speedup)
{
    return kf_ctl_counts (c) && kf_ctl_real (c, "speedup", speedup) && *speedup > 0;
}

void
kf_ctl_report_best (bool counts, double x, double *best, bool *any, int prec, char *own,
                    char *so_far)
{
    if (counts && (!*any || x > *best)) {
        *best = x;
        *any = true;
    }
    *own = *so_far = 0;
    if (counts)
        snprintf (own, 32, "%.*g", prec, x);
    if (*any)
        snprintf (so_far, 32, "%.*g", prec, *best);
}

static char *
s_path (const char *prefix, const char *suffix)
{
    size_t size = strlen (prefix) + strlen (suffix) + 1;
    char *path = malloc (size);
    if (path)
        snprintf (path, size, "%s%s", prefix, suffix);
    return path;
}

static char *
s_error (const char *path, const char *why)
{
    const char *fmt = "cannot write %s: %s";
    size_t size = strlen (fmt) + strlen (path) + strlen (why) + 1;
    char *text = malloc (size);
    if (text)
        snprintf (text, size, fmt, path, why);
    return text;
}

/* Closes F and says whether every write to it reached the file: fprintf
 * errors (a full disk) only show in the stream's error flag or at close. */
int
kf_ctl_report_close (FILE *f, const char *path, char **err)
{
    bool failed = ferror (f) != 0;
    int saved = errno;
    if (fclose (f) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (failed) {
        *err = s_error (path, saved ? strerror (saved) : "write error");
        return -1;
    }
    return 0;
}

FILE *
kf_ctl_report_open (const char *path, char **err)
{
    FILE *f = fopen (path, "w");
    if (!f)
        *err = s_error (path, strerror (errno));
    return f;
}

/* A "nice" step (1, 2 or 5 times a power of ten) that cuts RANGE into
 * about TICKS parts, so tick labels read as round numbers. */
static double
s_nice_step (double range, int ticks)
{
    double raw = range / ticks;
    double power = 1;
    while (power * 10 <= raw)
        power *= 10;
    while (power > raw)
        power /= 10;
    double f = raw / power;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

static void
s_xml_text (FILE *f, const char *text)
{
    for (const char *p = text; *p; p++)
        switch (*p) {
        case '<': fputs ("&lt;", f); break;
        case '>': fputs ("&gt;", f); break;
        case '&': fputs ("&amp;", f); break;
        case '"': fputs ("&quot;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            if ((unsigned char) *p >= 0x20 || *p == '\t')
                fputc (*p, f);
        }
}

/* The limited-budget curve CURVE[0..n-1] (HAS[b]: a correct candidate
 * among the first b+1) as a step plot, 640x400. */
static void
s_write_svg (FILE *f, json_t *run, const double *curve, const bool *has,
             size_t n)
{
    enum { W = 640, H = 400, LEFT = 64, RIGHT = 24, TOP = 40, BOTTOM = 56 };
    const double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    double ymax = 1;
    for (size_t b = 0; b < n; b++)
        if (has[b] && curve[b] > ymax)
            ymax = curve[b];
    double ystep = s_nice_step (ymax, 5);
    ymax = ystep * (double) (long long) (ymax / ystep + 0.999999);
    if (ymax <= 0)
        ymax = 1;
    double xmax = n > 0 ? (double) n : 1;
    double xstep = s_nice_step (xmax, 8);
    if (xstep < 1)
        xstep = 1;
#define S_X(v) (LEFT + (v) / xmax * pw)
#define S_Y(v) (TOP + ph - (v) / ymax * ph)

    fprintf (f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n", W, H, W, H);
    fprintf (f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
                "fill=\"white\"/>\n", W, H);
    fprintf (f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" "
                "font-size=\"14\">run %lld (", W / 2, kf_ctl_int (run, "id", 0));
    s_xml_text (f, kf_ctl_str (run, "task_name"));
    fprintf (f, "): best valid speedup within a budget of B candidates"
                "</text>\n");

    /* Grid lines and tick labels first, so the curve draws over them. */
    /* Ticks counted in whole steps, so float drift cannot add or drop
     * one, and none lands past the end of its axis. */
    for (long long k = 0; k * ystep <= ymax * (1 + 1e-9); k++) {
        double y = (double) k * ystep;
        fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#dddddd\"/>\n", LEFT, S_Y (y), W - RIGHT, S_Y (y));
        fprintf (f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%gx</text>\n",
                 LEFT - 6, S_Y (y) + 4, y);
    }
    for (long long k = 0; k * xstep <= xmax * (1 + 1e-9); k++) {
        double x = (double) k * xstep;
        fprintf (f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"black\"/>\n", S_X (x), TOP + ph, S_X (x),
                 TOP + ph + 5);
        fprintf (f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
                    "</text>\n", S_X (x), TOP + ph + 18, x);
    }
    /* Speedup 1 is the reference: above it the search paid off. */
    if (ymax >= 1)
        fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#999999\" stroke-dasharray=\"4 3\"/>\n",
                 LEFT, S_Y (1.0), W - RIGHT, S_Y (1.0));
    fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n", LEFT, TOP + ph, W - RIGHT, TOP + ph);
    fprintf (f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n", LEFT, TOP, LEFT, TOP + ph);
    fprintf (f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">budget B: "
                "candidates evaluated, in (generation, slot) order</text>\n",
             LEFT + pw / 2, H - 14);
    fprintf (f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 16 %.1f)\">best valid speedup</text>\n",
             TOP + ph / 2, TOP + ph / 2);

    /* The step line: candidate b (1-based) holds the value from x = b-1
     * to x = b, and nothing is drawn before the first correct one. */
    bool open = false;
    for (size_t b = 0; b < n; b++) {
        if (!has[b])
            continue;
        if (!open) {
            fprintf (f, "<path fill=\"none\" stroke=\"#1f77b4\" "
                        "stroke-width=\"2\" d=\"M %.1f %.1f",
                     S_X ((double) b), S_Y (curve[b]));
            open = true;
        }
        else
            fprintf (f, " V %.1f", S_Y (curve[b]));
        fprintf (f, " H %.1f", S_X ((double) (b + 1)));
    }
    if (open)
        fprintf (f, "\"/>\n");
    else
        fprintf (f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                    "no correct candidate yet</text>\n",
                 LEFT + pw / 2, TOP + ph / 2);
    fprintf (f, "</svg>\n");
#undef S_X
#undef S_Y
}

json_t **
kf_ctl_report_order (json_t *candidates, size_t *n)
{
    *n = json_array_size (candidates);
    json_t **order = calloc (*n ? *n : 1, sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < *n; i++)
        order[i] = json_array_get (candidates, i);
    qsort (order, *n, sizeof *order, s_by_generation_slot);
    return order;
}

int
kf_ctl_report_write (json_t *body, const char *prefix, char *paths[3],
                     char **err)
{
    *err = NULL;
    paths[0] = s_path (prefix, ".csv");
    paths[1] = s_path (prefix, "-generations.csv");
    paths[2] = s_path (prefix, ".svg");
    json_t *candidates = json_object_get (body, "candidates");
    size_t n = json_array_size (candidates);
    json_t **order = calloc (n ? n : 1, sizeof *order);
    double *curve = calloc (n ? n : 1, sizeof *curve);
    bool *has = calloc (n ? n : 1, sizeof *has);
    int rc = -1;
    FILE *f = NULL;
    if (!paths[0] || !paths[1] || !paths[2] || !order || !curve || !has) {
        *err = strdup ("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = json_array_get (candidates, i);
    qsort (order, n, sizeof *order, s_by_generation_slot);

    /* (a) the limited-budget curve */
    if (!(f = kf_ctl_report_open (paths[0], err)))
        goto done;
    fprintf (f, "budget,best_speedup\n");
    double best = 0;
    bool any = false;
    for (size_t b = 0; b < n; b++) {
        double speedup;
        if (kf_ctl_report_counts (order[b], &speedup) && (!any || speedup > best)) {
            best = speedup;
            any = true;
        }
        curve[b] = best;
        has[b] = any;
        if (any)
            fprintf (f, "%zu,%.10g\n", b + 1, best);
        else
            fprintf (f, "%zu,\n", b + 1);
    }
    if (kf_ctl_report_close (f, paths[0], err))
        goto done;

    /* (b) per-generation progress, one row per generation that has
     * candidates (in order, since ORDER is sorted by generation) */
    if (!(f = kf_ctl_report_open (paths[1], err)))
        goto done;
    fprintf (f, "generation,candidates,correct,best_speedup_in_generation,"
                "best_so_far\n");
    double so_far = 0;
    bool any_so_far = false;
    for (size_t i = 0; i < n;) {
        long long generation = kf_ctl_int (order[i], "generation", 0);
        long long count = 0, correct = 0;
        double in_gen = 0;
        bool any_in_gen = false;
        for (; i < n && kf_ctl_int (order[i], "generation", 0) == generation; i++) {
            double speedup;
            count++;
            if (!kf_ctl_report_counts (order[i], &speedup))
                continue;
            correct++;
            if (!any_in_gen || speedup > in_gen)
                in_gen = speedup;
            any_in_gen = true;
        }
        char a[32], b[32];
        kf_ctl_report_best (any_in_gen, in_gen, &so_far, &any_so_far, 10, a, b);
        fprintf (f, "%lld,%lld,%lld,%s,%s\n", generation, count, correct, a, b);
    }
    if (kf_ctl_report_close (f, paths[1], err))
        goto done;

    /* (c) the curve as a plot */
    if (!(f = kf_ctl_report_open (paths[2], err)))
        goto done;
    s_write_svg (f, json_object_get (body, "run"), curve, has, n);
    if (kf_ctl_report_close (f, paths[2], err))
        goto done;
    rc = 0;
done:
    free (order);
    free (curve);
    free (has);
    if (rc) {
        for (int i = 0; i < 3; i++) {
            free (paths[i]);
            paths[i] = NULL;
        }
        if (!*err)
            *err = strdup ("out of memory");
    }
    return rc;
}
