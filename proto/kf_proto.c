/*  kf_proto.c - encode, decode and validate protocol messages.
 *
 *  The schema table below is PROTOCOL.md in code: for each type, the
 *  endpoints that accept it and the required body fields with their JSON
 *  types. Everything arriving from the network passes kf_msg_decode first,
 *  so no handler ever sees a frame count, size or field it did not expect.
 */
#include "kf_proto.h"
#include "kf_take.h"
#include <string.h>

typedef struct {
    const char *name;
    json_type type;          /* JSON_TRUE stands for "boolean" */
} s_field_t;

#define S_MAX_FIELDS 6
typedef struct {
    const char *type;
    unsigned endpoints;      /* bit set of kf_endpoint_t */
    s_field_t fields[S_MAX_FIELDS];
} s_schema_t;

#define EP(e) (1u << (e))
#define W_IN EP (KF_EP_WORKER_IN)
#define W_OUT EP (KF_EP_WORKER_OUT)
#define C_IN EP (KF_EP_CLIENT_IN)
#define C_OUT EP (KF_EP_CLIENT_OUT)
#define S_IN EP (KF_EP_STATUS_IN)
#define E_OUT EP (KF_EP_EVENT_OUT)

static const s_schema_t s_schema[] = {
    { "HELLO", W_IN, { { "worker_id", JSON_STRING }, { "role", JSON_STRING },
                       { "credits", JSON_INTEGER },
                       { "capabilities", JSON_OBJECT } } },
    { "HEARTBEAT", W_IN | W_OUT, { { NULL, 0 } } },
    { "RESULT", W_IN, { { "job_id", JSON_INTEGER }, { "lease", JSON_INTEGER },
                        { "ok", JSON_TRUE }, { "result", JSON_OBJECT } } },
    { "BYE", W_IN, { { NULL, 0 } } },
    { "WELCOME", W_OUT, { { "worker_id", JSON_STRING },
                          { "heartbeat_ms", JSON_INTEGER },
                          { "liveness", JSON_INTEGER } } },
    { "JOB", W_OUT, { { "job_id", JSON_INTEGER }, { "lease", JSON_INTEGER },
                      { "kind", JSON_STRING }, { "payload", JSON_OBJECT } } },
    /* A worker may answer the coordinator with an ERROR too (a JOB it
     * cannot decode); it is logged and counted, never answered. */
    { "ERROR", W_IN | W_OUT | C_OUT, { { "code", JSON_STRING },
                               { "reason", JSON_STRING } } },
    { "SUBMIT", C_IN, { { "task", JSON_OBJECT }, { "config", JSON_OBJECT } } },
    { "RUNS", C_IN | C_OUT, { { NULL, 0 } } },
    { "SHOW", C_IN, { { "run_id", JSON_INTEGER } } },
    { "BEST", C_IN, { { "run_id", JSON_INTEGER } } },
    { "CANCEL", C_IN, { { "run_id", JSON_INTEGER } } },
    { "EXPORT", C_IN, { { "run_id", JSON_INTEGER } } },
    { "PROFILE_MODEL", C_IN, { { "source", JSON_STRING }, { "top", JSON_INTEGER } } },
    { "PROFILE_STATE", C_IN | C_OUT, { { "job_id", JSON_INTEGER } } },
    { "SOURCE", C_IN, { { "run_id", JSON_INTEGER }, { "candidate_id", JSON_INTEGER } } },
    { "SUITE", C_IN, { { "suite_id", JSON_INTEGER } } },
    { "SUITES", C_IN | C_OUT, { { NULL, 0 } } },
    { "STATUS", C_IN | S_IN | C_OUT, { { NULL, 0 } } },
    { "WORKERS", C_IN | C_OUT, { { NULL, 0 } } },
    { "DRAIN", C_IN, { { "worker_id", JSON_STRING } } },
    { "DRAINING", C_OUT, { { "worker_id", JSON_STRING } } },
    { "AUDIT", C_IN, { { "candidate_id", JSON_INTEGER }, { "verdict", JSON_STRING } } },
    { "AUDITED", C_OUT, { { "candidate_id", JSON_INTEGER }, { "run_id", JSON_INTEGER } } },
    { "SUBMITTED", C_OUT, { { "run_id", JSON_INTEGER } } },
    { "RUN", C_OUT, { { "run", JSON_OBJECT } } },
    { "BEST", C_OUT, { { "run_id", JSON_INTEGER } } },
    { "CANCELLED", C_OUT, { { "run_id", JSON_INTEGER } } },
    { "SUITE", C_OUT, { { "suite", JSON_OBJECT }, { "runs", JSON_ARRAY } } },
    { "EXPORTED", C_OUT, { { "run_id", JSON_INTEGER }, { "candidate", JSON_OBJECT } } },
    { "PROFILE_QUEUED", C_OUT, { { "job_id", JSON_INTEGER } } },
    { "SOURCE", C_OUT, { { "run_id", JSON_INTEGER }, { "candidate", JSON_OBJECT } } },
    { "EVENT", E_OUT, { { "run_id", JSON_INTEGER },
                        { "event", JSON_STRING } } },
};

