/*
 * meta/mlog.c - see mlog.h.  The metadata log is a partition log of its
 * own (not in the log manager's registry, which leaves
 * __cluster_metadata-0 alone): opened with a full recovery scan every
 * time (it has no checkpoint, and it is small), read back batch by batch
 * at start, and appended to by the controller one batch per operation,
 * each followed by an fdatasync.
 */
#include "meta/mlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_config.h"
#include "log/plog.h"
#include "proto/batch.h"
#include "proto/recbuild.h"
#include "util/alloc.h"
#include "util/fsutil.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/fault.h"

#define MLOG_TOPIC          "__cluster_metadata"
#define MLOG_READ_BYTES     (1 << 20)
#define MLOG_LEADER_EPOCH   1           /* a single node elects itself in
                                           KRaft epoch 1 */

struct samsa_mlog {
    samsa_plog_t  *plog;
    samsa_buf_t    batch;               /* the batch being written */
    samsa_buf_t    scratch;             /* recbuild's work buffer */
};

/* Kafka's Uuid.METADATA_TOPIC_ID (0, 1). */
static samsa_uuid_t
mlog_topic_id(void)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[15] = 1;
    return id;
}

/* mkdir -p dir, naming it in errstr on failure. */
static samsa_err_t
mlog_mkdirs(const char *dir, char *errstr, size_t errstr_size)
{
    int  rc = samsa_mkdirs(dir);

    if (rc != 0) {
        snprintf(errstr, errstr_size,
                 "cannot create metadata log dir '%s': %s", dir,
                 strerror(rc));
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

static void
mlog_config(samsa_log_config_t *cfg)
{
    samsa_log_config_defaults(cfg);
    cfg->retention_ms = -1;             /* kept whole: no snapshots yet */
    cfg->retention_bytes = -1;
    cfg->max_message_bytes = cfg->segment_bytes;
}

/* Replay the records of one uncompressed batch. */
static samsa_err_t
mlog_replay_batch(const uint8_t *p, const samsa_batch_hdr_t *hdr,
                  samsa_mlog_replay_fn *replay, void *ctx, char *errstr,
                  size_t errstr_size)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_record_it_t            it;
    samsa_record_t               r;
    samsa_arena_t                arena;
    samsa_err_t                  err = SAMSA_ERR_NONE;
    samsa_rd_t                   rd;
    int64_t                      offset;

    samsa_arena_init(&arena);
    samsa_record_it_init(&it, p, (size_t) samsa_batch_size(hdr));
    while (err == SAMSA_ERR_NONE && samsa_record_it_next(&it, &r)) {
        offset = hdr->BaseOffset + r.OffsetDelta;
        samsa_rd_init(&rd, r.Value, r.ValueLen > 0 ? (size_t) r.ValueLen : 0);
        if (r.Value == NULL
            || samsa_MetadataRecords_decode_framed(&rd, &arena, &rec)
               != SAMSA_ERR_NONE
            || samsa_rd_remain(&rd) != 0) {
            snprintf(errstr, errstr_size, "metadata log record at offset %"
                     PRId64 " does not decode (%s)", offset,
                     samsa_err_name(rd.err != SAMSA_ERR_NONE ? rd.err
                                    : SAMSA_ERR__BAD_MSG));
            err = SAMSA_ERR__BAD_MSG;
            break;
        }
        err = replay(ctx, &rec, offset, errstr, errstr_size);
    }
    if (err == SAMSA_ERR_NONE && it.err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "metadata log batch at offset %" PRId64
                 ": %s", hdr->BaseOffset, it.msg);
        err = SAMSA_ERR__BAD_MSG;
    }
    samsa_arena_fini(&arena);
    return err;
}

/* Replay the whole batches of buf[0..len); *next gets the offset after
 * the last one (a batch cut off at the end is read again next time). */
