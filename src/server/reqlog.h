/*
 * server/reqlog.h - Kafka's request log (kafka.request.logger at DEBUG),
 * one JSON object per line per completed request, with the header, the
 * connection, listener, principal, client software and the seed's timings:
 *   requestQueueTimeMs   handler took it - network thread finished reading it
 *   localTimeMs          handler's own work ended - handler took it
 *   remoteTimeMs         response handed back - handler's own work ended
 *   responseQueueTimeMs  network thread took the response - handed back
 *   sendTimeMs           last byte written - network thread took it
 *   totalTimeMs          last byte written - finished reading the request
 * Written while the kafka.request.logger logger (util/diag.h) is at DEBUG
 * or TRACE: request.log.enable=true sets it at start, IncrementalAlterConfigs
 * of the BROKER_LOGGER resource at run time.  The file is opened the first
 * time the logger is enabled (never while it is off: no empty file).
 * Threads: set up and closed by main; opened by whichever thread enables
 * the logger (under lock); written from network threads, each line with
 * one write(2) on an O_APPEND descriptor (no lock needed).
 */
#ifndef SAMSA_SERVER_REQLOG_H
#define SAMSA_SERVER_REQLOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "net/server/req.h"

typedef struct samsa_reqlog {
    char             *path;     /* request.log.file, resolved; "stderr" */
    _Atomic int       fd;       /* -1: not open yet */
    bool              owns_fd;
    pthread_mutex_t   lock;     /* opening */
} samsa_reqlog_t;

/* Remember path (copied); opens nothing. */
void samsa_reqlog_init(samsa_reqlog_t *rl, const char *path);

bool samsa_reqlog_enable_hook(void *ctx, char *errstr, size_t errstr_size);
void samsa_reqlog_close(samsa_reqlog_t *rl);

/* The socket server's samsa_req_done_fn: ctx is the samsa_reqlog_t. */
void samsa_reqlog_done(void *ctx, const samsa_req_t *req);

#endif /* SAMSA_SERVER_REQLOG_H */
