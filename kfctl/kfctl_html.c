/*  kfctl_html.c - `kfctl report RUN -o FILE.html`: the run as one
 *  self-contained page (inline CSS and SVG, no script, nothing fetched)
 *  from one SHOW reply asked with `report: true`: verdict counts, the best
 *  speedup over candidates spent, the archive as heat maps over the
 *  descriptor grid, the lineage of the best kernel with each step's diff
 *  to its parent, time per stage, and the prompt versions.
 *
 *  Every chart is an element with `data-chart` and every point of it
 *  carries `data-value` (and what else names it), so a test or a person
 *  reading the source can count and check what is drawn.
 */
#include "kfctl_archive.h"
#include "kfctl_diff.h"
#include "kfctl_fields.h"
#include "kfctl_html.h"
#include "kfctl_report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_LEVELS 4

/* TEXT[0..LEN) as HTML text or attribute value. */
static void
s_escn (FILE *f, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char) text[i];
        switch (ch) {
        case '<': fputs ("&lt;", f); break;
        case '>': fputs ("&gt;", f); break;
        case '&': fputs ("&amp;", f); break;
        case '"': fputs ("&quot;", f); break;
        default:
            if (ch >= 0x20 || ch == '\t')
                fputc (ch, f);
        }
    }
}

static void
s_esc (FILE *f, const char *text)
{
    s_escn (f, text ? text : "", text ? strlen (text) : 0);
}

/* "%.3g" of OBJ[KEY] with SUFFIX, or "-" when it is no number. */
static const char *
s_fmt (json_t *obj, const char *key, const char *suffix, char *buf, size_t size)
{
    double v;
    if (kf_ctl_real (obj, key, &v))
        snprintf (buf, size, "%.3g%s", v, suffix);
    else
        snprintf (buf, size, "-");
    return buf;
}

/* OBJ[KEY] as a data attribute's value: "%.6g", or "" when no number. */
static const char *
s_data (json_t *obj, const char *key, char *buf, size_t size)
{
    double v;
    if (kf_ctl_real (obj, key, &v))
        snprintf (buf, size, "%.6g", v);
    else
        buf[0] = 0;
    return buf;
}

static const char *s_style =
    "body{font-family:sans-serif;margin:24px auto;max-width:1000px;color:#222}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}"
    "th{background:#f3f3f3}td.l,th.l{text-align:left}"
    ".maps{display:flex;flex-wrap:wrap;gap:12px}"
    "pre.diff{font-size:12px;background:#fafafa;border:1px solid #eee;"
    "padding:6px;overflow-x:auto;max-height:420px}"
    ".add{background:#e6ffec;color:#116329;display:block}"
    ".del{background:#ffebe9;color:#82071e;display:block}"
    ".same{color:#777;display:block}"
    "li.step{margin:6px 0}.note{color:#666;font-size:13px}";

void
kf_ctl_html_esc (FILE *f, const char *text)
{
    s_esc (f, text);
}

