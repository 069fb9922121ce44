/*  kf_hash.c - SHA-256 (FIPS 180-4), for content addressing.
 *
 *  Sources, artifacts and tasks are named by their digest, so the worker
 *  and the coordinator must agree bit for bit; a small self-contained
 *  implementation keeps that independent of which crypto library a host
 *  happens to have. Speed is not a concern: inputs are a few megabytes.
 */
#include "kf_hash.h"

#include <stdint.h>
#include <string.h>

static const uint32_t s_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

//  Processes one 64-byte block into the running state H.
static void
s_block (uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t) p[4 * t] << 24 | (uint32_t) p[4 * t + 1] << 16
             | (uint32_t) p[4 * t + 2] << 8 | (uint32_t) p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ROTR (w[t - 15], 7) ^ ROTR (w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ROTR (w[t - 2], 17) ^ ROTR (w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = ROTR (e, 6) ^ ROTR (e, 11) ^ ROTR (e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + s_k[t] + w[t];
        uint32_t S0 = ROTR (a, 2) ^ ROTR (a, 13) ^ ROTR (a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void
kf_sha256_hex (const void *data, size_t size, char out[65])
{
    uint32_t h[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
    };
    const uint8_t *p = data;
    size_t left = size;
    while (left >= 64) {
        s_block (h, p);
        p += 64;
        left -= 64;
    }
    //  Padding: a 1 bit, zeros, then the message length in bits as a
    //  64-bit big-endian number, ending on a block boundary.
    uint8_t tail[128];
    memset (tail, 0, sizeof tail);
    if (left)
        memcpy (tail, p, left);
    tail[left] = 0x80;
    size_t tail_len = left + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t) size * 8;
    for (int i = 0; i < 8; i++)
        tail[tail_len - 1 - i] = (uint8_t) (bits >> (8 * i));
    s_block (h, tail);
    if (tail_len == 128)
        s_block (h, tail + 64);

    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            uint8_t byte = (uint8_t) (h[i] >> (24 - 8 * j));
            out[8 * i + 2 * j] = hex[byte >> 4];
            out[8 * i + 2 * j + 1] = hex[byte & 15];
        }
    out[64] = 0;
}
