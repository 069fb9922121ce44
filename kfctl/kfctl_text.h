/*  kfctl_text.h - long text a worker wrote (a compiler log, a Python
 *  traceback, a refusal) made fit to show a user: whole lines with the
 *  rest counted (kfctl_text.c). The worker's own file names are given
 *  back as the user's by common/kf_rename.h.
 */
#ifndef KFCTL_TEXT_H
#define KFCTL_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* TEXT cut to at most MAX_LINES whole lines: the first ones (a compiler
 * log, errors first), or with FROM_END the last ones (a traceback, whose
 * end is the problem's own frames and the exception), the lines left out
 * said as "(N more lines)" on a line of its own. Trailing blank lines
 * go. Caller frees; NULL when out of memory. */
char *kf_ctl_text_lines (const char *text, int max_lines, bool from_end);

/* SHAPE (a JSON array of integers) as "[256, 2048]" into BUF. */
void kf_ctl_text_shape (json_t *shape, char *buf, size_t size);

#endif
