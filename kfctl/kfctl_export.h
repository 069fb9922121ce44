/*  kfctl_export.h - `kfctl export`: a run's kernel as files a user builds
 *  and calls outside the system (docs/kfctl.md, "export").
 *
 *  The handler itself is kf_ctl_cmd_export (kfctl_cmd.h); what is here is
 *  the part of it that needs no coordinator, so unit tests and the
 *  handler share it.
 */
#ifndef KFCTL_EXPORT_H
#define KFCTL_EXPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The source with the tuning point CONFIG ({NAME: value}, may be NULL or
 * JSON null) written in front of it as #define lines, so the source's
 * own `#ifndef NAME` defaults give way to the point that was measured.
 * Returns the new text (caller frees), or NULL with WHY when a name is
 * not a C identifier or a value neither an integer nor an identifier. */
char *kf_ctl_export_tuned_source (const char *source, size_t size, json_t *config,
                                  const char *banner, char *why, size_t why_size);

/* Whether DIR may be written: 0 when it does not exist or is an empty
 * folder (or FORCE), else -1 with WHY. */
int kf_ctl_export_dir_ok (const char *dir, bool force, char *why, size_t why_size);

#endif