void
kf_ctl_html_head (FILE *f, const char *what, long long id, const char *name)
{
    fprintf (f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<title>%s %lld: ", what, id);
    s_esc (f, name);
    fprintf (f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>%s %lld: ", s_style, what,
             id);
    s_esc (f, name);
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                             */

static void
s_verdicts (FILE *f, json_t *candidates)
{
    /* Distinct statuses with their counts, most frequent first. */
    json_t *counts = json_object ();
    size_t i;
    json_t *c;
    json_array_foreach (candidates, i, c) {
        const char *status = kf_ctl_str (c, "status");
        json_object_set_new (counts, status,
                             json_integer (kf_ctl_int (counts, status, 0) + 1));
    }
    size_t n = json_object_size (counts);
    const char *keys[64];
    long long values[64];
    size_t k = 0;
    const char *key;
    json_t *value;
    json_object_foreach (counts, key, value)
        if (k < 64) {
            keys[k] = key;
            values[k++] = json_integer_value (value);
        }
    for (size_t a = 1; a < k; a++)
        for (size_t b = a; b > 0 && values[b] > values[b - 1]; b--) {
            long long tv = values[b];
            values[b] = values[b - 1];
            values[b - 1] = tv;
            const char *tk = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = tk;
        }
    long long max = k ? values[0] : 1;
    enum { W = 640, ROW = 24, LEFT = 150 };
    int h = (int) k * ROW + 16;
    fprintf (f, "<h2 id=\"verdicts\">Verdicts</h2>\n<svg data-chart=\"verdicts\" "
                "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"12\">\n",
             W, h, W, h);
    for (size_t r = 0; r < k; r++) {
        double w = (double) values[r] / (double) max * (W - LEFT - 60);
        int y = 8 + (int) r * ROW;
        bool good = !strcmp (keys[r], "correct");
        fprintf (f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 8, y + 15);
        s_esc (f, keys[r]);
        fprintf (f, "</text><rect class=\"bar\" data-label=\"");
        s_esc (f, keys[r]);
        fprintf (f, "\" data-value=\"%lld\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                    "fill=\"%s\"><title>", values[r], LEFT, y, w < 1 ? 1 : w, ROW - 6,
                 good ? "#2ca02c" : "#d62728");
        s_esc (f, keys[r]);
        fprintf (f, ": %lld</title></rect><text x=\"%.1f\" y=\"%d\">%lld</text>\n", values[r],
                 LEFT + (w < 1 ? 1 : w) + 6, y + 15, values[r]);
    }
    fprintf (f, "</svg>\n<p class=\"note\">%zu candidate%s, %zu verdict%s.</p>\n",
             json_array_size (candidates), json_array_size (candidates) == 1 ? "" : "s", n,
             n == 1 ? "" : "s");
    json_decref (counts);
}

/* ------------------------------------------------------------------ */
/* Best speedup over candidates spent                                   */

static void
s_curve (FILE *f, json_t **order, size_t n)
{
    enum { W = 760, H = 360, LEFT = 60, RIGHT = 20, TOP = 16, BOTTOM = 44 };
    const double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    double ymax = 1;
    for (size_t b = 0; b < n; b++) {
        double sp;
        if (kf_ctl_report_counts (order[b], &sp) && sp > ymax)
            ymax = sp;
    }
    ymax *= 1.08;
    double xmax = n ? (double) n : 1;
#define S_X(v) (LEFT + (v) / xmax * pw)
#define S_Y(v) (TOP + ph - (v) / ymax * ph)
    fprintf (f, "<h2 id=\"curve\">Best speedup over candidates spent</h2>\n"
                "<svg data-chart=\"curve\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-size=\"12\">\n", W, H, W, H);
    fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\" "
                "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1x"
                "</text>\n", LEFT, S_Y (1.0), W - RIGHT, S_Y (1.0), LEFT - 6, S_Y (1.0) + 4);
    fprintf (f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3gx</text>\n", LEFT - 6,
             (double) TOP + 4, ymax);
    fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>"
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n",
             LEFT, TOP + ph, W - RIGHT, TOP + ph, LEFT, TOP, LEFT, TOP + ph);
    fprintf (f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">candidates spent, in "
                "(generation, slot) order (%zu)</text>\n", LEFT + pw / 2, H - 10, n);

    /* The best so far as a step line, then each candidate's own figure:
     * a blue dot when it counts, a red one on the axis when it does not. */
    double best = 0;
    bool any = false;
    fprintf (f, "<path fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" d=\"");
    for (size_t b = 0; b < n; b++) {
        double sp;
        if (kf_ctl_report_counts (order[b], &sp) && (!any || sp > best)) {
            if (any)
                fprintf (f, " V %.1f", S_Y (sp));
            else
                fprintf (f, "M %.1f %.1f", S_X ((double) b), S_Y (sp));
            best = sp;
            any = true;
        }
        if (any)
            fprintf (f, " H %.1f", S_X ((double) (b + 1)));
    }
    /* An empty path draws nothing and is still valid. */
    fprintf (f, "\"/>\n");
    best = 0;
    any = false;
    for (size_t b = 0; b < n; b++) {
        double sp;
        bool counts = kf_ctl_report_counts (order[b], &sp);
        char own[32], so_far[32];
        kf_ctl_report_best (counts, sp, &best, &any, 6, own, so_far);
        fprintf (f, "<circle class=\"point\" data-budget=\"%zu\" data-candidate=\"%lld\" "
                    "data-status=\"", b + 1, kf_ctl_int (order[b], "id", 0));
        s_esc (f, kf_ctl_str (order[b], "status"));
        fprintf (f, "\" data-value=\"%s\" data-best=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                    "fill=\"%s\"><title>candidate %lld (generation %lld, slot %lld): ", own,
                 so_far, S_X ((double) b + 0.5), counts ? S_Y (sp) : TOP + ph,
                 counts ? "#1f77b4" : "#d62728", kf_ctl_int (order[b], "id", 0),
                 kf_ctl_int (order[b], "generation", 0), kf_ctl_int (order[b], "slot", 0));
        if (counts)
            fprintf (f, "%.3gx", sp);
        else
            s_esc (f, kf_ctl_str (order[b], "status"));
        fprintf (f, "</title></circle>\n");
    }
    fprintf (f, "</svg>\n<p class=\"note\">Line: the best counted speedup within the first "
                "B candidates (correct, fully timed, not held for audit). Dots: each "
                "candidate's own speedup; red on the axis when it does not count.</p>\n");
#undef S_X
#undef S_Y
}