static samsa_err_t
mlog_replay_bytes(const uint8_t *buf, size_t len, int64_t *next,
                  samsa_mlog_replay_fn *replay, void *ctx, char *errstr,
                  size_t errstr_size)
{
    samsa_batch_hdr_t  hdr;
    samsa_err_t        err = SAMSA_ERR_NONE;
    size_t             pos = 0, size;

    while (err == SAMSA_ERR_NONE && pos < len) {
        if (samsa_batch_parse(buf + pos, len - pos, &hdr) != SAMSA_ERR_NONE
            || (size = (size_t) samsa_batch_size(&hdr)) > len - pos) {
            break;                      /* cut by the read size */
        }
        if (!samsa_batch_crc_ok(buf + pos, size)
            || samsa_batch_codec(&hdr) != SAMSA_BATCH_CODEC_NONE) {
            snprintf(errstr, errstr_size, "metadata log batch at offset %"
                     PRId64 " is corrupt or compressed", hdr.BaseOffset);
            return SAMSA_ERR__BAD_MSG;
        }
        if (!samsa_batch_is_control(&hdr)) {
            err = mlog_replay_batch(buf + pos, &hdr, replay, ctx, errstr,
                                    errstr_size);
        }
        *next = samsa_batch_last_offset(&hdr) + 1;
        pos += size;
    }
    return err;
}

static samsa_err_t
mlog_replay(samsa_mlog_t *mlog, samsa_mlog_replay_fn *replay, void *ctx,
            char *errstr, size_t errstr_size)
{
    int64_t              offset = samsa_plog_log_start_offset(mlog->plog);
    int64_t              end = samsa_plog_log_end_offset(mlog->plog), next;
    samsa_plog_region_t  region;
    samsa_buf_t          buf = SAMSA_BUF_INIT;
    samsa_err_t          err = SAMSA_ERR_NONE;
    ssize_t              got;
    size_t               want;

    while (err == SAMSA_ERR_NONE && offset < end) {
        memset(&region, 0, sizeof(region));
        err = samsa_plog_read(mlog->plog, offset, MLOG_READ_BYTES, true, end,
                              &region);
        if (err != SAMSA_ERR_NONE || region.len == 0) {
            snprintf(errstr, errstr_size, "cannot read the metadata log at "
                     "offset %" PRId64 ": %s", offset, samsa_err_name(err));
            err = SAMSA_ERR__IO;
            samsa_plog_region_release(&region);
            break;
        }
        want = region.len;
        buf.len = 0;
        samsa_buf_reserve(&buf, want);
        got = pread(region.fd, buf.data, want, region.pos);
        samsa_plog_region_release(&region);
        if (got != (ssize_t) want) {
            snprintf(errstr, errstr_size, "cannot read the metadata log at "
                     "offset %" PRId64 ": %s", offset,
                     got < 0 ? strerror(errno) : "short read");
            err = SAMSA_ERR__IO;
            break;
        }
        next = offset;
        err = mlog_replay_bytes(buf.data, (size_t) got, &next, replay, ctx,
                                errstr, errstr_size);
        if (err == SAMSA_ERR_NONE && next <= offset) {
            snprintf(errstr, errstr_size, "metadata log: no whole batch at "
                     "offset %" PRId64, offset);
            err = SAMSA_ERR__BAD_MSG;
        }
        offset = next;
    }
    samsa_buf_fini(&buf);
    return err;
}

