/*  kf_auth.h - who may talk to the coordinator over TCP.
 *
 *  The coordinator's own certificate makes its tcp:// sockets CURVE servers;
 *  a ZAP handler answered from the coordinator's loop admits a client's
 *  public key only when a certificate with that key lies in the allow-list
 *  folder. The folder is re-read when it changes (and at least every two
 *  seconds when handshakes arrive), so adding or removing a key file takes
 *  effect without a restart. A refused peer gets nothing from the
 *  application; each refusal is counted for the status snapshot.
 */
#ifndef KF_AUTH_H
#define KF_AUTH_H

#include <czmq.h>
#include <jansson.h>

typedef struct kf_auth_t kf_auth_t;

/* Loads CERT_PATH (the coordinator's secret certificate) and the folder
 * ALLOW_DIR, and binds the ZAP handler (one per process). Returns NULL
 * with *ERR (caller frees) on failure. */
kf_auth_t *kf_auth_new (const char *cert_path, const char *allow_dir, char **err);
void kf_auth_destroy (kf_auth_t **self_p);

/* Makes SOCK a CURVE server with our certificate; call before binding. */
void kf_auth_secure (kf_auth_t *self, zsock_t *sock);

/* The ZAP socket, for the caller's poll. */
void *kf_auth_socket (kf_auth_t *self);

/* Answers every waiting ZAP request. */
void kf_auth_handle (kf_auth_t *self);

/* {public_key, allow_dir, allowed_keys, accepted, denied, last_denied}. */
json_t *kf_auth_status (kf_auth_t *self);

/* Handshakes refused so far. */
long kf_auth_denied (const kf_auth_t *self);

#endif