/* ------------------------------------------------------------------ */
/* The archive as heat maps                                             */

/* A colour from light yellow (LOW) to dark blue (HIGH) on a log scale. */
static void
s_heat_colour (double v, double low, double high, char *buf, size_t size)
{
    double t = high > low ? (log (v) - log (low)) / (log (high) - log (low)) : 1;
    if (t < 0 || !isfinite (t))
        t = 0;
    if (t > 1)
        t = 1;
    snprintf (buf, size, "hsl(%.0f,70%%,%.0f%%)", 55 + t * 165, 85 - t * 50);
}

static void
s_heatmap (FILE *f, const char *target, json_t *cells, int row, int col, double low,
           double high)
{
    double best[S_LEVELS][S_LEVELS];
    long long elite[S_LEVELS][S_LEVELS];
    int count[S_LEVELS][S_LEVELS];
    memset (count, 0, sizeof count);
    size_t i;
    json_t *cell;
    json_array_foreach (cells, i, cell) {
        json_t *xyz = json_object_get (cell, "coords");
        double sp;
        if (!kf_ctl_real (cell, "speedup", &sp))
            continue;
        int r = (int) json_integer_value (json_array_get (xyz, (size_t) row));
        int c = (int) json_integer_value (json_array_get (xyz, (size_t) col));
        if (r < 0 || r >= S_LEVELS || c < 0 || c >= S_LEVELS)
            continue;
        if (!count[r][c] || sp > best[r][c]) {
            best[r][c] = sp;
            elite[r][c] = kf_ctl_int (cell, "candidate_id", 0);
        }
        count[r][c]++;
    }
    enum { CELL = 64, LEFT = 96, TOP = 40 };
    int w = LEFT + S_LEVELS * CELL + 8, h = TOP + S_LEVELS * CELL + 8;
    fprintf (f, "<svg data-chart=\"heatmap\" data-rows=\"%s\" data-cols=\"%s\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"11\">\n",
             kf_ctl_dim_name (target, row), kf_ctl_dim_name (target, col), w, h, w, h);
    fprintf (f, "<text x=\"%d\" y=\"14\" text-anchor=\"middle\" font-size=\"13\">%s \xc3\x97 "
                "%s</text>\n", w / 2, kf_ctl_dim_name (target, row), kf_ctl_dim_name (target, col));
    for (int c = 0; c < S_LEVELS; c++)
        fprintf (f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                 LEFT + c * CELL + CELL / 2, TOP - 6, kf_ctl_level_name (target, col, c));
    for (int r = 0; r < S_LEVELS; r++) {
        fprintf (f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", LEFT - 6,
                 TOP + r * CELL + CELL / 2 + 4, kf_ctl_level_name (target, row, r));
        for (int c = 0; c < S_LEVELS; c++) {
            int x = LEFT + c * CELL, y = TOP + r * CELL;
            if (!count[r][c]) {
                fprintf (f, "<rect class=\"empty\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                            "fill=\"#f4f4f4\" stroke=\"white\"/>\n", x, y, CELL, CELL);
                continue;
            }
            char colour[48];
            s_heat_colour (best[r][c], low, high, colour, sizeof colour);
            fprintf (f, "<rect class=\"cell\" data-row=\"%d\" data-col=\"%d\" data-value=\"%.6g\" "
                        "data-elites=\"%d\" data-candidate=\"%lld\" x=\"%d\" y=\"%d\" "
                        "width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"white\"><title>%s, %s: "
                        "best %.3gx (candidate %lld), %d elite%s</title></rect>\n",
                     r, c, best[r][c], count[r][c], elite[r][c], x, y, CELL, CELL, colour,
                     kf_ctl_level_name (target, row, r), kf_ctl_level_name (target, col, c), best[r][c],
                     elite[r][c], count[r][c], count[r][c] == 1 ? "" : "s");
            fprintf (f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%.2fx</text>\n",
                     x + CELL / 2, y + CELL / 2 + 4,
                     best[r][c] >= sqrt (low * high) && high > low ? "white" : "black",
                     best[r][c]);
        }
    }
    fprintf (f, "</svg>\n");
}

