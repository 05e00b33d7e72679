/*
 * util/idtab.c - a sorted table of refcounted items keyed by id.
 * Threads: any; the table lock guards the array.
 */
#include "util/idtab.h"

#include <string.h>

#include "util/alloc.h"
#include "util/locked.h"

void
samsa_idtab_init(samsa_idtab_t *t, const samsa_idtab_ops_t *ops, void *arg)
{
    memset(t, 0, sizeof(*t));
    t->ops = ops;
    t->arg = arg;
    pthread_mutex_init(&t->lock, NULL);
}

void
samsa_idtab_fini(samsa_idtab_t *t)
{
    size_t  i;

    for (i = 0; i < t->n; i++) {
        t->ops->unref(t->items[i]);
    }
    samsa_free(t->items);
    t->items = NULL;
    t->n = t->cap = 0;
    pthread_mutex_destroy(&t->lock);
}

/* Index of key in the sorted table, or where it would go.  @locks table */
static size_t
idtab_find(const samsa_idtab_t *t, samsa_slice_t key, bool *found)
{
    size_t  lo = 0, hi = t->n, mid;
    int     c;

    *found = false;
    while (lo < hi) {
        mid = (lo + hi) / 2;
        c = samsa_slice_cmp_cstr(t->ops->id_of(t->items[mid]), key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

void *
samsa_idtab_get(samsa_idtab_t *t, samsa_slice_t id, bool create)
{
    void    *item = NULL;
    size_t   at;
    bool     found;

    if (id.ptr == NULL) {
        id = (samsa_slice_t) { "", 0 };
    }
    pthread_mutex_lock(&t->lock);
    at = idtab_find(t, id, &found);
    if (found) {
        item = t->items[at];
    } else if (create) {
        item = t->ops->make(t->arg, id);        /* the table's ref */
        if (t->n == t->cap) {
            t->cap = t->cap == 0 ? 16 : t->cap * 2;
            t->items = samsa_realloc(t->items, t->cap * sizeof(*t->items));
        }
        memmove(&t->items[at + 1], &t->items[at],
                (t->n - at) * sizeof(*t->items));
        t->items[at] = item;
        t->n++;
    }
    if (item != NULL) {
        t->ops->ref(item);
    }
    pthread_mutex_unlock(&t->lock);
    return item;
}

bool
samsa_idtab_remove(samsa_idtab_t *t, void *item)
{
    const char  *id = t->ops->id_of(item);
    size_t       at;
    bool         found;

    pthread_mutex_lock(&t->lock);
    at = idtab_find(t, (samsa_slice_t) { id, strlen(id) }, &found);
    found = found && t->items[at] == item;  /* not a newer one of that id */
    if (found) {
        memmove(&t->items[at], &t->items[at + 1],
                (t->n - at - 1) * sizeof(*t->items));
        t->n--;
    }
    pthread_mutex_unlock(&t->lock);
    return found;
}

size_t
samsa_idtab_drop_if(samsa_idtab_t *t, bool (*pred)(void *item, void *ctx),
                    void *ctx)
{
    size_t  i = 0, dropped = 0;
    void   *item;

    pthread_mutex_lock(&t->lock);
    while (i < t->n) {
        item = t->items[i];
        if (pred(item, ctx)) {
            memmove(&t->items[i], &t->items[i + 1],
                    (t->n - i - 1) * sizeof(*t->items));
            t->n--;
            t->ops->unref(item);
            dropped++;
            continue;
        }
        i++;
    }
    pthread_mutex_unlock(&t->lock);
    return dropped;
}

void **
samsa_idtab_snapshot(samsa_idtab_t *t, size_t *n)
{
    void   **out;
    size_t   i;

    pthread_mutex_lock(&t->lock);
    out = samsa_calloc(t->n + 1, sizeof(*out));
    for (i = 0; i < t->n; i++) {
        out[i] = t->items[i];
        t->ops->ref(out[i]);
    }
    *n = t->n;
    pthread_mutex_unlock(&t->lock);
    return out;
}

size_t
samsa_idtab_count(samsa_idtab_t *t)
{
    return SAMSA_LOCKED_READ(&t->lock, t->n);
}
