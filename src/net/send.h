/*
 * net/send.h - one frame on its way out of a connection: the bytes
 * (size prefix included) and the file regions spliced into them with
 * sendfile(2).  A broker's response (net/server/req.h: samsa_resp_t) and a
 * client's request (client/netclient.c) each carry one; net/conn.c writes
 * it without knowing which.
 * Threads: whoever owns the frame; a connection's network thread while it
 * is being written.
 */
#ifndef SAMSA_NET_SEND_H
#define SAMSA_NET_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Bytes of a file sent with sendfile(2) in the middle of a frame (a
 * Fetch's records, straight from a log segment). */
typedef struct samsa_send_region {
    size_t   at;                /* frame offset the region goes before */
    int      fd;                /* owned: closed when the frame is freed;
                                   or held by release_arg (release) */
    int64_t  offset;            /* file position */
    int64_t  len;
    void   (*release)(void *release_arg);  /* NULL: close(fd) */
    void    *release_arg;
} samsa_send_region_t;

typedef struct samsa_send {
    samsa_buf_t           frame;        /* size prefix + header + body */
    samsa_send_region_t  *regions;      /* in frame order; may be NULL */
    size_t                nregions;
    size_t                regions_cap;
    int64_t               regions_len;  /* sum of the regions' lengths */
} samsa_send_t;

#define SAMSA_SEND_INIT ((samsa_send_t) { .frame = SAMSA_BUF_INIT })

/* Splice len bytes of fd at offset in at the current end of the frame
 * (what is encoded next follows them).  @owns fd (closed by
 * samsa_send_clear_regions or samsa_send_fini) */
void samsa_send_add_region(samsa_send_t *send, int fd, int64_t offset,
                           int64_t len);

/* As samsa_send_add_region, but fd stays open as long as whoever
 * release_arg names holds it: release(release_arg) is called, once, where
 * samsa_send_add_region's fd would be closed (on the thread that frees or
 * clears the send).  @owns the hold */
void samsa_send_add_region_held(samsa_send_t *send, int fd, int64_t offset,
                                int64_t len, void (*release)(void *),
                                void *release_arg);

/* Close (or release) and forget every region; the frame's bytes stay. */
void samsa_send_clear_regions(samsa_send_t *send);

/* Free the frame and close the regions' descriptors. */
void samsa_send_fini(samsa_send_t *send);

#endif /* SAMSA_NET_SEND_H */
