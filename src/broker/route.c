/*
 * broker/route.c - see route.h.  Threads: handler (the image is
 * read-only; the arena is the request's).
 */
#include "broker/route.h"

#include <string.h>

static char *
route_strdup(samsa_arena_t *arena, const char *s)
{
    return s != NULL ? samsa_arena_strndup(arena, s, strlen(s)) : NULL;
}

/* b's node on listener, if it has an endpoint there. */
static bool
route_node(const samsa_image_broker_t *b, const char *listener,
           samsa_arena_t *arena, samsa_route_node_t *out)
{
    const samsa_image_endpoint_t  *ep = samsa_image_broker_endpoint(b,
                                                                    listener);

    if (ep == NULL) {
        return false;
    }
    out->id = b->id;
    out->host = route_strdup(arena, ep->host);
    out->port = ep->port;
    out->rack = route_strdup(arena, b->rack);
    return true;
}

size_t
samsa_route_alive_nodes(const samsa_image_t *img, const char *listener,
                        bool include_fenced, samsa_arena_t *arena,
                        samsa_route_node_t **out)
{
    size_t                       count = samsa_image_broker_count(img);
    size_t                       i, n = 0;
    const samsa_image_broker_t  *b;

    *out = samsa_arena_calloc(arena, count + 1, sizeof(**out));
    for (i = 0; i < count; i++) {
        b = samsa_image_broker_at(img, i);
        if ((!b->fenced || include_fenced)
            && route_node(b, listener, arena, &(*out)[n])) {
            n++;
        }
    }
    return n;
}

bool
samsa_route_alive_node(const samsa_image_t *img, int32_t id,
                       const char *listener, samsa_arena_t *arena,
                       samsa_route_node_t *out)
{
    const samsa_image_broker_t  *b = samsa_image_broker_find(img, id);

    return b != NULL && !b->fenced && route_node(b, listener, arena, out);
}

void
samsa_route_leaders_add(samsa_route_leaders_t *leaders,
                        const samsa_image_t *img, int32_t id,
                        const char *listener, samsa_arena_t *arena)
{
    samsa_route_node_t   node;
    samsa_route_node_t  *grown;
    size_t               i;

    for (i = 0; i < leaders->n; i++) {
        if (leaders->nodes[i].id == id) {
            return;
        }
    }
    if (!samsa_route_alive_node(img, id, listener, arena, &node)) {
        return;
    }
    if (leaders->n == leaders->cap) {
        leaders->cap = leaders->cap * 2 + 4;
        grown = samsa_arena_calloc(arena, leaders->cap, sizeof(*grown));
        if (leaders->n > 0) {
            memcpy(grown, leaders->nodes, leaders->n * sizeof(*grown));
        }
        leaders->nodes = grown;
    }
    leaders->nodes[leaders->n++] = node;
}

samsa_err_t
samsa_route_check(const samsa_image_t *img, const samsa_image_partition_t *p,
                  int32_t self, const char *listener, samsa_arena_t *arena,
                  samsa_route_leaders_t *leaders, int32_t *leader_id,
                  int32_t *leader_epoch)
{
    if (p->leader == self) {
        return SAMSA_ERR_NONE;
    }
    *leader_id = p->leader;
    *leader_epoch = p->leader_epoch;
    if (p->leader >= 0 && leaders != NULL) {
        samsa_route_leaders_add(leaders, img, p->leader, listener, arena);
    }
    return SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
}

samsa_err_t
samsa_route_coordinator(const samsa_image_t *img, const char *topic,
                        int32_t partition, const char *listener,
                        samsa_arena_t *arena, samsa_route_node_t *out)
{
    const samsa_image_topic_t  *t = samsa_image_topic_find(img, topic,
                                                           strlen(topic));

    if (t == NULL || partition < 0 || partition >= t->npartitions
        || t->partitions[partition].leader < 0
        || !samsa_route_alive_node(img, t->partitions[partition].leader,
                                   listener, arena, out)) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    return SAMSA_ERR_NONE;
}
