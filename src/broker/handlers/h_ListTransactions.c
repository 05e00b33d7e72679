/*
 * broker/handlers/h_ListTransactions.c - ListTransactions (key 66), v0-v1
 * (KIP-664; v1 DurationFilter, KIP-994): the transactional ids this
 * coordinator knows, filtered by state and producer id; state filters
 * naming no state come back in UnknownStateFilters.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn/txn.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ListTransactions.h"
#include "proto/wr.h"

void
samsa_h_ListTransactions(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ListTransactionsRequest_t  *rq = body;
    samsa_ListTransactionsResponse_t  m;
    samsa_txn_state_t                *states;
    samsa_txn_listed_t               *listed;
    size_t                            nstates = 0, nunknown = 0, n, i, k;
    int32_t                           j;

    samsa_ListTransactionsResponse_init(&m);
    n = rq->StateFilters_cnt > 0 ? (size_t) rq->StateFilters_cnt : 0;
    states = samsa_arena_calloc(&req->arena, n + 1, sizeof(*states));
    m.UnknownStateFilters = samsa_arena_calloc(&req->arena, n + 1,
                                               sizeof(*m.UnknownStateFilters));
    for (j = 0; j < rq->StateFilters_cnt; j++) {
        if (samsa_txn_state_parse(rq->StateFilters[j], &states[nstates])) {
            nstates++;
        } else {
            m.UnknownStateFilters[nunknown++] = rq->StateFilters[j];
        }
    }
    m.UnknownStateFilters_cnt = (int32_t) nunknown;
    if (nunknown > 0 && nstates == 0) {
        n = 0;                          /* only unknown states: nothing */
        listed = NULL;
    } else {
        n = samsa_txn_list(apis->broker->txn, states, nstates,
                           rq->ProducerIdFilters,
                           rq->ProducerIdFilters_cnt > 0
                               ? (size_t) rq->ProducerIdFilters_cnt : 0,
                           rq->DurationFilter, &req->arena, &listed);
    }
    m.TransactionStates = samsa_arena_calloc(&req->arena, n + 1,
                                             sizeof(*m.TransactionStates));
    for (i = 0, k = 0; i < n; i++) {
        /* Kafka lists only the ids one may describe */
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                                SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                                samsa_slice_cstr(listed[i].txn_id))) {
            continue;
        }
        samsa_ListedTransaction_init(&m.TransactionStates[k]);
        m.TransactionStates[k].TransactionalId =
            samsa_slice_cstr(listed[i].txn_id);
        m.TransactionStates[k].ProducerId = listed[i].producer_id;
        m.TransactionStates[k].TransactionState =
            samsa_slice_cstr(samsa_txn_state_name(listed[i].state));
        k++;
    }
    m.TransactionStates_cnt = (int32_t) k;
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
