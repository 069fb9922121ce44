/*  fuzz_proto.c - libFuzzer harness for the protocol codec (proto/kf_proto.c).
 *
 *  `make fuzz` builds it with -fsanitize=fuzzer,address,undefined and runs
 *  it on tests/fuzz/corpus/. An input is one message as it would arrive:
 *
 *    byte 0      bit 0: a routing id comes first (ROUTER), bit 1: a topic
 *                comes first (SUB), bits 2-4: the endpoint (kf_endpoint_t)
 *    then frames, each a 2-byte little-endian length and that many bytes
 *    (a length past the end takes what is left); the length 0xffff
 *    instead starts a run: a 2-byte count N (at most 20,000), a 1-byte
 *    size S, and N frames of those S bytes, so a few bytes make a message
 *    of thousands of frames
 *
 *  Decoding must never crash, leak or read out of bounds, whatever the
 *  bytes. A message that decodes is encoded again and decoded again: the
 *  type, the body and the binary frames must come back equal (the codec
 *  must accept what it sends). The cap is small (4 KiB) so the size check
 *  is reached by inputs libFuzzer can make.
 *
 *  The same frames also go through a socket pair into the receive path,
 *  kf_msg_recv (kf_proto_recv_bounded, which drops frames past the count
 *  and size caps as it reads them): it must refuse what the decoder
 *  refuses, accept what it accepts with the same message, and leave the
 *  pair in step (the next message read is the next one sent).
 */
#include "kf_proto.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_MESSAGE 4096