static void
s_archive (FILE *f, json_t *body)
{
    json_t *cells = json_object_get (body, "cells");
    double low = 0, high = 0;
    size_t i;
    json_t *cell;
    json_array_foreach (cells, i, cell) {
        double sp;
        if (!kf_ctl_real (cell, "speedup", &sp) || sp <= 0)
            continue;
        if (low == 0 || sp < low)
            low = sp;
        if (sp > high)
            high = sp;
    }
    fprintf (f, "<h2 id=\"archive\">Archive</h2>\n<p class=\"note\">%zu occupied cell%s of the "
                "descriptor grid; each square is the best elite over the third dimension "
                "(colour on a log scale, %.3gx to %.3gx).</p>\n<div class=\"maps\">\n",
             json_array_size (cells), json_array_size (cells) == 1 ? "" : "s", low, high);
    static const int pairs[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
    for (int p = 0; p < 3; p++)
        s_heatmap (f, kf_ctl_str (json_object_get (body, "run"), "target"), cells, pairs[p][0],
                   pairs[p][1], low, high);
    fprintf (f, "</div>\n");
}

/* ------------------------------------------------------------------ */
/* Lineage of the best                                                  */

/* HEX (borrowed) as bytes, NUL-terminated; "" when absent or not hex.
 * The caller frees. */
static char *
s_unhex (const char *hex)
{
    size_t len = hex ? strlen (hex) : 0;
    char *out = malloc (len / 2 + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        unsigned v;
        if (sscanf (hex + i, "%2x", &v) != 1)
            break;
        out[n++] = (char) v;
    }
    out[n] = 0;
    /* A NUL inside a source ends it here: it is text to show. */
    return out;
}

/* The diff of PARENT to CHILD as a <pre>, with its counts in ADDED and
 * REMOVED. Returns -1 when out of memory. */
static int
s_write_diff (FILE *f, const char *parent, const char *child, long *added, long *removed)
{
    kf_ctl_diff_line_t *lines = NULL;
    long n = kf_ctl_diff (parent, child, &lines);
    if (n < 0)
        return -1;
    *added = *removed = 0;
    for (long i = 0; i < n; i++) {
        *added += lines[i].op == KF_CTL_DIFF_ADD;
        *removed += lines[i].op == KF_CTL_DIFF_DEL;
    }
    fprintf (f, "<pre class=\"diff\" data-added=\"%ld\" data-removed=\"%ld\">", *added,
             *removed);
    for (long i = 0; i < n; i++) {
        static const char *cls[] = { "same", "del", "add" };
        static const char mark[] = { ' ', '-', '+' };
        fprintf (f, "<span class=\"%s\">%c ", cls[lines[i].op], mark[lines[i].op]);
        s_escn (f, lines[i].line, lines[i].len);
        fprintf (f, "</span>");
    }
    fprintf (f, "</pre>\n");
    free (lines);
    return 0;
}

static int
s_lineage (FILE *f, json_t *body)
{
    json_t *lineage = json_object_get (body, "lineage");
    json_t *candidates = json_object_get (body, "candidates");
    size_t n = json_array_size (lineage);
    fprintf (f, "<h2 id=\"lineage\">Lineage of the best kernel</h2>\n");
    if (!n) {
        /* A coordinator older than `report: true` sends no lineage. */
        fprintf (f, "<p class=\"note\">%s</p>\n",
                 lineage ? "No correct candidate yet."
                         : "The coordinator sent no lineage (a version without it).");
        return 0;
    }
    /* The chain as a row of nodes, root on the left. */
    enum { STEP = 110, H = 96 };
    int w = (int) n * STEP + 20;
    fprintf (f, "<svg data-chart=\"lineage\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-size=\"11\">\n", w, H, w, H);
    for (size_t k = 0; k < n; k++) {
        json_t *step = json_array_get (lineage, n - 1 - k);
        long long id = kf_ctl_int (step, "id", 0);
        json_t *c = kf_ctl_candidate (candidates, id);
        char sp[32];
        int x = 20 + (int) k * STEP + 30;
        if (k)
            fprintf (f, "<line x1=\"%d\" y1=\"40\" x2=\"%d\" y2=\"40\" stroke=\"#888\"/>\n",
                     x - STEP + 14, x - 14);
        fprintf (f, "<circle class=\"node\" data-candidate=\"%lld\" data-value=\"%s\" "
                    "cx=\"%d\" cy=\"40\" r=\"14\" fill=\"%s\"><title>candidate %lld</title>"
                    "</circle>\n", id, s_data (c, "speedup", sp, sizeof sp), x,
                 k + 1 == n ? "#2ca02c" : "#9ecae1", id);
        fprintf (f, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\">#%lld</text>"
                    "<text x=\"%d\" y=\"72\" text-anchor=\"middle\">%s</text>\n", x, id, x,
                 s_fmt (c, "speedup", "x", sp, sizeof sp));
    }
    fprintf (f, "</svg>\n<ol class=\"lineage\">\n");
    char *parent_src = NULL;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        json_t *step = json_array_get (lineage, n - 1 - k);
        long long id = kf_ctl_int (step, "id", 0);
        json_t *c = kf_ctl_candidate (candidates, id);
        char *src = s_unhex (json_string_value (json_object_get (step, "source_hex")));
        if (!src) {
            rc = -1;
            break;
        }
        char sp[32], parent[32] = "";
        if (k)
            snprintf (parent, sizeof parent, "%lld", kf_ctl_int (step, "parent_id", 0));
        fprintf (f, "<li class=\"step\" data-candidate=\"%lld\" data-parent=\"%s\" "
                    "data-value=\"%s\">", id, parent, s_data (c, "speedup", sp, sizeof sp));
        fprintf (f, "<details%s><summary>candidate %lld (generation %lld, slot %lld): ",
                 k + 1 == n ? " open" : "", id, kf_ctl_int (c, "generation", 0),
                 kf_ctl_int (c, "slot", 0));
        s_esc (f, kf_ctl_str (c, "status"));
        fprintf (f, ", %s", s_fmt (c, "speedup", "x", sp, sizeof sp));
        long added = 0, removed = 0;
        if (!k)
            fprintf (f, ", the first of its line</summary>\n");
        else
            fprintf (f, ", changed from candidate %lld</summary>\n",
                     kf_ctl_int (step, "parent_id", 0));
        if (s_write_diff (f, parent_src ? parent_src : "", src, &added, &removed))
            rc = -1;
        fprintf (f, "<p class=\"note\">+%ld / -%ld lines</p></details></li>\n", added, removed);
        free (parent_src);
        parent_src = src;
    }
    free (parent_src);
    fprintf (f, "</ol>\n");
    return rc;
}

