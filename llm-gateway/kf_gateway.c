/*  kf_gateway.c - dispatches generate jobs to the generator that serves
 *  them and shapes the RESULT: {source, generator, params}.
 *
 *  The handler runs in a job thread of kf_worker; it keeps no state of its
 *  own, so any number may run at once.
 */
#include "kf_gateway.h"
#include "kf_gen_offline.h"

#include <stdlib.h>
#include <string.h>

json_t *
kf_gateway_capabilities (void)
{
    return json_pack ("{s:[s], s:[s]}", "generators", "offline", "languages", "c");
}

void
kf_gateway_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    (void) arg;
    memset (res, 0, sizeof *res);
    if (!job->kind || strcmp (job->kind, "generate") != 0) {
        res->ok = false;
        res->error = strdup ("the gateway only takes generate jobs");
        return;
    }
    char *err = NULL;
    char *source = kf_offline_generate (job->payload, &err);
    if (!source) {
        res->ok = false;
        res->error = err ? err : strdup ("offline generator failed");
        return;
    }
    char *params = kf_offline_params (source);
    res->result = json_pack ("{s:s, s:s, s:s}", "source", source, "generator", "offline",
                             "params", params ? params : "");
    free (params);
    free (source);
    if (!res->result) {
        res->ok = false;
        res->error = strdup ("out of memory");
        return;
    }
    res->ok = true;
}
