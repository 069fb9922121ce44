/*  kfctl_html.h - `kfctl report RUN -o FILE.html`: the run as one
 *  self-contained HTML page.
 */
#ifndef KFCTL_HTML_H
#define KFCTL_HTML_H

#include <jansson.h>
#include <stdio.h>

/* Writes the run's report as one self-contained HTML page at PATH from a
 * SHOW reply BODY (borrowed, and extended as `show --json` extends it;
 * asked with `report: true`, so it carries `lineage` and `stages`).
 * Returns 0, or -1 with *ERR set (caller frees). */
int kf_ctl_report_html (json_t *body, const char *path, char **err);

/* What the suite's page (kfctl_html_suite.c) shares with the run's: TEXT
 * (may be NULL) escaped as HTML text or attribute value, and the page's
 * head with the style sheet, titled "WHAT ID: NAME" (NAME escaped), up to
 * the open <h1> of that title. */
void kf_ctl_html_esc (FILE *f, const char *text);
void kf_ctl_html_head (FILE *f, const char *what, long long id, const char *name);

#endif
