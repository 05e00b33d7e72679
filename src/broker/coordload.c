/*
 * broker/coordload.c - replaying a coordinator's internal topic.
 * Threads: main, at load.
 */
#include "broker/coordload.h"

#include <stdio.h>
#include <string.h>

#include "broker/coordtopic.h"
#include "meta/image.h"
#include "util/diag.h"

typedef struct coordload_scan {
    const char                   *topic;
    int32_t                       partition;
    const samsa_coordload_ops_t  *ops;
    void                         *ctx;
} coordload_scan_t;

int32_t
samsa_coordload_npartitions(samsa_meta_t *meta, const char *topic)
{
    samsa_image_t              *img = samsa_meta_image_get(meta);
    const samsa_image_topic_t  *t;
    int32_t                     np;

    t = samsa_image_topic_find(img, topic, strlen(topic));
    np = t != NULL ? t->npartitions : 0;
    samsa_image_put(img);
    return np;
}

/* Replay the batches in buf (len bytes); returns the offset after the
 * last whole batch (from if none). */
static int64_t
coordload_batches(void *arg, const uint8_t *buf, size_t len, int64_t from)
{
    coordload_scan_t   *sc = arg;
    samsa_batch_hdr_t   hdr;
    samsa_record_it_t   it;
    samsa_record_t      rec;
    size_t              at = 0, size;
    int64_t             next = from;

    while (at < len && samsa_batch_parse(buf + at, len - at, &hdr)
                           == SAMSA_ERR_NONE) {
        size = samsa_batch_size(&hdr);
        if (size > len - at) {
            break;
        }
        if (samsa_batch_codec(&hdr) != 0) {
            samsa_warn("%s: skipping a compressed batch at offset %lld",
                       sc->topic, (long long) hdr.BaseOffset);
        } else if (samsa_batch_is_control(&hdr)) {
            if (sc->ops->control != NULL) {
                sc->ops->control(sc->ctx, sc->partition, &hdr, buf + at,
                                 size);
            }
        } else {
            samsa_record_it_init(&it, buf + at, size);
            while (samsa_record_it_next(&it, &rec)) {
                sc->ops->record(sc->ctx, sc->partition, &hdr, &rec);
            }
        }
        next = samsa_batch_last_offset(&hdr) + 1;
        at += size;
    }
    return next;
}

samsa_err_t
samsa_coordload_scan(samsa_logmgr_t *logs, samsa_meta_t *meta,
                     const samsa_config_kraft_t *kraft, int32_t node_id,
                     const char *topic, int32_t np,
                     int32_t chunk_bytes, const samsa_coordload_ops_t *ops,
                     void *ctx, char *errstr, size_t errstr_size)
{
    coordload_scan_t  sc = { topic, 0, ops, ctx };
    samsa_plog_t     *plog;
    samsa_err_t       err = SAMSA_ERR_NONE;

    for (sc.partition = 0; sc.partition < np && err == SAMSA_ERR_NONE;
         sc.partition++) {
        if (samsa_coordtopic_owner_check(meta, NULL, kraft, node_id, topic,
                                         sc.partition) != SAMSA_ERR_NONE) {
            continue;           /* another broker coordinates its keys */
        }
        plog = samsa_logmgr_plog_ref(logs, topic, sc.partition);
        if (plog == NULL) {
            continue;
        }
        err = samsa_plog_scan(plog, chunk_bytes, coordload_batches, &sc);
        if (err != SAMSA_ERR_NONE) {
            snprintf(errstr, errstr_size, "cannot load %s-%d: %s", topic,
                     (int) sc.partition, samsa_err_name(err));
        }
        samsa_plog_unref(plog);
    }
    return err;
}
