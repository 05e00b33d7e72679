/*
 * util/idtab.h - a table of refcounted items keyed by a string id, kept
 * sorted for binary search (the group coordinator's groups, the
 * transaction coordinator's transactional ids).  The table holds one ref
 * on each item; get and snapshot hand out refs of their own.
 * Threads: any; the table's mutex guards items, n and cap.  The item's
 * callbacks are called with it held, so they must not take it again.
 */
#ifndef SAMSA_UTIL_IDTAB_H
#define SAMSA_UTIL_IDTAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/slice.h"

typedef struct samsa_idtab_ops {
    const char *(*id_of)(const void *item);     /* the key, NUL-terminated */
    void        (*ref)(void *item);
    void        (*unref)(void *item);
    void       *(*make)(void *arg, samsa_slice_t id);   /* with one ref */
} samsa_idtab_ops_t;

typedef struct samsa_idtab {
    const samsa_idtab_ops_t  *ops;  /* [const] */
    void                     *arg;  /* [const] make's first argument */
    pthread_mutex_t           lock; /* guards every field below */
    void                    **items;    /* sorted by id; one ref each */
    size_t                    n;
    size_t                    cap;
} samsa_idtab_t;

void samsa_idtab_init(samsa_idtab_t *t, const samsa_idtab_ops_t *ops,
                      void *arg);
/* Drops the table's refs and frees the table (not t itself). */
void samsa_idtab_fini(samsa_idtab_t *t);

/* The item with id (a NULL ptr reads as ""), with a ref for the caller;
 * with create, one is made (ops->make) and put in when there is none;
 * else NULL. */
void *samsa_idtab_get(samsa_idtab_t *t, samsa_slice_t id, bool create);
/* Takes item out of the table if it is there; true when it was, and the
 * table's ref is then the caller's to drop (outside any lock it holds). */
bool samsa_idtab_remove(samsa_idtab_t *t, void *item);
/* Takes out, and drops the table's ref on, every item that pred says
 * goes (called with the table lock held); returns how many went. */
size_t samsa_idtab_drop_if(samsa_idtab_t *t,
                           bool (*pred)(void *item, void *ctx), void *ctx);
/* A NULL-terminated copy of the items, a ref on each; *n is the count.
 * The caller unrefs each and frees the array. */
void **samsa_idtab_snapshot(samsa_idtab_t *t, size_t *n);
size_t samsa_idtab_count(samsa_idtab_t *t);

#endif