samsa_err_t
samsa_mlog_open(samsa_mlog_t **out, const char *dir,
                samsa_mlog_replay_fn *replay, void *ctx, char *errstr,
                size_t errstr_size)
{
    samsa_mlog_t        *mlog;
    samsa_log_config_t   cfg;
    samsa_plog_load_t    load = { -1, -1, false, samsa_wall_ms() };
    samsa_err_t          err;
    struct stat          st;
    char                 path[4096];

    *out = NULL;
    err = mlog_mkdirs(dir, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    mlog = samsa_calloc(1, sizeof(*mlog));
    mlog_config(&cfg);
    snprintf(path, sizeof(path), "%s/%s", dir, SAMSA_MLOG_PARTITION_DIR);
    if (stat(path, &st) == 0) {
        err = samsa_plog_open(dir, MLOG_TOPIC, 0, &cfg, &load, &mlog->plog);
    } else {
        err = samsa_plog_create(dir, MLOG_TOPIC, 0, mlog_topic_id(), &cfg,
                                &mlog->plog);
    }
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot open the metadata log %s: %s",
                 path, samsa_err_name(err));
        samsa_mlog_close(mlog);
        return SAMSA_ERR__IO;
    }
    /* appends must not need a new descriptor (log.open.files.max) */
    samsa_plog_keep_open(mlog->plog);
    err = mlog_replay(mlog, replay, ctx, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        samsa_mlog_close(mlog);
        return err;
    }
    *out = mlog;
    return SAMSA_ERR_NONE;
}

int64_t
samsa_mlog_next_offset(const samsa_mlog_t *mlog)
{
    return samsa_plog_log_end_offset(mlog->plog);
}

/* Build the batch of n records into mlog->batch. */
static samsa_err_t
mlog_build(samsa_mlog_t *mlog, const uint8_t *data, const size_t *lens,
           size_t n, size_t *len)
{
    samsa_recbuild_t  rb;
    size_t            cap = SAMSA_RECBATCH_HDR_SIZE, i, off = 0, sz;
    int64_t           now = samsa_wall_ms();

    for (i = 0; i < n; i++) {
        cap += samsa_recbuild_size_upper(0, lens[i], NULL, 0)
               - SAMSA_RECBATCH_HDR_SIZE;
    }
    mlog->batch.len = 0;
    samsa_recbuild_init(&rb, samsa_buf_reserve(&mlog->batch, cap), cap,
                        SAMSA_CODEC_NONE, 0);
    for (i = 0; i < n; i++) {
        if (!samsa_recbuild_append(&rb, now, NULL, 0, data + off, lens[i],
                                   NULL, 0, &sz)) {
            return SAMSA_ERR__OVERFLOW;
        }
        off += lens[i];
    }
    if (samsa_recbuild_close(&rb, &mlog->scratch) != SAMSA_ERR_NONE) {
        return SAMSA_ERR__OVERFLOW;
    }
    *len = samsa_recbuild_size(&rb);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_mlog_append(samsa_mlog_t *mlog, const uint8_t *data,
                  const size_t *lens, size_t n, char *errstr,
                  size_t errstr_size)
{
    samsa_plog_append_opts_t    opts = { MLOG_LEADER_EPOCH, false, NULL,
                                         NULL };
    samsa_plog_append_result_t  res;
    samsa_err_t                 err;
    int64_t                     flushed = -1;
    size_t                      len = 0;

    samsa_assert(n > 0);
    err = mlog_build(mlog, data, lens, n, &len);
    if (err == SAMSA_ERR_NONE) {
        SAMSA_FAULT("metadata.append.before_write");
        err = samsa_plog_append(mlog->plog, mlog->batch.data, len, &opts,
                                &res);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_plog_flush(mlog->plog, SAMSA_PLOG_FLUSH_DATA, &flushed);
    }
    if (err == SAMSA_ERR_NONE && flushed <= res.last_offset) {
        err = SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot append %zu record(s) to the "
                 "metadata log: %s", n, samsa_err_name(err));
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_mlog_close(samsa_mlog_t *mlog)
{
    if (mlog == NULL) {
        return;
    }
    if (mlog->plog != NULL && samsa_plog_close(mlog->plog)
                              != SAMSA_ERR_NONE) {
        samsa_warn("metadata log: close did not flush cleanly");
    }
    samsa_buf_fini(&mlog->batch);
    samsa_buf_fini(&mlog->scratch);
    samsa_free(mlog);
}
