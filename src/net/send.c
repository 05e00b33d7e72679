/*
 * net/send.c - outgoing frames and their file regions (see send.h).
 * Threads: the frame's owner.
 */
#include "net/send.h"

#include <unistd.h>

#include "util/alloc.h"

void
samsa_send_add_region(samsa_send_t *send, int fd, int64_t offset, int64_t len)
{
    samsa_send_add_region_held(send, fd, offset, len, NULL, NULL);
}

void
samsa_send_add_region_held(samsa_send_t *send, int fd, int64_t offset,
                           int64_t len, void (*release)(void *),
                           void *release_arg)
{
    samsa_send_region_t  *r;

    if (send->nregions == send->regions_cap) {
        send->regions_cap = send->regions_cap == 0 ? 4 : send->regions_cap * 2;
        send->regions = samsa_realloc(send->regions,
                                      send->regions_cap * sizeof(*r));
    }
    r = &send->regions[send->nregions++];
    r->at = send->frame.len;
    r->fd = fd;
    r->offset = offset;
    r->len = len;
    r->release = release;
    r->release_arg = release_arg;
    send->regions_len += len;
}

void
samsa_send_clear_regions(samsa_send_t *send)
{
    size_t  i;

    for (i = 0; i < send->nregions; i++) {
        if (send->regions[i].release != NULL) {
            send->regions[i].release(send->regions[i].release_arg);
        } else {
            close(send->regions[i].fd);
        }
    }
    send->nregions = 0;
    send->regions_len = 0;
}

void
samsa_send_fini(samsa_send_t *send)
{
    samsa_send_clear_regions(send);
    samsa_free(send->regions);
    send->regions = NULL;
    send->regions_cap = 0;
    samsa_buf_fini(&send->frame);
}
