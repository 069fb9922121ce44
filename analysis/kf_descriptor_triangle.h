/*  kf_descriptor_triangle.h - whether a kernel's loops walk one triangle of a
 *  square iteration space: the code's reading of the symmetric product's
 *  "diagonal and one triangle" idea (KF_IDEA_TRIANGLE), and on the
 *  algorithm axis a reformulation (kf_descriptor.c).
 *
 *  Rounds 42 and 43 of the model in the loop: one generation of
 *  x @ x.t() handed cache blocking to the triangle kernel and the
 *  triangle to the blocked full product, and both came back as one
 *  kernel: with no feature for the triangle, the planner could not see
 *  the two ideas crossed (kf_search_idea.c, s_converges).
 */
#ifndef KF_DESCRIPTOR_TRIANGLE_H
#define KF_DESCRIPTOR_TRIANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether CODE (comments and strings blanked) holds a loop nested in
 * another's range that starts at the outer loop's index and runs to the
 * same bound (`for (i = 0; i < n; ...) for (j = i; j < n; ...)`), or
 * stops at it (`for (j = 0; j <= i; ...)`, or `j < i` where both step by
 * one block size, not by ones); the outer one is any loop
 * of CODE before it, by its index's name; or one that starts at a name
 * the code tests it against for (in)equality, the diagonal's test (`for
 * (J = I; ...)` beside `if (I != J)`). A block's inner loop (`for (j
 * = jb; j < je; ...)`, its bound another name) is not one. SNIP (SIZE
 * bytes; may be NULL) gets the loop's header, white space squeezed. */
bool kf_descriptor_triangle (const char *code, char *snip, size_t size);

/* The descriptors' words for such loops (kf_descriptor.c's rule on the
 * host, whose explanation the planner's reading takes). */
#define KF_DESCRIPTOR_TRIANGLE_LABEL                                                       \
    "one triangle of a symmetric product (loops that walk the diagonal and one side of it)"

#endif
