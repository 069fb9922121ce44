/*  kf_figures_retry.c - measuring busy host figures again when the host
 *  is quiet (kf_figures_retry.h).
 */
#include "kf_figures_retry.h"
#include "kf_exec.h"
#include "kf_log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t
kf_figures_retry_next_ms (kf_figures_outcome_t outcome, int tries, int max_tries, double every_s)
{
    if (!(every_s > 0) || tries >= max_tries)
        return -1;
    if (tries > 0 && outcome != KF_FIGURES_RETRY_BUSY)
        return -1;
    return (int64_t) llround (every_s * 1e3);
}

void
kf_figures_retry_line (char *buf, size_t size, const kf_host_figures_again_t *a, int tries,
                       int max_tries)
{
    char share[64] = "";
    if (a->others_share >= 0)
        snprintf (share, sizeof share, ", others took %.0f%% of the CPUs",
                  a->others_share * 100);
    if (a->quiet)
        snprintf (buf, size, "figures measured again: quiet, cold read all cores %.1f GB/s "
                  "(was %.1f), copy %.1f GB/s (was %.1f)%s", a->read_gbs, a->was_read_gbs,
                  a->copy_gbs, a->was_copy_gbs, share);
    else if (a->glance_only)
        snprintf (buf, size, "figures measured again: still busy (at a glance%s; try %d of %d)",
                  share, tries, max_tries);
    else
        snprintf (buf, size, "figures measured again: still busy (cold read all cores %.1f "
                  "GB/s, was %.1f%s; try %d of %d)", a->read_gbs, a->was_read_gbs, share, tries,
                  max_tries);
}

int64_t
kf_figures_retry_init (kf_figures_retry_t *r, json_t *caps, double every_s, int max_tries)
{
    *r = (kf_figures_retry_t) { .every_s = every_s, .max_tries = max_tries };
    json_t *backends = json_object_get (caps, "backends");
    json_t *dev = json_array_get (json_object_get (caps, "devices"), 0);
    const char *backend = json_string_value (json_array_get (backends, 0));
    if (!backend || strcmp (backend, "host") != 0
        || !json_is_true (json_object_get (dev, "figures_measured_busy")))
        return -1;
    int64_t first = kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, 0, max_tries, every_s);
    r->caps = first >= 0 ? json_deep_copy (caps) : NULL;
    if (r->caps)
        kf_info ("figures measured beside other work: measured again every %.0f s while no job "
                 "runs, at most %d times (figures_retry_s, figures_retries)", every_s, max_tries);
    else
        kf_warn ("figures measured beside other work, and not measured again "
                 "(figures_retry_s 0): they may read low for this worker's life");
    return r->caps ? first : -1;
}

void
kf_figures_retry_free (kf_figures_retry_t *r)
{
    json_decref (r->caps);
    r->caps = NULL;
}

void
kf_figures_retry_mark (json_t *dev, json_t *old)
{
    char at[32];
    time_t now = time (NULL);
    struct tm tm;
    if (gmtime_r (&now, &tm) && strftime (at, sizeof at, "%Y-%m-%d %H:%M UTC", &tm))
        json_object_set_new (dev, "figures_measured_again_at", json_string (at));
    kf_host_figures_lower_start (dev, json_number_value (json_object_get (old,
                                                                          "thread_start_join_us")));
}

int64_t
kf_figures_retry_idle (void *arg, json_t **caps)
{
    kf_figures_retry_t *r = arg;
    kf_host_figures_again_t a;
    if (kf_host_figures_again (&a) != 0)
        return kf_figures_retry_next_ms (KF_FIGURES_RETRY_NOT_BUSY, ++r->tries, r->max_tries,
                                         r->every_s);
    r->tries++;
    char line[512];
    kf_figures_retry_line (line, sizeof line, &a, r->tries, r->max_tries);
    kf_info ("%s", line);
    if (!a.quiet) {
        int64_t next = kf_figures_retry_next_ms (KF_FIGURES_RETRY_BUSY, r->tries, r->max_tries,
                                                 r->every_s);
        if (next < 0)
            kf_warn ("figures stay those measured beside other work: %d tries made "
                     "(figures_retries)", r->tries);
        return next;
    }
    //  The devices as a start on a quiet host describes them (the host
    //  backend's, which read the figures now in use); the rest as it was.
    json_t *found = kf_exec_capabilities ("host");
    json_t *devices = json_object_get (found, "devices");
    if (json_array_size (devices) > 0 && r->caps)
        kf_figures_retry_mark (json_array_get (devices, 0),
                       json_array_get (json_object_get (r->caps, "devices"), 0));
    if (json_array_size (devices) > 0 && r->caps) {
        json_object_set (r->caps, "devices", devices);
        *caps = json_deep_copy (r->caps);
    }
    json_decref (found);
    return kf_figures_retry_next_ms (KF_FIGURES_RETRY_QUIET, r->tries, r->max_tries, r->every_s);
}
