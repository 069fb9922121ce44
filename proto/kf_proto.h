/*  kf_proto.h - the one codec of the wire protocol (proto/PROTOCOL.md).
 *
 *  A kf_msg_t is a type, a JSON body and optional binary frames. Sending
 *  consumes the message; receiving validates every frame before anything
 *  else sees it and reports malformed input as a code, never an assert.
 */
#ifndef KF_PROTO_H
#define KF_PROTO_H

#include <czmq.h>
#include <jansson.h>
#include <stdbool.h>

#define KF_PROTO_VERSION 1
#define KF_PROTO_MAX_FRAMES 16
#define KF_PROTO_MAX_TYPE 32
#define KF_PROTO_DEFAULT_MAX_MESSAGE (64u * 1024u * 1024u)

/* Receive outcomes. 0 is a valid message; the rest name the ERROR code. */
typedef enum {
    KF_PROTO_OK = 0,
    KF_PROTO_MALFORMED,
    KF_PROTO_VERSION_ERR,
    KF_PROTO_OVERSIZED,
    KF_PROTO_UNKNOWN_TYPE,
    KF_PROTO_NOMSG,          /* nothing read (interrupted) */
    KF_PROTO_N_ERRORS
} kf_proto_rc_t;

/* Which endpoint a message arrived on; decides the accepted types. */
typedef enum {
    KF_EP_WORKER_IN,     /* coordinator's worker ROUTER */
    KF_EP_WORKER_OUT,    /* a worker's DEALER */
    KF_EP_CLIENT_IN,     /* coordinator's client ROUTER */
    KF_EP_CLIENT_OUT,    /* kfctl's DEALER */
    KF_EP_STATUS_IN,     /* coordinator's status ROUTER */
    KF_EP_EVENT_OUT,     /* a SUB */
    KF_EP_ANY            /* tests: every known type */
} kf_endpoint_t;

/* Which typed struct a message's body was decoded into (kf_msg_t's
 * TYPED): a job result's, by its job kind. */
typedef enum {
    KF_MSG_UNTYPED = 0,
    KF_MSG_EVAL_RESULT,        /* kf_eval_result_t (kf_msg_eval.h) */
    KF_MSG_COMPILE_RESULT,     /* kf_compile_result_t (kf_msg_compile.h) */
    KF_MSG_GENERATE_RESULT,    /* kf_generate_result_t, generate and meta (kf_msg_generate.h) */
    KF_MSG_REFERENCE_RESULT,   /* kf_reference_result_t (kf_msg_reference.h) */
    KF_MSG_PROFILE_RESULT      /* kf_profile_result_t (kf_msg_profile.h) */
} kf_msg_kind_t;

typedef struct {
    char type[KF_PROTO_MAX_TYPE + 1];
    json_t *body;          /* owned; always an object */
    zmsg_t *frames;        /* owned; binary frames, possibly empty */
    /* A receiver's typed decoding of the body (kf_msg_eval.h), owned:
     * freed by TYPED_FREE when the message is destroyed. NULL: none.
     * TYPED_KIND says which struct it is, for a switch. */
    void *typed;
    void (*typed_free) (void *typed);
    kf_msg_kind_t typed_kind;
} kf_msg_t;

/* New message of TYPE; BODY is stolen (NULL means {}). */
kf_msg_t *kf_msg_new (const char *type, json_t *body);
void kf_msg_destroy (kf_msg_t **self_p);

/* Appends a copy of DATA as a binary frame. */
int kf_msg_add_frame (kf_msg_t *self, const void *data, size_t size);
/* Borrowed binary frame INDEX (0-based), or NULL. */
zframe_t *kf_msg_frame (kf_msg_t *self, size_t index);
size_t kf_msg_frame_count (kf_msg_t *self);

/* Sends and destroys *SELF_P. ROUTING_ID (borrowed, may be NULL) goes first
 * for ROUTER sockets; TOPIC (may be NULL) for PUB. Returns 0 or -1. */
int kf_msg_send (kf_msg_t **self_p, void *sock, zframe_t *routing_id,
                 const char *topic);

/* The frames kf_msg_send would send, without sending: consumes *SELF_P.
 * NULL when the body cannot be serialised. */
zmsg_t *kf_msg_encode (kf_msg_t **self_p, zframe_t *routing_id, const char *topic);

/* Decodes ZMSG (consumed). When EXPECT_ROUTING, the first frame is the
 * routing id and is handed back in *ROUTING_ID (caller's); when
 * EXPECT_TOPIC, the first frame is a topic and is dropped. On KF_PROTO_OK
 * *MSG_P is the caller's. REASON, when not NULL, gets a short static text. */
kf_proto_rc_t kf_msg_decode (zmsg_t **zmsg_p, kf_endpoint_t ep,
                             size_t max_message, bool expect_routing,
                             bool expect_topic, zframe_t **routing_id,
                             kf_msg_t **msg_p, const char **reason);

/* Receives one message from SOCK frame by frame: the LEAD frames (a
 * routing id, a topic) and then at most 3 + KF_PROTO_MAX_FRAMES frames
 * of at most MAX_MESSAGE bytes together. Frames past either cap are read
 * and dropped as they come, never held; then the rc is KF_PROTO_MALFORMED
 * or KF_PROTO_OVERSIZED and *ZMSG_P holds only the lead frames (to reply).
 * KF_PROTO_OK: *ZMSG_P is every frame, for kf_msg_decode. KF_PROTO_NOMSG:
 * nothing to read. *ZMSG_P is the caller's. */
kf_proto_rc_t kf_proto_recv_bounded (void *sock, size_t lead, size_t max_message,
                                     zmsg_t **zmsg_p, const char **reason);

/* Receives one message from SOCK (kf_proto_recv_bounded) and decodes it
 * as above. */
kf_proto_rc_t kf_msg_recv (void *sock, kf_endpoint_t ep, size_t max_message,
                           bool expect_routing, zframe_t **routing_id,
                           kf_msg_t **msg_p, const char **reason);

/* The ERROR code text for RC ("malformed", ...). */
const char *kf_proto_rc_name (kf_proto_rc_t rc);

/* Sends an ERROR {code, reason} reply. */
int kf_proto_send_error (void *sock, zframe_t *routing_id, const char *code,
                         const char *reason);

/* Returns the body's integer field KEY, or DEFAULT. */
json_int_t kf_msg_int (const kf_msg_t *self, const char *key, json_int_t dflt);
const char *kf_msg_str (const kf_msg_t *self, const char *key);


#endif
