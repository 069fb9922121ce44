/*  kf_secrets.h - keeping this process's secrets out of what it reports.
 *
 *  A worker's environment holds secrets (API keys, tokens, a database URL)
 *  that no child sees (kf_subproc's allow-list). Should one reach a
 *  verdict detail, a compiler log or an error anyway - a model that wrote
 *  a key into a kernel's source, a runtime that printed its settings - it
 *  must not travel on to the database, a prompt or a person: every string
 *  of a RESULT is scrubbed of the values of this process's secret
 *  variables before it is sent.
 *
 *  A variable is secret when its name contains KEY, TOKEN, SECRET,
 *  PASSWORD, PASSWD, CREDENTIAL or DATABASE_URL (any case) and its value
 *  is at least 8 characters; for a URL with a password, the password is
 *  scrubbed on its own too.
 */
#ifndef KF_SECRETS_H
#define KF_SECRETS_H

#include <jansson.h>
#include <stdbool.h>

/* Replaces every occurrence of a secret value in every string of JSON
 * (objects and arrays walked) with "[redacted]". Returns how many strings
 * changed. The secrets are read from the environment once, at the first
 * call. */
int kf_secrets_scrub (json_t *json);

/* Whether the variable NAME would be treated as secret. */
bool kf_secrets_is_secret_name (const char *name);

#endif
