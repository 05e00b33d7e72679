/*
 * broker/node.h - what the request handlers know about this node: its id,
 * the cluster id, and the endpoints it advertises to clients (which it
 * registers in the metadata image: handlers list brokers from the image).
 * Threads: built by main before any server starts; read-only afterwards,
 * so every handler thread may read it without locks.
 */
#ifndef SAMSA_BROKER_NODE_H
#define SAMSA_BROKER_NODE_H

#include <stddef.h>
#include <stdint.h>

typedef struct samsa_endpoint {
    const char  *listener;          /* listener name, e.g. "PLAINTEXT" */
    const char  *host;
    int32_t      port;
    const char  *security_protocol; /* "PLAINTEXT", ...; NULL: PLAINTEXT */
} samsa_endpoint_t;

typedef struct samsa_node {
    int32_t             node_id;
    int32_t             controller_id;  /* this node in combined mode */
    char                cluster_id[23]; /* Kafka's base64 Uuid */
    samsa_endpoint_t   *endpoints;      /* advertised listeners */
    size_t              nendpoints;
} samsa_node_t;

/* The advertised endpoint for listener (case-insensitive), or NULL. */
const samsa_endpoint_t *samsa_node_endpoint(const samsa_node_t *node,
                                            const char *listener);

#endif /* SAMSA_BROKER_NODE_H */
