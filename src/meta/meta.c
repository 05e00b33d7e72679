/*
 * meta/meta.c - see meta.h.
 *
 * A reader must count its reference to the current image before the
 * publisher can drop the meta's own reference to it: an atomic pointer
 * plus a refcount alone would let the publisher free an image between a
 * reader's load and its increment.  The classic fix is epoch-based
 * reclamation with two reader counters (as userspace RCU's two phases):
 *
 *   reader:    e = epoch; pins[e & 1]++; if epoch != e, undo and retry;
 *              img = cur; img->refs++; pins[e & 1]--
 *   publisher: old = exchange(cur, new); e = epoch++;
 *              wait while pins[e & 1] != 0; put(old)
 *
 * A reader that saw epoch e (and re-checked it after pinning) is counted
 * in pins[e & 1] before the publisher that moves the epoch from e flips
 * it, so that publisher waits for it; readers arriving later use the other
 * counter and can only load the new pointer.  Every operation on epoch,
 * pins and cur is sequentially consistent, which the argument needs (a
 * store-load pattern on both sides).  The publisher's wait covers only
 * readers inside those few instructions, so it is short and bounded.
 */
#include "meta/meta.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util/alloc.h"
#include "util/diag.h"

typedef struct meta_listener {
    samsa_meta_listener_fn  *fn;
    void                    *ctx;
} meta_listener_t;

struct samsa_meta {
    _Atomic(samsa_image_t *)  cur;          /* [atomic] one reference */
    _Atomic uint64_t          epoch;        /* [atomic] bumped per publish */
    _Atomic int64_t           pins[2];      /* [atomic] readers between
                                               loading cur and counting */
    atomic_flag               publishing;   /* [atomic] asserts one
                                               publisher at a time */
    meta_listener_t           listeners[SAMSA_META_LISTENERS_MAX];
    size_t                    nlisteners;   /* [const] after start-up */
};

samsa_meta_t *
samsa_meta_new(void)
{
    samsa_meta_t  *meta = samsa_calloc(1, sizeof(*meta));

    atomic_init(&meta->cur, samsa_image_new_empty());
    atomic_init(&meta->epoch, 0);
    atomic_init(&meta->pins[0], 0);
    atomic_init(&meta->pins[1], 0);
    atomic_flag_clear(&meta->publishing);
    return meta;
}

void
samsa_meta_free(samsa_meta_t *meta)
{
    if (meta == NULL) {
        return;
    }
    samsa_image_put(atomic_load(&meta->cur));
    samsa_free(meta);
}

void
samsa_meta_listen(samsa_meta_t *meta, samsa_meta_listener_fn *fn, void *ctx)
{
    samsa_assert(meta->nlisteners < SAMSA_META_LISTENERS_MAX);
    meta->listeners[meta->nlisteners].fn = fn;
    meta->listeners[meta->nlisteners].ctx = ctx;
    meta->nlisteners++;
}

samsa_image_t *
samsa_meta_image_get(samsa_meta_t *meta)
{
    samsa_image_t  *img;
    uint64_t        e;

    for (;;) {
        e = atomic_load(&meta->epoch);
        atomic_fetch_add(&meta->pins[e & 1], 1);
        if (atomic_load(&meta->epoch) == e) {
            break;
        }
        atomic_fetch_sub(&meta->pins[e & 1], 1);    /* a publish began */
    }
    img = samsa_image_ref(atomic_load(&meta->cur));
    atomic_fetch_sub(&meta->pins[e & 1], 1);        /* release: pairs with
                                                       the publisher's
                                                       load of pins */
    return img;
}

void
samsa_meta_publish(samsa_meta_t *meta, samsa_image_t *img)
{
    samsa_image_t  *old;
    uint64_t        e;
    size_t          i;

    samsa_assert(!atomic_flag_test_and_set(&meta->publishing));
    old = atomic_exchange(&meta->cur, img);
    e = atomic_fetch_add(&meta->epoch, 1);
    while (atomic_load(&meta->pins[e & 1]) != 0) {
        sched_yield();                  /* a reader is mid-get: brief */
    }
    for (i = 0; i < meta->nlisteners; i++) {
        meta->listeners[i].fn(meta->listeners[i].ctx, old, img);
    }
    samsa_image_put(old);
    atomic_flag_clear(&meta->publishing);
}