kf_msg_t *
kf_msg_new (const char *type, json_t *body)
{
    assert (type && strlen (type) <= KF_PROTO_MAX_TYPE);
    kf_msg_t *self = calloc (1, sizeof *self);
    if (!self) {
        json_decref (body);
        return NULL;
    }
    strcpy (self->type, type);
    self->body = body ? body : json_object ();
    self->frames = zmsg_new ();
    return self;
}

void
kf_msg_destroy (kf_msg_t **self_p)
{
    kf_msg_t *self = KF_TAKE (self_p);
    if (self) {
        json_decref (self->body);
        zmsg_destroy (&self->frames);
        if (self->typed && self->typed_free)
            self->typed_free (self->typed);
        free (self);
    }
}

int
kf_msg_add_frame (kf_msg_t *self, const void *data, size_t size)
{
    return zmsg_addmem (self->frames, data, size);
}

size_t
kf_msg_frame_count (kf_msg_t *self)
{
    return zmsg_size (self->frames);
}

zframe_t *
kf_msg_frame (kf_msg_t *self, size_t index)
{
    zframe_t *f = zmsg_first (self->frames);
    for (size_t i = 0; f && i < index; i++)
        f = zmsg_next (self->frames);
    return f;
}

zmsg_t *
kf_msg_encode (kf_msg_t **self_p, zframe_t *routing_id, const char *topic)
{
    kf_msg_t *self = *self_p;
    char *text = json_dumps (self->body, JSON_COMPACT);
    if (!text) {
        kf_msg_destroy (self_p);
        return NULL;
    }
    zmsg_t *out = zmsg_new ();
    if (routing_id)
        zmsg_append (out, &(zframe_t *) { zframe_dup (routing_id) });
    if (topic)
        zmsg_addstr (out, topic);
    unsigned char sig[3] = { 'K', 'F', KF_PROTO_VERSION };
    zmsg_addmem (out, sig, 3);
    zmsg_addstr (out, self->type);
    zmsg_addmem (out, text, strlen (text));
    free (text);
    zframe_t *f;
    while ((f = zmsg_pop (self->frames)))
        zmsg_append (out, &f);
    kf_msg_destroy (self_p);
    return out;
}

int
kf_msg_send (kf_msg_t **self_p, void *sock, zframe_t *routing_id,
             const char *topic)
{
    zmsg_t *out = kf_msg_encode (self_p, routing_id, topic);
    if (!out)
        return -1;
    int rc = zmsg_send (&out, sock);
    zmsg_destroy (&out);   /* left with us when the send failed */
    return rc;
}

static bool
s_type_syntax_ok (zframe_t *f)
{
    size_t n = zframe_size (f);
    if (n < 1 || n > KF_PROTO_MAX_TYPE)
        return false;
    const unsigned char *p = zframe_data (f);
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_'))
            return false;
    return true;
}

static bool
s_field_ok (json_t *body, const s_field_t *field)
{
    json_t *v = json_object_get (body, field->name);
    if (!v)
        return false;
    if (field->type == JSON_TRUE)
        return json_is_boolean (v);
    if (field->type == JSON_INTEGER)
        return json_is_integer (v);
    return json_typeof (v) == field->type;
}

/* Looks TYPE up for EP. Returns KF_PROTO_UNKNOWN_TYPE when no entry
 * accepts it there, otherwise checks the fields. */
