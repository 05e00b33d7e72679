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
 * Threads: opened and closed by main; written from network threads, each
 * line with one write(2) on an O_APPEND descriptor (no lock needed).
 */
#ifndef SAMSA_SERVER_REQLOG_H
#define SAMSA_SERVER_REQLOG_H

#include <stddef.h>

#include <samsa/errors.h>

#include "net/req.h"

typedef struct samsa_reqlog {
    int   fd;                   /* -1: disabled */
    bool  owns_fd;
} samsa_reqlog_t;

/* Open path for appending ("stderr" for standard error). */
SAMSA_MUST_CHECK samsa_err_t samsa_reqlog_open(samsa_reqlog_t *rl,
                                               const char *path, char *errstr,
                                               size_t errstr_size);
void samsa_reqlog_close(samsa_reqlog_t *rl);

/* Format req's line into out (NUL-terminated); returns its length. */
size_t samsa_reqlog_format(const samsa_req_t *req, char *out, size_t size);

/* The socket server's samsa_req_done_fn: ctx is the samsa_reqlog_t. */
void samsa_reqlog_done(void *ctx, const samsa_req_t *req);

#endif /* SAMSA_SERVER_REQLOG_H */
