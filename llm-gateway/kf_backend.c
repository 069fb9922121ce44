/*  kf_backend.c - what every backend shares: freeing a reply, and the one
 *  rule that says which HTTP failures are worth another attempt.
 */
#include "kf_backend.h"
#include "kf_str.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

//  A reply's body in an error is cut, and control characters made spaces,
//  so one bad response cannot flood a log line or a database row.
#define KF_BODY_TRIM 300

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

static char *
s_trim_body (const char *body, size_t len)
{
    if (!body || !len)
        return strdup ("(empty body)");
    size_t n = len < KF_BODY_TRIM ? len : KF_BODY_TRIM;
    char *out = malloc (n + 4);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) body[i];
        out[i] = c < 0x20 || c == 0x7f ? ' ' : (char) c;
    }
    strcpy (out + n, len > n ? "..." : "");
    return out;
}

bool
kf_gen_reply_http_failure (const kf_http_response_t *resp, kf_gen_reply_t *reply)
{
    reply->status = resp->status;
    reply->retry_after_ms = resp->retry_after_ms;
    reply->timed_out = resp->timed_out;
    if (resp->aborted) {
        reply->outcome = KF_GEN_FAIL;
        reply->error = strdup ("the gateway is stopping");
        return true;
    }
    if (resp->curl_code != CURLE_OK) {
        //  Timeouts, refused or reset connections, a body cut short: the
        //  network's failures, all worth another attempt. A response too
        //  big for our cap (a write error) is not.
        reply->outcome = resp->curl_code == CURLE_WRITE_ERROR ? KF_GEN_FAIL : KF_GEN_RETRY;
        reply->error = kf_strdupf ("%s%s", resp->timed_out ? "timeout: " : "",
                                   resp->error ? resp->error : "transfer failed");
        return true;
    }
    if (resp->status >= 200 && resp->status < 300)
        return false;
    char *body = s_trim_body (resp->body, resp->body_len);
    reply->outcome = resp->status == 429 || resp->status >= 500 ? KF_GEN_RETRY : KF_GEN_FAIL;
    reply->error = kf_strdupf ("HTTP %ld: %s", resp->status, body ? body : "");
    free (body);
    return true;
}