/* ------------------------------------------------------------------ */
/* Time per stage                                                       */

static void
s_stages (FILE *f, json_t *body)
{
    json_t *stages = json_object_get (body, "stages");
    double max = 0;
    size_t i;
    json_t *s;
    json_array_foreach (stages, i, s) {
        double t;
        if (kf_ctl_real (s, "total_s", &t) && t > max)
            max = t;
    }
    if (max <= 0)
        max = 1;
    enum { W = 760, ROW = 28, LEFT = 110, RIGHT = 250 };
    int h = (int) json_array_size (stages) * ROW + 16;
    fprintf (f, "<h2 id=\"stages\">Time per stage</h2>\n<svg data-chart=\"stages\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"12\">\n", W, h, W, h);
    json_array_foreach (stages, i, s) {
        double total = 0, work = 0;
        kf_ctl_real (s, "total_s", &total);
        bool has_work = kf_ctl_real (s, "work_s", &work);
        if (work > total)
            work = total;
        int y = 8 + (int) i * ROW;
        double w = total / max * (W - LEFT - RIGHT);
        fprintf (f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 8, y + 16);
        s_esc (f, kf_ctl_str (s, "kind"));
        fprintf (f, "</text><rect class=\"bar\" data-kind=\"");
        s_esc (f, kf_ctl_str (s, "kind"));
        fprintf (f, "\" data-value=\"%.6g\" data-jobs=\"%lld\" data-failed=\"%lld\" "
                    "data-work=\"", total, kf_ctl_int (s, "jobs", 0), kf_ctl_int (s, "failed", 0));
        if (has_work)
            fprintf (f, "%.6g", work);
        fprintf (f, "\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#c6dbef\"><title>",
                 LEFT, y, w < 1 ? 1 : w, ROW - 8);
        s_esc (f, kf_ctl_str (s, "kind"));
        fprintf (f, ": %.3g s over %lld job%s</title></rect>\n", total, kf_ctl_int (s, "jobs", 0),
                 kf_ctl_int (s, "jobs", 0) == 1 ? "" : "s");
        if (has_work)
            fprintf (f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#3182bd\"/>\n",
                     LEFT, y, total > 0 ? work / max * (W - LEFT - RIGHT) : 0, ROW - 8);
        fprintf (f, "<text x=\"%.1f\" y=\"%d\">%.2f s, %lld job%s", LEFT + (w < 1 ? 1 : w) + 6,
                 y + 16, total, kf_ctl_int (s, "jobs", 0),
                 kf_ctl_int (s, "jobs", 0) == 1 ? "" : "s");
        if (has_work)
            fprintf (f, " (%.2f s working, %.2f s queued)", work, total - work);
        fprintf (f, "</text>\n");
    }
    fprintf (f, "</svg>\n<p class=\"note\">Seconds from queued to finished, summed over each "
                "kind's finished jobs (jobs overlap, so the sum can exceed the run's wall "
                "time). Dark: the model's own latency for generate jobs; the rest of a bar "
                "is time queued and working, which the coordinator does not tell apart for "
                "other kinds.</p>\n");
}

