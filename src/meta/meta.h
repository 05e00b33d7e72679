/*
 * meta/meta.h - where the current metadata image is published: the
 * controller publishes each new image here, handler threads read the
 * current one, and change listeners (the broker's log manager) hear of
 * every change.  In Kafka terms this is the broker's MetadataPublisher
 * side of the metadata loader, fed in-process by the controller.
 *
 * Threads: samsa_meta_image_get() from any thread, lock-free and
 * wait-free for practical purposes: a reader never waits for the writer,
 * and the writer only waits for readers that are inside the few
 * instructions between loading the pointer and counting their reference
 * (epoch-based reclamation with two counters, see meta.c).  Publishing is
 * done by one thread at a time (the controller thread).  Listeners are
 * added by main before the controller starts.
 * Ownership: the samsa_meta_t owns one reference to the current image;
 * each samsa_meta_image_get() returns another, which the caller releases
 * with samsa_image_put().
 */
#ifndef SAMSA_META_META_H
#define SAMSA_META_META_H

#include "meta/image.h"

typedef struct samsa_meta samsa_meta_t;

/* A change listener: old_img was current, new_img is now.  Both are
 * borrowed for the call (take a reference to keep one).  Called on the
 * publishing thread, in publication order, with no lock held; it may read
 * images and do I/O (create or delete partition logs) but must not call
 * the controller (the controller thread is the caller).  The first call
 * is the start-up one: old_img is the empty image, new_img the one
 * replayed from the metadata log. */
typedef void samsa_meta_listener_fn(void *ctx, const samsa_image_t *old_img,
                                    const samsa_image_t *new_img);

#define SAMSA_META_LISTENERS_MAX  8

/* A publication point holding the empty image.  @thread main */
samsa_meta_t *samsa_meta_new(void);

/* Free meta and its reference to the current image; readers may still
 * hold theirs.  No reader may call samsa_meta_image_get() after this.
 * NULL is a no-op.  @thread main */
void samsa_meta_free(samsa_meta_t *meta);

/* Add a listener (at most SAMSA_META_LISTENERS_MAX), called from the next
 * publication on.  @thread main, before the controller opens */
void samsa_meta_listen(samsa_meta_t *meta, samsa_meta_listener_fn *fn,
                       void *ctx);

/* The current image, with a reference the caller releases with
 * samsa_image_put().  Never NULL.  @thread any (lock-free) */
samsa_image_t *samsa_meta_image_get(samsa_meta_t *meta);

/* Make img current (@owns img), release the previous one once no reader
 * can still be about to take a reference to it, then call the listeners
 * with (previous, img).  @thread the one publisher (controller) */
void samsa_meta_publish(samsa_meta_t *meta, samsa_image_t *img);

#endif /* SAMSA_META_META_H */
