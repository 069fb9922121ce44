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
 */
#ifndef KF_TAKE_H
#define KF_TAKE_H

#include <stddef.h>

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

#endif
