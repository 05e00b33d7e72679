/*
 * broker/handlers/h_SaslAuthenticate.c - SaslAuthenticate (key 36) as a
 * handler sees it: only on a listener without SASL or after the
 * connection authenticated (the network thread answers it during
 * authentication, net/sasl.c).  ILLEGAL_SASL_STATE, with Kafka's message.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "proto/gen/SaslAuthenticate.h"

void
samsa_h_SaslAuthenticate(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_SaslAuthenticateResponse_t  m;

    (void) body;
    samsa_SaslAuthenticateResponse_init(&m);
    m.ErrorCode = SAMSA_ERR_ILLEGAL_SASL_STATE;
    m.ErrorMessage = samsa_slice_cstr(
        "SaslAuthenticate request received after successful "
        "authentication");
    samsa_apis_send(apis->broker, req, &m);
}
