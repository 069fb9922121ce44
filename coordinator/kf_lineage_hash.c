/*  kf_lineage_hash.c - a source's normalised hash, and whether a run has
 *  built the same source already (kf_lineage.h): sources that differ in
 *  comments and spacing alone are one kernel, and are not compiled and
 *  timed twice.
 */
#include "kf_lineage.h"
#include "kf_hash.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

//  Whether the comment TEXT (N bytes) carries a directive the toolchain
//  reads (kf-tune:, kf-launch:, kf-scratch:): then it is not a comment to
//  drop, since two sources that differ there build different kernels.
static bool
s_directive (const char *text, size_t n)
{
    static const char *const names[] = { "kf-tune:", "kf-launch:", "kf-scratch:" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t len = strlen (names[k]);
        for (size_t i = 0; i + len <= n; i++)
            if (!memcmp (text + i, names[k], len))
                return true;
    }
    return false;
}

//  A numeric literal starts at SRC[I]: a digit, or a point before one,
//  that does not continue a name (x2, a1b).
static bool
s_number_at (const char *src, size_t size, size_t i)
{
    char ch = src[i];
    bool digit = ch >= '0' && ch <= '9';
    bool point = ch == '.' && i + 1 < size && src[i + 1] >= '0' && src[i + 1] <= '9';
    if (!digit && !point)
        return false;
    char before = i > 0 ? src[i - 1] : ' ';
    return !(isalnum ((unsigned char) before) || before == '_' || before == '.');
}

//  The normal form kf_lineage_norm_hash and kf_lineage_shape_hash hash:
//  with NUMBERS, every numeric literal (1, 0x1f, 2.5e-3f, .5) as '#'.
static void
s_norm_hash (const char *src, size_t size, bool numbers, char out[65])
{
    char *buf = malloc (size + 1);
    if (!buf) {
        kf_sha256_hex (src, size, out);
        return;
    }
    size_t n = 0;
    bool space = false;
    for (size_t i = 0; i < size; ) {
        char ch = src[i];
        if (ch == '/' && i + 1 < size && (src[i + 1] == '/' || src[i + 1] == '*')) {
            size_t start = i;
            if (src[i + 1] == '/')
                while (i < size && src[i] != '\n')
                    i++;
            else {
                i += 2;
                while (i + 1 < size && !(src[i] == '*' && src[i + 1] == '/'))
                    i++;
                i = i + 2 < size ? i + 2 : size;
            }
            if (!s_directive (src + start, i - start)) {
                space = true;
                continue;
            }
            //  A directive is code: kept, its spacing collapsed.
            if (space && n > 0)
                buf[n++] = ' ';
            space = false;
            for (size_t k = start; k < i; k++) {
                bool white = isspace ((unsigned char) src[k]);
                if (white && n > 0 && buf[n - 1] == ' ')
                    continue;
                //  A directive's values are numbers too (kf-tune: KC=64,128).
                if (numbers && s_number_at (src, i, k)) {
                    buf[n++] = '#';
                    while (k + 1 < i && (isalnum ((unsigned char) src[k + 1]) || src[k + 1] == '.'))
                        k++;
                    continue;
                }
                buf[n++] = white ? ' ' : src[k];
            }
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
            space = true;
            i++;
            continue;
        }
        if (space && n > 0)
            buf[n++] = ' ';
        space = false;
        if (numbers && s_number_at (src, size, i)) {
            buf[n++] = '#';
            for (i++; i < size; i++) {
                char c = src[i], p = src[i - 1];
                bool sign = (c == '+' || c == '-')
                            && (p == 'e' || p == 'E' || p == 'p' || p == 'P');
                if (!(isalnum ((unsigned char) c) || c == '.' || sign))
                    break;
            }
            continue;
        }
        if (ch == '"' || ch == '\'') {
            //  A literal as it is, escapes included.
            buf[n++] = src[i++];
            while (i < size && src[i] != ch && src[i] != '\n') {
                if (src[i] == '\\' && i + 1 < size)
                    buf[n++] = src[i++];
                buf[n++] = src[i++];
            }
            if (i < size && src[i] == ch)
                buf[n++] = src[i++];
            continue;
        }
        buf[n++] = src[i++];
    }
    kf_sha256_hex (buf, n, out);
    free (buf);
}

void
kf_lineage_norm_hash (const char *src, size_t size, char out[65])
{
    s_norm_hash (src, size, false, out);
}

void
kf_lineage_shape_hash (const char *src, size_t size, char out[65])
{
    s_norm_hash (src, size, true, out);
}

json_t *
kf_lineage_duplicate (kf_db_t *db, int64_t run_id, int64_t cand_id, const char *norm_hash,
                      bool *failed)
{
    char run[24], cand[24];
    const char *params[3] = { S_I64 (run, run_id), norm_hash, S_I64 (cand, cand_id) };
    /* The original rather than one of its repeats; a repeat still waiting
     * for it is found when nothing else has the hash, and the chain
     * resolves when it does. */
    return kf_db_row (db,
                      "SELECT id, status, speedup, verdict_detail AS detail, fidelity,"
                      " finished_at IS NOT NULL AS finished"
                      " FROM candidates WHERE run_id = $1 AND norm_hash = $2 AND id <> $3"
                      /* A tuning candidate is swept, a search one is not
                       * (unless the run tunes every candidate): a verdict
                       * is only worth as much as the build it judged. */
                      " AND phase = (SELECT phase FROM candidates WHERE id = $3)"
                      " ORDER BY (duplicate_of IS NULL) DESC, id LIMIT 1",
                      3, params, failed);
}
