/*  kf_backend_offline.c - the built-in offline generator as a backend.
 *
 *  kf_offline_generate takes microseconds and touches nothing outside
 *  memory, so it runs on the loop thread and answers before start
 *  returns. Its answer is already a source (no extraction needed), handed
 *  back as a finished result with the parameters it chose. Below it, the
 *  same generator as a blocking job handler (kf_gateway.h).
 */
#include "kf_backend.h"
#include "kf_gateway.h"
#include "kf_gen_offline.h"
#include "kf_meta_offline.h"

#include <stdlib.h>
#include <string.h>

static void
s_answer (const kf_gen_request_t *req, kf_gen_reply_t *reply)
{
    char *source = kf_offline_generate (req->payload, &reply->error);
    if (!source)
        reply->outcome = KF_GEN_FAIL;
    else {
        char *params = kf_offline_params (source);
        reply->outcome = KF_GEN_OK;
        reply->result = json_pack ("{s:s, s:s}", "source", source, "params",
                                   params ? params : "");
        free (params);
        free (source);
        if (!reply->result) {
            reply->outcome = KF_GEN_FAIL;
            reply->error = strdup ("offline generator: out of memory");
        }
    }
}

kf_backend_t *
kf_backend_offline_new (void)
{
    return kf_backend_at_once_new ("offline", s_answer);
}

//  ---------------------------------------------------------------------
//  The blocking offline handler, as before the asynchronous mode

json_t *
kf_gateway_capabilities (void)
{
    return json_pack ("{s:[s], s:[s,s,s]}", "generators", "offline", "languages", "c", "cuda",
                      "opencl");
}

void
kf_gateway_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    (void) arg;
    memset (res, 0, sizeof *res);
    if (job->kind && !strcmp (job->kind, "meta")) {
        char *err = NULL;
        char *text = kf_meta_offline_reply (job->payload, &err);
        res->ok = text != NULL;
        if (text)
            res->result = json_pack ("{s:s, s:s}", "text", text, "generator", "offline");
        else
            res->error = err ? err : strdup ("offline meta-prompter failed");
        free (text);
        return;
    }
    if (!job->kind || strcmp (job->kind, "generate") != 0) {
        res->ok = false;
        res->error = strdup ("the gateway only takes generate and meta jobs");
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