/* ------------------------------------------------------------------ */
/* Prompt versions                                                      */

static void
s_prompts (FILE *f, json_t *body)
{
    json_t *versions = json_object_get (body, "prompt_versions");
    fprintf (f, "<h2 id=\"prompts\">Prompt versions</h2>\n");
    fprintf (f, "<table data-chart=\"prompts\"><tr><th>version</th><th>parent</th>"
                "<th>generation</th><th>fitness</th><th>best speedup</th><th>kernels</th>"
                "<th>in archive</th><th class=\"l\">edits</th></tr>\n");
    size_t i;
    json_t *v;
    json_array_foreach (versions, i, v) {
        char fit[32], best[32], value[32];
        long long parent = kf_ctl_int (v, "parent", -1);
        fprintf (f, "<tr class=\"version\" data-version=\"%lld\" data-value=\"%s\">"
                    "<td>v%lld</td><td>", kf_ctl_int (v, "number", 0),
                 s_data (v, "fitness", value, sizeof value), kf_ctl_int (v, "number", 0));
        s_fmt (v, "fitness", "", fit, sizeof fit);
        if (parent >= 0)
            fprintf (f, "v%lld", parent);
        else
            fprintf (f, "-");
        fprintf (f, "</td><td>%lld</td><td>%s</td><td>%s</td><td>%lld</td><td>%s</td>"
                    "<td class=\"l\">", kf_ctl_int (v, "generation", 0), fit,
                 s_fmt (v, "best_speedup", "x", best, sizeof best),
                 kf_ctl_int (v, "candidates", 0),
                 json_is_false (json_object_get (v, "in_archive")) ? "no" : "yes");
        size_t k;
        json_t *e;
        json_array_foreach (json_object_get (v, "edits"), k, e) {
            fprintf (f, "%s<b>", k ? "<br>" : "");
            s_esc (f, kf_ctl_str (e, "section"));
            fprintf (f, "</b>: ");
            s_esc (f, kf_ctl_str (e, "replace"));
        }
        if (!json_array_size (json_object_get (v, "edits")))
            fprintf (f, "(the defaults)");
        fprintf (f, "</td></tr>\n");
    }
    fprintf (f, "</table>\n");
    if (!json_array_size (versions))
        fprintf (f, "<p class=\"note\">The run kept one prompt: no meta-prompt versions.</p>\n");
}