static kf_proto_rc_t
s_validate (const char *type, json_t *body, kf_endpoint_t ep,
            const char **reason)
{
    bool known = false;
    for (size_t i = 0; i < sizeof s_schema / sizeof s_schema[0]; i++) {
        const s_schema_t *s = &s_schema[i];
        if (strcmp (s->type, type))
            continue;
        known = true;
        if (ep != KF_EP_ANY && !(s->endpoints & EP (ep)))
            continue;
        for (int k = 0; k < S_MAX_FIELDS && s->fields[k].name; k++)
            if (!s_field_ok (body, &s->fields[k])) {
                *reason = "required field missing or of the wrong type";
                return KF_PROTO_MALFORMED;
            }
        return KF_PROTO_OK;
    }
    *reason = known ? "type not accepted on this endpoint" : "unknown type";
    return KF_PROTO_UNKNOWN_TYPE;
}

kf_proto_rc_t
kf_msg_decode (zmsg_t **zmsg_p, kf_endpoint_t ep, size_t max_message,
               bool expect_routing, bool expect_topic, zframe_t **routing_id,
               kf_msg_t **msg_p, const char **reason)
{
    const char *dummy;
    if (!reason)
        reason = &dummy;
    *reason = "";
    *msg_p = NULL;
    if (routing_id)
        *routing_id = NULL;
    zmsg_t *zmsg = *zmsg_p;
    *zmsg_p = NULL;
    if (!zmsg)
        return KF_PROTO_NOMSG;
    kf_proto_rc_t rc = KF_PROTO_MALFORMED;
    if (expect_routing) {
        zframe_t *id = zmsg_pop (zmsg);
        if (!id) {
            *reason = "no routing id";
            goto done;
        }
        if (routing_id)
            *routing_id = id;
        else
            zframe_destroy (&id);
    }
    if (expect_topic) {
        zframe_t *topic = zmsg_pop (zmsg);
        zframe_destroy (&topic);
    }
    size_t nframes = zmsg_size (zmsg);
    if (nframes < 3 || nframes > 3 + KF_PROTO_MAX_FRAMES) {
        *reason = "wrong number of frames";
        goto done;
    }
    zframe_t *sig = zmsg_pop (zmsg);
    const unsigned char *s = zframe_data (sig);
    bool sig_ok = zframe_size (sig) == 3 && s[0] == 'K' && s[1] == 'F';
    bool version_ok = sig_ok && s[2] == KF_PROTO_VERSION;
    zframe_destroy (&sig);
    if (!sig_ok) {
        *reason = "bad signature";
        goto done;
    }
    if (!version_ok) {
        *reason = "unsupported protocol version";
        rc = KF_PROTO_VERSION_ERR;
        goto done;
    }
    zframe_t *type = zmsg_pop (zmsg);
    bool type_ok = s_type_syntax_ok (type);
    char type_text[KF_PROTO_MAX_TYPE + 1] = "";
    if (type_ok)
        memcpy (type_text, zframe_data (type), zframe_size (type));
    size_t total = zframe_size (type) + 3 + zmsg_content_size (zmsg);
    zframe_destroy (&type);
    if (!type_ok) {
        *reason = "bad type frame";
        goto done;
    }
    if (total > max_message) {
        *reason = "message over the size cap";
        rc = KF_PROTO_OVERSIZED;
        goto done;
    }
    zframe_t *bodyf = zmsg_pop (zmsg);
    json_error_t jerr;
    json_t *body = json_loadb ((const char *) zframe_data (bodyf),
                               zframe_size (bodyf), JSON_REJECT_DUPLICATES,
                               &jerr);
    zframe_destroy (&bodyf);
    if (!json_is_object (body)) {
        json_decref (body);
        *reason = "body is not a JSON object";
        goto done;
    }
    rc = s_validate (type_text, body, ep, reason);
    if (rc != KF_PROTO_OK) {
        json_decref (body);
        goto done;
    }
    kf_msg_t *msg = kf_msg_new (type_text, body);
    if (!msg) {
        rc = KF_PROTO_MALFORMED;
        goto done;
    }
    zmsg_destroy (&msg->frames);
    msg->frames = zmsg;
    zmsg = NULL;
    *msg_p = msg;
done:
    zmsg_destroy (&zmsg);
    return rc;
}

/* Frame by frame, so what a peer sends past the caps is read and let go
 * one frame at a time: an over-long message costs a count, not a list of
 * thousands of frames held until the codec looks at it. ZeroMQ delivers
 * a message's frames together, so the rest of one is always there to be
 * read (and must be, or it would be taken for the next message). */
