/*  kf_curve.h - CURVE on the client side of a TCP endpoint, the rule for
 *  which endpoints need it, and the certificate pairs both sides load.
 *
 *  Workers and kfctl connect with their own certificate (a czmq secret
 *  certificate file, as `kfctl keygen` writes it) and the coordinator's
 *  public key. ipc:// and inproc:// never need keys (file permissions guard
 *  them); tcp:// to a loopback address may go plain; tcp:// beyond the host
 *  goes plain only when the operator says so (allow_plain_tcp), with a
 *  warning. The coordinator's side (the allow-list) is coordinator/kf_auth.
 */
#ifndef KF_CURVE_H
#define KF_CURVE_H

#include <czmq.h>
#include <stdbool.h>

typedef enum {
    KF_SCOPE_LOCAL,      /* ipc://, inproc:// */
    KF_SCOPE_LOOPBACK,   /* tcp:// to 127.0.0.0/8, ::1 or localhost */
    KF_SCOPE_REMOTE      /* any other tcp:// (and anything unrecognised) */
} kf_scope_t;

kf_scope_t kf_curve_scope (const char *endpoint);

/* Prepares SOCK, before it connects to ENDPOINT: with CERT_PATH (own secret
 * certificate) and SERVER_KEY (the coordinator's public certificate file,
 * or its 40-character Z85 public key) on a tcp:// endpoint, turns CURVE
 * on. Without keys, a remote endpoint is refused unless ALLOW_PLAIN.
 * Returns 0, or -1 with *ERR (caller frees). */
int kf_curve_client_apply (zsock_t *sock, const char *endpoint, const char *cert_path,
                           const char *server_key, bool allow_plain, char **err);

/* The Z85 public key in KEY_OR_PATH (a key itself, or a certificate file)
 * into OUT (41 bytes). Returns 0, or -1 with *ERR. */
int kf_curve_public_key (const char *key_or_path, char out[41], char **err);

/* A certificate pair, as `kfctl keygen` makes it for a coordinator, a
 * worker or a user: creates DIR (mode 0700) if needed and writes NAME
 * (public) and NAME_secret (mode 0600) there. Returns 0, or -1 with *ERR.
 * Prints nothing; *PUBLIC_TXT (41 bytes) gets the key. */
int kf_curve_keygen (const char *dir, const char *name, char public_txt[41], char **err);

#endif
