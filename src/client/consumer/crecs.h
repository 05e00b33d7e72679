/*
 * client/consumer/crecs.h - the consumer's record-batch reader: turns the Records
 * of one partition in a Fetch response (untrusted bytes) into a chunk of
 * samsa_consumer_record_t, decompressing (every codec, via
 * proto/compress.c), checking CRCs (check.crcs), dropping records before
 * the fetch offset, control batches and, under read_committed, the
 * batches of aborted transactions (the response's AbortedTransactions, as
 * Java's CompletedFetch does).  A partial batch at the end is normal (the
 * broker cuts at the byte limit) and is fetched again next time.
 * Records of uncompressed batches point into the response itself when the
 * caller hands its buffer over as a samsa_crecs_src_t (no copy of keys,
 * values or headers); compressed batches are decompressed into the
 * chunk's own buffer.
 * Threads: samsa_crecs_parse() is pure (any thread); a chunk is built by
 * the consumer's background thread, then owned by the consumer's queue
 * ([consumer lock]) and by the record sets poll() hands out (refcount).
 * A source is shared by every chunk that points into it (refcount).
 */
#ifndef SAMSA_CLIENT_CONSUMER_CRECS_H
#define SAMSA_CLIENT_CONSUMER_CRECS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/consumer.h>
#include <samsa/errors.h>

/* The bytes of one Fetch response, shared by the chunks whose records
 * point into them; freed with the last reference.  @thread any */
typedef struct samsa_crecs_src {
    _Atomic int   refs;         /* [atomic] */
    uint8_t      *bytes;        /* [const] samsa_malloc()ed */
} samsa_crecs_src_t;

typedef struct samsa_crecs_chunk {
    _Atomic int                 refs;       /* [atomic] */
    struct samsa_crecs_chunk   *next;       /* [consumer lock] queue link */
    char                       *topic;      /* [const] */
    int32_t                     partition;  /* [const] */
    samsa_consumer_record_t    *recs;       /* [const] */
    size_t                      n;          /* [const] */
    size_t                      pos;        /* [consumer lock] next to hand
                                               out */
    samsa_consumer_header_t    *hdrs;       /* [const] all headers */
    uint8_t                    *data;       /* [const] decompressed batches
                                               recs point to */
    size_t                      data_len;
    samsa_crecs_src_t          *src;        /* [const] a ref on the
                                               response recs point into,
                                               or NULL */
    int64_t                     fetch_offset;   /* [const] asked for */
    int64_t                     next_offset;    /* [const] fetch position
                                                   after this chunk */
    samsa_err_t                 err;        /* [const] after the records */
    int64_t                     err_offset; /* [const] where err sits */
} samsa_crecs_chunk_t;

typedef struct samsa_crecs_aborted {
    int64_t  producer_id;
    int64_t  first_offset;
} samsa_crecs_aborted_t;

typedef struct samsa_crecs_opts {
    int64_t                       fetch_offset;
    bool                          read_committed;
    bool                          check_crcs;
    const samsa_crecs_aborted_t  *aborted;      /* may be NULL */
    size_t                        naborted;
    size_t                        max_batch_bytes;  /* decompressed cap */
    samsa_crecs_src_t            *src;      /* NULL: copy every batch;
                                               else the bytes parsed lie
                                               in src->bytes and records of
                                               uncompressed batches point
                                               there (the chunk takes a
                                               ref) */
} samsa_crecs_opts_t;

/* Parse len bytes of record batches (one partition's Records).  Always
 * returns a chunk (unref it): its records (possibly none), the next
 * fetch offset (fetch_offset when nothing complete was there), and err
 * when a batch was bad - CORRUPT_MESSAGE (CRC, sizes, a record that does
 * not parse), UNSUPPORTED_FOR_MESSAGE_FORMAT (magic 0/1),
 * MESSAGE_TOO_LARGE (data present but not one whole batch), the
 * decompressor's error - with the records before it kept.
 * @thread any */
samsa_crecs_chunk_t *samsa_crecs_parse(const char *topic, int32_t partition,
                                       const uint8_t *p, size_t len,
                                       const samsa_crecs_opts_t *opts);

void samsa_crecs_chunk_ref(samsa_crecs_chunk_t *chunk);

/* A source of one reference over bytes.  @owns bytes (samsa_malloc()ed) */
samsa_crecs_src_t *samsa_crecs_src_new(uint8_t *bytes);

/* Drop a reference; the last frees the bytes.  NULL is a no-op.
 * @thread any */
void samsa_crecs_src_unref(samsa_crecs_src_t *src);

/* Drop a reference; the last frees.  NULL is a no-op.  @thread any */
void samsa_crecs_chunk_unref(samsa_crecs_chunk_t *chunk);

#endif /* SAMSA_CLIENT_CONSUMER_CRECS_H */