kf_proto_rc_t
kf_proto_recv_bounded (void *sock, size_t lead, size_t max_message, zmsg_t **zmsg_p,
                       const char **reason)
{
    *zmsg_p = NULL;
    zmsg_t *zmsg = NULL;
    kf_proto_rc_t rc = KF_PROTO_OK;
    size_t frames = 0, bytes = 0;
    const size_t max_frames = lead + 3 + KF_PROTO_MAX_FRAMES;
    while (true) {
        zframe_t *f = zframe_recv (sock);
        if (!f) {
            if (frames == 0)
                return KF_PROTO_NOMSG;
            break;   /* interrupted mid-message: what we have is judged */
        }
        bool more = zframe_more (f);
        frames++;
        if (frames > lead)
            bytes += zframe_size (f);
        if (rc == KF_PROTO_OK && frames > max_frames) {
            rc = KF_PROTO_MALFORMED;
            *reason = "wrong number of frames";
        }
        else if (rc == KF_PROTO_OK && bytes > max_message) {
            rc = KF_PROTO_OVERSIZED;
            *reason = "message over the size cap";
        }
        //  The lead frames (routing id) are kept whatever follows, so
        //  the caller can still answer; past a cap nothing else is.
        if (frames <= lead || rc == KF_PROTO_OK) {
            if (!zmsg)
                zmsg = zmsg_new ();
            zmsg_append (zmsg, &f);
        }
        zframe_destroy (&f);
        if (!more)
            break;
    }
    if (rc != KF_PROTO_OK) {
        //  Only the lead frames go back.
        while (zmsg && zmsg_size (zmsg) > lead) {
            zframe_t *f = zmsg_last (zmsg);
            zmsg_remove (zmsg, f);
            zframe_destroy (&f);
        }
    }
    *zmsg_p = zmsg;
    return rc;
}

kf_proto_rc_t
kf_msg_recv (void *sock, kf_endpoint_t ep, size_t max_message,
             bool expect_routing, zframe_t **routing_id, kf_msg_t **msg_p,
             const char **reason)
{
    const char *dummy;
    if (!reason)
        reason = &dummy;
    *msg_p = NULL;
    if (routing_id)
        *routing_id = NULL;
    bool topic = ep == KF_EP_EVENT_OUT;
    size_t lead = (expect_routing ? 1 : 0) + (topic ? 1 : 0);
    zmsg_t *zmsg = NULL;
    kf_proto_rc_t rc = kf_proto_recv_bounded (sock, lead, max_message, &zmsg, reason);
    if (rc == KF_PROTO_OK)
        return kf_msg_decode (&zmsg, ep, max_message, expect_routing, topic, routing_id,
                              msg_p, reason);
    if (rc != KF_PROTO_NOMSG && expect_routing && zmsg) {
        zframe_t *id = zmsg_pop (zmsg);
        if (routing_id)
            *routing_id = id;
        else
            zframe_destroy (&id);
    }
    zmsg_destroy (&zmsg);
    return rc;
}

const char *
kf_proto_rc_name (kf_proto_rc_t rc)
{
    switch (rc) {
    case KF_PROTO_OK: return "ok";
    case KF_PROTO_MALFORMED: return "malformed";
    case KF_PROTO_VERSION_ERR: return "version";
    case KF_PROTO_OVERSIZED: return "oversized";
    case KF_PROTO_UNKNOWN_TYPE: return "unknown-type";
    default: return "none";
    }
}

int
kf_proto_send_error (void *sock, zframe_t *routing_id, const char *code,
                     const char *reason)
{
    kf_msg_t *msg = kf_msg_new ("ERROR", json_pack ("{s:s, s:s}", "code",
                                                    code, "reason", reason));
    return msg ? kf_msg_send (&msg, sock, routing_id, NULL) : -1;
}

json_int_t
kf_msg_int (const kf_msg_t *self, const char *key, json_int_t dflt)
{
    json_t *v = json_object_get (self->body, key);
    return json_is_integer (v) ? json_integer_value (v) : dflt;
}

const char *
kf_msg_str (const kf_msg_t *self, const char *key)
{
    return json_string_value (json_object_get (self->body, key));
}
