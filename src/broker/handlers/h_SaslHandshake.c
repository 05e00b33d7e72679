/*
 * broker/handlers/h_SaslHandshake.c - SaslHandshake (key 17) as a handler
 * sees it: only on a listener without SASL or on a connection that has
 * authenticated already (the network thread answers it during
 * authentication, net/sasl.c).  Kafka's KafkaApis answers
 * ILLEGAL_SASL_STATE then, and so do we.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "proto/gen/SaslHandshake.h"

void
samsa_h_SaslHandshake(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_SaslHandshakeResponse_t  m;

    (void) body;
    samsa_SaslHandshakeResponse_init(&m);
    m.ErrorCode = SAMSA_ERR_ILLEGAL_SASL_STATE;
    samsa_apis_send(apis->broker, req, &m);
}
