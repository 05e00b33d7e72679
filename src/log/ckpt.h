/*
 * log/ckpt.h - Kafka's small text files in a log directory, written
 * atomically (".tmp", fsync, rename, fsync of the directory):
 *   recovery-point-offset-checkpoint, log-start-offset-checkpoint
 *       "0\n<count>\n<topic> <partition> <offset>\n..."
 *   <topic>-<partition>/leader-epoch-checkpoint
 *       "0\n<count>\n<epoch> <start offset>\n..."
 * plus the plain atomic write and directory fsync the rest of log/ uses.
 * Threads: any; callers serialise writers of one file.
 */
#ifndef SAMSA_LOG_CKPT_H
#define SAMSA_LOG_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_ckpt_tp {
    char     *topic;                /* heap (samsa_strdup) */
    int32_t   partition;
    int64_t   offset;
} samsa_ckpt_tp_t;

typedef struct samsa_ckpt_epoch {
    int32_t   epoch;
    int64_t   start_offset;
} samsa_ckpt_epoch_t;

/* Replace path with exactly len bytes of data: write path.tmp, fdatasync
 * it, rename it over path, fsync the directory.
 * @returns KAFKA_STORAGE_ERROR after a samsa_error naming the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_write_atomic(const char *path,
                                                     const void *data,
                                                     size_t len);

/* fsync a directory, so that entries created or renamed in it last. */
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_fsync_dir(const char *dir);

/* Topic-partition-offset files.  Reading a missing file gives no entries
 * and SAMSA_ERR_NONE; a malformed one is SAMSA_ERR__BAD_MSG after a
 * samsa_warn naming it.  *out is freed with samsa_ckpt_tp_free(). */
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_tp_write(const char *path,
                                                 const samsa_ckpt_tp_t *e,
                                                 size_t n);
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_tp_read(const char *path,
                                                samsa_ckpt_tp_t **out,
                                                size_t *n);
void samsa_ckpt_tp_free(samsa_ckpt_tp_t *e, size_t n);

/* Leader-epoch files, same conventions; *out freed with samsa_free(). */
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_epoch_write(
    const char *path, const samsa_ckpt_epoch_t *e, size_t n);
SAMSA_MUST_CHECK samsa_err_t samsa_ckpt_epoch_read(const char *path,
                                                   samsa_ckpt_epoch_t **out,
                                                   size_t *n);

#endif /* SAMSA_LOG_CKPT_H */
