/*  kf_backend.c - what every backend shares: freeing a reply. (What the
 *  HTTP backends share beside it, the request and response plumbing, is
 *  kf_backend_http.c.)
 */
#include "kf_backend.h"
#include "kf_str.h"

#include <stdlib.h>
#include <string.h>

void
kf_gen_reply_clear (kf_gen_reply_t *reply)
{
    free (reply->text);
    free (reply->finish_reason);
    free (reply->error);
    json_decref (reply->result);
    memset (reply, 0, sizeof *reply);
    reply->retry_after_ms = -1;
}
