/*  kf_descriptor_pack.h - an operand packed into a buffer, read by code.
 */
#ifndef KF_DESCRIPTOR_PACK_H
#define KF_DESCRIPTOR_PACK_H

/* The buffers CODE (a host C source, comments and strings blanked) packs
 * an operand into: a local array without an initialiser, or a float or
 * double pointer set from an allocator, filled element by element from
 * another array read at a position with a product (`wp[k * NP + c] =
 * src[cc * K + k]`), or by vector copies, a store of a load or a memcpy,
 * into it or a pointer set into it (round 51). The first fill's text
 * goes to SNIP (KF_HOST_SNIP bytes). */
int kf_descriptor_packing (const char *code, char *snip);

#endif
