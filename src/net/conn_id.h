/*
 * net/conn_id.h - how threads other than a connection's network thread name
 * it: never by pointer, always by (processor, slot, generation).  The owner
 * resolves the id and drops stale ones (the slot was reused).
 */
#ifndef SAMSA_NET_CONN_ID_H
#define SAMSA_NET_CONN_ID_H

#include <stdint.h>

typedef struct samsa_conn_id {
    uint16_t  proc;             /* index of the owning network thread */
    uint32_t  slot;             /* slot in that thread's table */
    uint32_t  gen;              /* bumped each time the slot is reused */
} samsa_conn_id_t;

#endif /* SAMSA_NET_CONN_ID_H */
