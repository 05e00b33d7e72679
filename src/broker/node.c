/*
 * broker/node.c - see node.h.  Threads: any (read-only data).
 */
#include "broker/node.h"

#include <strings.h>

const samsa_endpoint_t *
samsa_node_endpoint(const samsa_node_t *node, const char *listener)
{
    size_t  i;

    for (i = 0; i < node->nendpoints; i++) {
        if (strcasecmp(node->endpoints[i].listener, listener) == 0) {
            return &node->endpoints[i];
        }
    }
    return NULL;
}
