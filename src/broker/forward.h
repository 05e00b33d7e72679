/*
 * broker/forward.h - admin requests (the SAMSA_API_F_ADMIN APIs:
 * CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
 * IncrementalAlterConfigs, AlterClientQuotas) that reach a KRaft cluster
 * node which is not the active controller go to the active controller and
 * its answer goes back to the client, as Kafka's forwarding does (Kafka
 * wraps them in an Envelope; samsa sends the client's request bytes as
 * they came, header and all, to the active controller's CONTROLLER
 * listener, which serves these APIs on a cluster node, and relays the
 * response frame unchanged).  As Kafka's forwarding channel
 * (NodeToControllerChannelManager, retryTimeoutMs 60 s) it tries until
 * SAMSA_FORWARD_RETRY_MS: while the quorum names no active controller,
 * when the one it names cannot be reached (killed), and when its answer
 * says NOT_CONTROLLER anywhere (it lost the leadership), it waits (50 ms
 * doubling up to 1 s) and asks whichever node the quorum names then; so
 * a client never sees NOT_CONTROLLER from a broker.  Given up: the last
 * answer with REQUEST_TIMED_OUT for its NOT_CONTROLLER codes (Kafka's
 * timeout answer), or, when no controller answered at all, the request
 * is handled here (the local controller then answers NOT_CONTROLLER).
 * When this node becomes the active controller meanwhile, it is handled
 * here too.
 * samsa_forward_roundtrip is the client all of them use: one request's
 * bytes to the active controller, its response frame back (the
 * broker-lifecycle thread sends BrokerRegistration with it,
 * broker/lifecycle.h; pid-fetch AllocateProducerIds, broker/pidmgr.h;
 * samsa_forward_create_topic CreateTopics for Metadata's auto-creation
 * and the internal topics).
 * Threads: the caller's (a handler thread, broker-lifecycle, pid-fetch);
 * the call blocks it for the round trip (a new connection each time;
 * admin requests, registrations and producer-id blocks are rare).
 */
#ifndef SAMSA_BROKER_FORWARD_H
#define SAMSA_BROKER_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/api_table.h"
#include "config/config_kraft.h"
#include "meta/image.h"
#include "net/server/req.h"
#include "proto/wr.h"
#include "util/arena.h"
#include "util/buf.h"

#define SAMSA_FORWARD_RETRY_MS  60000  /* Kafka's forwarding retryTimeoutMs */

/* Forward req (an admin API on apis->forward) to the active controller,
 * trying again as above for up to SAMSA_FORWARD_RETRY_MS (the handler
 * thread waits): true when req was answered (it belongs to the response
 * then), false to handle it here.  @thread handler */
bool samsa_forward_to_controller(samsa_apis_t *apis, samsa_req_t *req);

/* Send request (one request frame without its size prefix: header and
 * body) to controller_id's CONTROLLER listener (its controller.quorum.voters
 * address) on a new connection, each step bounded by io_ms, and read the
 * answer: *answer (samsa_free it) gets the response frame without its size
 * prefix (correlation id first, checked against correlation_id),
 * *answer_len its length.  @returns SAMSA_ERR_NONE; NOT_CONTROLLER when
 * controller_id is no voter; _IO when it cannot be reached or answers
 * badly (logged at debug). */
SAMSA_MUST_CHECK samsa_err_t samsa_forward_roundtrip(
    const samsa_config_kraft_t *k, int32_t controller_id,
    const void *request, size_t len, int32_t correlation_id, int io_ms,
    uint8_t **answer, size_t *answer_len);

/* A blocking connection to host:port (connect bounded by io_ms, at most
 * 3 s) with send and receive timeouts of io_ms, or -1.  The replica
 * fetchers keep one per leader (broker/replica.h).  @thread any */
int samsa_forward_connect(const char *host, int port, int io_ms);

/* One exchange on fd: request (a frame without its size prefix) out, the
 * response frame (*answer, samsa_free it; correlation id first, checked)
 * back, each step bounded by io_ms.  @returns _IO when the peer closes,
 * times out or answers badly (the connection is then unusable).
 * @thread the fd's owner */
SAMSA_MUST_CHECK samsa_err_t samsa_forward_exchange(
    int fd, const void *request, size_t len, int32_t correlation_id,
    int io_ms, uint8_t **answer, size_t *answer_len);

/* Start frame (emptied; no size prefix) with a request header v2 for
 * api/version, correlation_id and client id "samsa-broker-<node_id>"; the
 * body follows through *wr.  For the flexible controller APIs a broker
 * sends (BrokerRegistration, BrokerHeartbeat, AllocateProducerIds). */
void samsa_forward_header(samsa_wr_t *wr, samsa_buf_t *frame, int16_t api,
                          int16_t version, int32_t correlation_id,
                          int32_t node_id);

/* A request body's encoder (proto/gen's samsa_<Msg>_encode_any). */
typedef void samsa_forward_encode_fn(samsa_wr_t *wr, int16_t version,
                                     const void *m);

/* One call of a flexible controller API from broker node_id to
 * controller_id (samsa_forward_roundtrip bounded by io_ms): request
 * encoded by encode after samsa_forward_header, the answer's response
 * header v1 skipped and its body decoded as api's response of version
 * into response (from arena; its strings borrow *answer, which the
 * caller samsa_frees, on error too).  @returns the round trip's error
 * or the decoder's.  @thread any (it blocks) */
SAMSA_MUST_CHECK samsa_err_t samsa_forward_call(
    const samsa_config_kraft_t *k, int32_t controller_id, int32_t node_id,
    int16_t api, int16_t version, int32_t correlation_id, int io_ms,
    samsa_forward_encode_fn *encode, const void *request,
    samsa_arena_t *arena, void *response, uint8_t **answer);

/* CreateTopics v7 of one topic (nparts partitions, replication_factor,
 * configs; -1 for either: the controller's num.partitions and
 * default.replication.factor) from broker node_id to the active
 * controller active's CONTROLLER listener, as Kafka's
 * AutoTopicCreationManager sends it: the internal topics
 * (broker/coordtopic.h) and Metadata's auto-creation (the controller
 * listener lets a broker create topics).  Each step of the round trip
 * and the request's TimeoutMs are io_ms.  @returns the topic's error
 * (TOPIC_ALREADY_EXISTS counts as NONE), INVALID_CONFIG for more than 8
 * configs, or the round trip's.  @thread any (it blocks) */
SAMSA_MUST_CHECK samsa_err_t samsa_forward_create_topic(
    const samsa_config_kraft_t *kraft, int32_t node_id, int32_t active,
    const char *name, int32_t nparts, int16_t replication_factor,
    const samsa_image_config_t *configs, size_t nconfigs, int io_ms);

#endif /* SAMSA_BROKER_FORWARD_H */
