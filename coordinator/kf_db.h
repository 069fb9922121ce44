/*  kf_db.h - the one module that talks to PostgreSQL.
 *
 *  Every statement is parameterised (PQexecParams); rows come back as JSON
 *  objects keyed by column name, typed by the column's type (integers,
 *  floats, booleans, json/jsonb parsed, NULL as null), so callers never
 *  touch libpq. A lost connection is detected (SQLSTATE class 08 or a bad
 *  connection status), reported as -1, and re-established on the next call
 *  with capped, jittered backoff; nothing is retried silently, because a
 *  statement inside a failed transaction must not be replayed alone.
 */
#ifndef KF_DB_H
#define KF_DB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kf_db_t kf_db_t;

/* New handle for CONNINFO (a libpq URL or key=value string; never logged).
 * Does not connect yet. */
kf_db_t *kf_db_new (const char *conninfo);
void kf_db_destroy (kf_db_t **self_p);

/* Limits on every wait for the server, applied from the next connection:
 * CONNECT_S for a connection attempt (libpq connect_timeout), STATEMENT_MS
 * for one statement (the server's statement_timeout; 0: none), and TCP
 * keepalives with a user timeout so a server that vanished without a word
 * is noticed in about KEEPALIVE_S (0: the system's defaults). Values the
 * connection string sets itself win. Defaults: 5 s, 60 s, 30 s. */
void kf_db_set_limits (kf_db_t *self, int connect_s, int statement_ms, int keepalive_s);

/* Connects if not connected, waiting up to WAIT_MS with backoff (0: one
 * attempt). Returns 0 when connected. */
int kf_db_connect (kf_db_t *self, int wait_ms);
bool kf_db_connected (kf_db_t *self);

/* Applies the numbered migrations not yet applied, under an advisory lock
 * so several coordinators starting at once do it once. */
int kf_db_migrate (kf_db_t *self);

/* Runs SQL with N text parameters (NULL entries are SQL NULL). Returns an
 * array of row objects (caller's), or NULL on error. */
json_t *kf_db_query (kf_db_t *self, const char *sql, int n,
                     const char *const *params);
/* As kf_db_query, returning the first row (caller's) or NULL when there is
 * none or on error; *FAILED tells which. */
json_t *kf_db_row (kf_db_t *self, const char *sql, int n,
                   const char *const *params, bool *failed);
/* Runs SQL; returns the number of rows affected, or -1. */
long kf_db_exec (kf_db_t *self, const char *sql, int n,
                 const char *const *params);
/* The same for the commonest statement, whose one parameter $1 is an id
 * (a run's, a candidate's, a job's). */
json_t *kf_db_query_id (kf_db_t *self, const char *sql, int64_t id);

/* A json or jsonb column's TEXT as JSON (any value; JSON null where it
 * does not parse): a number past a 64-bit integer's range, which jsonb
 * writes out in full (1e308 as 309 digits), is read as a real. */
json_t *kf_db_json_parse (const char *text);
json_t *kf_db_row_id (kf_db_t *self, const char *sql, int64_t id, bool *failed);
long kf_db_exec_id (kf_db_t *self, const char *sql, int64_t id);
/* Runs SQL with one binary parameter (a bytea) after N-1 text ones: the
 * binary one is the last. Returns rows affected or -1. */
long kf_db_exec_blob (kf_db_t *self, const char *sql, int n,
                      const char *const *params, const void *blob,
                      size_t blob_size);
/* Reads one bytea column of one row: *DATA is the caller's (free). */
int kf_db_fetch_blob (kf_db_t *self, const char *sql, const char *param,
                      void **data, size_t *size);

/* Runs a constant SQL script of several statements, without parameters
 * (migrations only). Returns 0 or -1. */
int kf_db_exec_script (kf_db_t *self, const char *sql);

int kf_db_begin (kf_db_t *self);
int kf_db_commit (kf_db_t *self);
void kf_db_rollback (kf_db_t *self);

/* LISTENs on CHANNEL now and after every reconnect. */
int kf_db_listen (kf_db_t *self, const char *channel);
/* The connection's socket for a poll loop, or -1 while disconnected. */
int kf_db_socket (kf_db_t *self);
/* Reads what the server sent; true when a notification arrived. */
bool kf_db_notified (kf_db_t *self);

/* The last error text (no connection secrets), and statements run. */
const char *kf_db_error (kf_db_t *self);
long kf_db_statements (kf_db_t *self);
/* Distinct statement texts prepared on this connection: a handful when
 * every value travels as a parameter (a value printed into the text would
 * make one per value, until the cache's cap). */
long kf_db_prepared (kf_db_t *self);

/* SQL for timestamp column COL (a string literal) as text in ISO 8601,
 * UTC, to the second ("2026-12-02T04:23:15Z"): what the coordinator
 * sends people and programs (PROTOCOL.md, "Run objects"). NULL stays
 * NULL. */
#define KF_DB_ISO(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

#endif