/* ------------------------------------------------------------------ */

int
kf_ctl_report_html (json_t *body, const char *path, char **err)
{
    *err = NULL;
    json_t *run = json_object_get (body, "run");
    size_t n = 0;
    json_t **order = kf_ctl_report_order (json_object_get (body, "candidates"), &n);
    if (!order) {
        *err = strdup ("out of memory");
        return -1;
    }
    /* The cells with their coordinates as numbers (what show --json adds). */
    kf_ctl_show_extend (body);
    FILE *f = kf_ctl_report_open (path, err);
    if (!f) {
        free (order);
        return -1;
    }
    kf_ctl_html_head (f, "Run", kf_ctl_int (run, "id", 0), kf_ctl_str (run, "task_name"));
    char best[32], first[32];
    fprintf (f, "</h1>\n<table class=\"summary\"><tr><th class=\"l\">status</th>"
                "<th class=\"l\">target</th><th>generations</th><th>population</th>"
                "<th>candidates</th><th>best speedup</th><th>first correct</th>"
                "<th class=\"l\">started</th><th class=\"l\">finished</th></tr>\n<tr><td class=\"l\">");
    s_esc (f, kf_ctl_str (run, "status"));
    fprintf (f, "</td><td class=\"l\">");
    s_esc (f, kf_ctl_str (run, "target"));
    fprintf (f, "</td><td>%lld</td><td>%lld</td><td>%zu</td><td>%s</td><td>%s</td>"
                "<td class=\"l\">", kf_ctl_int (run, "generations", 0),
             kf_ctl_int (run, "population", 0), n,
             s_fmt (run, "best_speedup", "x", best, sizeof best),
             s_fmt (run, "first_speedup", "x", first, sizeof first));
    s_esc (f, kf_ctl_str (run, "created_at"));
    fprintf (f, "</td><td class=\"l\">");
    s_esc (f, kf_ctl_str (run, "finished_at"));
    fprintf (f, "</td></tr></table>\n");
    const char *reason = json_string_value (json_object_get (run, "reason"));
    if (reason && *reason) {
        fprintf (f, "<p class=\"note\">");
        s_esc (f, reason);
        fprintf (f, "</p>\n");
    }

    s_verdicts (f, json_object_get (body, "candidates"));
    s_curve (f, order, n);
    s_archive (f, body);
    int rc = s_lineage (f, body);
    s_stages (f, body);
    s_prompts (f, body);
    fprintf (f, "<p class=\"note\">Written by kfctl report from the coordinator's SHOW reply.</p>\n"
                "</body>\n</html>\n");
    free (order);
    if (kf_ctl_report_close (f, path, err))
        return -1;
    if (rc)
        *err = strdup ("out of memory");
    return rc;
}
