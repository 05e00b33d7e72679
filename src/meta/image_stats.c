/*
 * meta/image_stats.c - see image_stats.h.  Threads: any.
 */
#include "meta/image_stats.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int32_t
samsa_image_partition_rf(const samsa_image_partition_t *p)
{
    return p->nreplicas - p->nadding;
}

int32_t
samsa_image_topic_min_isr(const samsa_image_topic_t *t, int32_t dflt)
{
    const char  *v = samsa_image_topic_config(t, "min.insync.replicas");
    char        *end = NULL;
    long         n;

    if (v == NULL) {
        return dflt;
    }
    n = strtol(v, &end, 10);
    return end != v && *end == '\0' && n >= 1 && n <= INT32_MAX
           ? (int32_t) n : dflt;
}

bool
samsa_image_partition_under_replicated(const samsa_image_partition_t *p,
                                       int32_t node_id)
{
    return p->leader == node_id && p->nisr < samsa_image_partition_rf(p);
}

/* One partition of topic t (min_isr its min.insync.replicas). */
static void
stats_partition(const samsa_image_partition_t *p, int32_t node_id,
                int32_t min_isr, samsa_image_stats_t *out)
{
    out->global_partitions++;
    out->offline += p->leader < 0;
    out->preferred_imbalance += p->leader >= 0 && p->nreplicas > 0
                                && p->leader != p->replicas[0];
    out->partitions += samsa_image_ids_has(p->replicas, p->nreplicas,
                                           node_id);
    if (p->leader != node_id) {
        return;
    }
    out->leaders++;
    out->under_replicated += samsa_image_partition_under_replicated(p,
                                                                    node_id);
    out->under_min_isr += p->nisr < min_isr;
    out->at_min_isr += p->nisr == min_isr;
}

void
samsa_image_stats(const samsa_image_t *img, int32_t node_id,
                  int32_t dflt_min_isr, samsa_image_stats_t *out)
{
    const samsa_image_topic_t   *t;
    const samsa_image_broker_t  *br;
    size_t                       i;
    int32_t                      j, min_isr;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < samsa_image_topic_count(img); i++) {
        t = samsa_image_topic_at(img, i);
        out->topics++;
        min_isr = samsa_image_topic_min_isr(t, dflt_min_isr);
        for (j = 0; j < t->npartitions; j++) {
            stats_partition(&t->partitions[j], node_id, min_isr, out);
        }
    }
    for (i = 0; i < samsa_image_broker_count(img); i++) {
        br = samsa_image_broker_at(img, i);
        out->fenced_brokers += br->fenced;
        out->active_brokers += !br->fenced;
    }
}
