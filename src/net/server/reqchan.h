/*
 * net/server/reqchan.h - the request channel of one socket server (Kafka's
 * RequestChannel): the single bounded request queue every network thread
 * puts into (blocking when full: back pressure) and every handler takes
 * from, and the way back: a response goes to the response queue of the
 * network thread that read its request.
 * Threads: any; the queue and the processors' response queues are
 * thread-safe, the processor table is [const] once the server started.
 */
#ifndef SAMSA_NET_SERVER_REQCHAN_H
#define SAMSA_NET_SERVER_REQCHAN_H

#include <stdint.h>

#include "net/server/req.h"

/* Hand resp (and the request it owns) to the network thread that read the
 * request.  Releases the request's payload and arena first: after respond
 * the request keeps only its header and timings.  @owns resp
 * @thread any (handler, purgatory, ...) */
void samsa_reqchan_respond(samsa_resp_t *resp);

/* Note that the handler's own work on req is over (Kafka's
 * apiLocalCompleteTimeNanos) when its answer will come later. */
void samsa_req_mark_local_done(samsa_req_t *req);

#endif /* SAMSA_NET_SERVER_REQCHAN_H */
