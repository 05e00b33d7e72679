/*
 * client/producer/future.h - the waitable result of one sent record
 * (samsa_future_t of samsa/producer.h; Java's FutureRecordMetadata).
 * Two holders: the caller of send() and the record's batch.  Completion
 * (sender thread) fills it in and wakes waiters; whichever holder lets go
 * last frees it.
 * Threads: any; a mutex and condition variable inside.
 */
#ifndef SAMSA_CLIENT_PRODUCER_FUTURE_H
#define SAMSA_CLIENT_PRODUCER_FUTURE_H

#include <samsa/producer.h>

/* A pending future with two holders (caller and batch). */
samsa_future_t *samsa_future_new(void);

/* Complete it (topic copied) and drop the batch's hold.  @thread sender */
void samsa_future_complete(samsa_future_t *fut, const samsa_record_md_t *md,
                           samsa_err_t err);

#endif /* SAMSA_CLIENT_PRODUCER_FUTURE_H */
