/*  kf_take.h - taking an object out of its holder.
 *
 *  Every class's destroy takes a T ** so it can leave NULL behind
 *  (STYLE.md: "an idempotent kf_foo_destroy(kf_foo_t **self_p) that nulls
 *  the caller's pointer"). KF_TAKE is that step written once:
 *
 *      void
 *      kf_foo_destroy (kf_foo_t **self_p)
 *      {
 *          kf_foo_t *self = KF_TAKE (self_p);
 *          if (self) {
 *              ...members...
 *              free (self);
 *          }
 *      }
 *
 *  The holder is emptied before anything is freed, so a second destroy,
 *  or code the teardown reaches that looks at the holder, finds NULL
 *  rather than an object half gone.
 *
 *  A struct held by value (a reply, a build, reference data) is emptied
 *  by its clear instead: KF_CLEAR frees the members it owns and zeroes
 *  the rest, so a cleared struct reads as a new one and a second clear
 *  frees nothing twice:
 *
 *      void
 *      kf_foo_clear (kf_foo_t *foo)
 *      {
 *          json_decref (foo->json);      // members freed otherwise first
 *          KF_CLEAR (foo, foo->name, foo->data);
 *      }
 */
#ifndef KF_TAKE_H
#define KF_TAKE_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Returns *HOLDER_P and leaves NULL there; NULL when HOLDER_P is NULL or
 * holds nothing. HOLDER_P is evaluated once; its type gives the result's
 * (a kf_foo_t ** yields a kf_foo_t *). */
#define KF_TAKE(holder_p)                                                    \
    __extension__ ({                                                         \
        __typeof__ (holder_p) kf_take_holder_ = (holder_p);                  \
        __typeof__ (*kf_take_holder_) kf_take_taken_ = NULL;                 \
        if (kf_take_holder_) {                                               \
            kf_take_taken_ = *kf_take_holder_;                               \
            *kf_take_holder_ = NULL;                                         \
        }                                                                    \
        kf_take_taken_;                                                      \
    })

/* Frees the N blocks at PTRS (NULL ones are skipped, as free skips them). */
static inline void
kf_free_each (void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free (ptrs[i]);
}

/* Frees each of the members listed after P (heap blocks *P owns; all are
 * read before any is freed), then zeroes *P. */
#define KF_CLEAR(p, ...)                                                     \
    do {                                                                     \
        kf_free_each ((void *const[]) { __VA_ARGS__ },                       \
                      sizeof ((void *const[]) { __VA_ARGS__ }) / sizeof (void *)); \
        memset ((p), 0, sizeof *(p));                                        \
    } while (0)

#endif