static zmsg_t *
s_frames (const uint8_t *data, size_t size)
{
    zmsg_t *zmsg = zmsg_new ();
    size_t pos = 0;
    while (pos + 2 <= size && zmsg_size (zmsg) < 40000) {
        size_t len = (size_t) data[pos] | (size_t) data[pos + 1] << 8;
        pos += 2;
        if (len == 0xffff && pos + 3 <= size) {
            size_t count = (size_t) data[pos] | (size_t) data[pos + 1] << 8, each = data[pos + 2];
            pos += 3;
            if (count > 20000)
                count = 20000;
            if (each > size - pos)
                each = size - pos;
            for (size_t k = 0; k < count; k++)
                zmsg_addmem (zmsg, data + pos, each);
            pos += each;
            continue;
        }
        if (len > size - pos)
            len = size - pos;
        zmsg_addmem (zmsg, data + pos, len);
        pos += len;
    }
    return zmsg;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The receive path: ZMSG's frames sent as they are over an inproc pair
 * and read back with kf_msg_recv; whether it accepts must agree with
 * DECODED (the decoder's rc on the same frames), and what it accepts must
 * equal MSG. */
static zsock_t *s_in, *s_out;

static void
s_close_pair (void)
{
    zsock_destroy (&s_in);
    zsock_destroy (&s_out);
}

static void
s_check_recv (zmsg_t *zmsg, kf_endpoint_t ep, bool routing, bool topic, kf_proto_rc_t decoded,
              kf_msg_t *msg)
{
    zsock_t *in = s_in, *out = s_out;
    if (topic != (ep == KF_EP_EVENT_OUT))
        return;                         /* the receive path knows topics by endpoint */
    if (!in) {
        in = zsock_new_pair ("@inproc://fuzz-proto-recv");
        out = zsock_new_pair (">inproc://fuzz-proto-recv");
        zsock_set_sndhwm (out, 0);
        zsock_set_rcvhwm (in, 0);
        zsock_set_rcvtimeo (in, 1000);
        s_in = in;
        s_out = out;
        atexit (s_close_pair);
    }
    if (zmsg_size (zmsg) == 0)
        return;                         /* nothing to send: no message */
    zmsg_t *copy = zmsg_dup (zmsg);
    if (zmsg_send (&copy, out))
        abort ();
    zframe_t *route = NULL;
    kf_msg_t *got = NULL;
    const char *reason = NULL;
    kf_proto_rc_t rc = kf_msg_recv (in, ep, S_MAX_MESSAGE, routing, routing ? &route : NULL,
                                    &got, &reason);
    if (rc == KF_PROTO_NOMSG || (rc == KF_PROTO_OK) != (decoded == KF_PROTO_OK) || !reason)
        abort ();                       /* bounded and whole disagree */
    if (rc == KF_PROTO_OK && (strcmp (got->type, msg->type) || !json_equal (got->body, msg->body)
                              || zmsg_size (got->frames) != zmsg_size (msg->frames)))
        abort ();
    if (routing && !route)
        abort ();                       /* no routing id to answer with */
    kf_msg_destroy (&got);
    zframe_destroy (&route);
    /* In step: a marker sent after is the next thing read. */
    zstr_send (out, "marker");
    char *marker = zstr_recv (in);
    if (!marker || strcmp (marker, "marker"))
        abort ();
    zstr_free (&marker);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool routing = data[0] & 1, topic = data[0] & 2;
    kf_endpoint_t ep = (kf_endpoint_t) ((data[0] >> 2) % (KF_EP_ANY + 1));
    zmsg_t *zmsg = s_frames (data + 1, size - 1);
    zmsg_t *sent = zmsg_dup (zmsg);
    zframe_t *route = NULL;
    kf_msg_t *msg = NULL;
    const char *reason = NULL;
    kf_proto_rc_t rc = kf_msg_decode (&zmsg, ep, S_MAX_MESSAGE, routing, topic,
                                      routing ? &route : NULL, &msg, &reason);
    if (zmsg)
        abort ();                       /* decode always consumes */
    if (!reason || (rc == KF_PROTO_OK) != (msg != NULL))
        abort ();
    if (strcmp (kf_proto_rc_name (rc), "none") == 0 && rc != KF_PROTO_NOMSG)
        abort ();
    s_check_recv (sent, ep, routing, topic, rc, msg);
    zmsg_destroy (&sent);
    if (rc == KF_PROTO_OK) {
        /* The accessors on whatever the body holds. */
        kf_msg_int (msg, "job_id", 0);
        kf_msg_str (msg, "worker_id");
        for (size_t i = 0; i <= kf_msg_frame_count (msg); i++)
            kf_msg_frame (msg, i);
        /* Round trip: what we decoded, re-encoded, decodes to the same. */
        char type[KF_PROTO_MAX_TYPE + 1];
        memcpy (type, msg->type, sizeof type);
        json_t *body = json_deep_copy (msg->body);
        zmsg_t *frames = zmsg_dup (msg->frames);
        zmsg_t *again = kf_msg_encode (&msg, route, topic ? "t/" : NULL);
        if (!again)
            abort ();                   /* a body we parsed must serialise */
        zframe_t *route2 = NULL;
        kf_msg_t *msg2 = NULL;
        /* Re-encoding may grow the body (escapes): allow for that. */
        rc = kf_msg_decode (&again, ep, SIZE_MAX, routing, topic, routing ? &route2 : NULL,
                            &msg2, &reason);
        if (rc != KF_PROTO_OK || strcmp (msg2->type, type) || !json_equal (msg2->body, body)
            || zmsg_size (msg2->frames) != zmsg_size (frames))
            abort ();
        for (zframe_t *a = zmsg_first (frames), *b = zmsg_first (msg2->frames); a;
             a = zmsg_next (frames), b = zmsg_next (msg2->frames))
            if (!zframe_eq (a, b))
                abort ();
        if (routing && (!route2 || !zframe_eq (route, route2)))
            abort ();
        kf_msg_destroy (&msg2);
        zframe_destroy (&route2);
        zmsg_destroy (&frames);
        json_decref (body);
    }
    kf_msg_destroy (&msg);
    zframe_destroy (&route);
    return 0;
}
