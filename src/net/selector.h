/*
 * net/selector.h - an epoll set and its wake-up (Kafka's Selector over
 * java.nio's Selector): sockets registered with an interest mask (read,
 * write) and a user pointer, a wait that returns the ready ones, and an
 * eventfd any thread can write to end a wait early (registered
 * edge-triggered, so a wake-up costs one write and no read), skipped while
 * an owner that announces its waits (samsa_selector_prepare_wait) is
 * awake and will look at its queues anyway.  The broker's network
 * threads (net/server/proc.c) and libsamsa's network client (client/netclient.c)
 * each own one; this header knows neither of them.
 * Threads: owned by one thread (the one that waits): samsa_selector_add,
 * _modify, _remove and _wait run only there; samsa_selector_wakeup runs
 * on any thread, also after the owner left, until samsa_selector_fini.
 * Ownership: embedded in its owner's struct; _init/_fini by whoever
 * creates and frees that struct.
 */
#ifndef SAMSA_NET_SELECTOR_H
#define SAMSA_NET_SELECTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

/* Interest and readiness bits (the values of EPOLLIN, EPOLLOUT, EPOLLERR
 * and EPOLLHUP, so the translation costs nothing).  Interest is READ
 * and/or WRITE; ERR and HUP are reported whether asked for or not. */
#define SAMSA_SELECTOR_F_READ   0x001u
#define SAMSA_SELECTOR_F_WRITE  0x004u
#define SAMSA_SELECTOR_F_ERR    0x008u
#define SAMSA_SELECTOR_F_HUP    0x010u
/* With samsa_selector_add only: edge-triggered (EPOLLET).  Readiness is
 * reported when it arises, not again while it lasts: the owner reads and
 * writes until EAGAIN, or remembers that it did not. */
#define SAMSA_SELECTOR_F_EDGE   0x80000000u

typedef struct samsa_selector {
    int           epfd;             /* [const] the epoll set */
    int           wakefd;           /* [const] eventfd in the set */
    _Atomic bool  wake_pending;     /* [atomic] written, not yet seen by
                                       a wait: further wake-ups skip the
                                       write */
    _Atomic bool  awake;            /* [atomic] the owner is between a
                                       wait and its next prepare_wait:
                                       wake-ups skip the write */
    bool          announces;        /* [owner] prepare_wait was called:
                                       a wait's return sets awake */
} samsa_selector_t;

/* One ready socket: what it was registered with, and what is ready. */
typedef struct samsa_selector_event {
    void      *ptr;
    uint32_t   ready;               /* SAMSA_SELECTOR_F_* */
} samsa_selector_event_t;

/* Create the epoll set and the wake-up eventfd.  _IO (logged) if the
 * kernel refuses; sel is then left closed (fini is harmless). */
SAMSA_MUST_CHECK samsa_err_t samsa_selector_init(samsa_selector_t *sel);

/* Close both descriptors.  Registered sockets are not closed (their
 * owners close them).  Safe on a selector whose init failed. */
void samsa_selector_fini(samsa_selector_t *sel);

/* Watch fd for interest, reporting it with ptr (not NULL).  _IO (logged:
 * EBADF, EEXIST, ENOMEM...) if epoll refuses.  @thread owner */
SAMSA_MUST_CHECK samsa_err_t samsa_selector_add(samsa_selector_t *sel,
                                                int fd, uint32_t interest,
                                                void *ptr);

/* Change fd's interest (0: stay registered, report only ERR/HUP).
 * @thread owner */
SAMSA_MUST_CHECK samsa_err_t samsa_selector_modify(samsa_selector_t *sel,
                                                   int fd, uint32_t interest,
                                                   void *ptr);

/* Stop watching fd; call it before closing fd.  @thread owner */
SAMSA_MUST_CHECK samsa_err_t samsa_selector_remove(samsa_selector_t *sel,
                                                   int fd);

/* Wait up to timeout_ms (0: don't block; negative is taken as 0) for
 * ready sockets or a wake-up; fill evs (at most max) and *nready.  A
 * wake-up is consumed here and not reported: the caller looks at
 * whatever it was woken for after the wait returns.  A signal
 * interrupting the wait is NONE with *nready 0; anything else _IO
 * (logged).  @thread owner */
SAMSA_MUST_CHECK samsa_err_t samsa_selector_wait(samsa_selector_t *sel,
                                                 samsa_selector_event_t *evs,
                                                 size_t max,
                                                 int64_t timeout_ms,
                                                 size_t *nready);

/* Announce a wait (an eventcount's prepare): from here on wake-ups write
 * the eventfd.  The owner calls it, then looks once more at everything a
 * wake-up can be for (its queues, its flags) and waits only if all is
 * empty; a waker publishes first and wakes after, so either the owner
 * sees what was published or the waker sees the announcement.  From the
 * first call on, each wait's return marks the owner awake, and wake-ups
 * until the next call cost no syscall.  An owner that never calls it is
 * always woken.  @thread owner */
void samsa_selector_prepare_wait(samsa_selector_t *sel);

/* Make the wait in progress, or the next one, return at once.  Wake-ups
 * between two waits coalesce into one eventfd write; none is written
 * while an announcing owner is awake.  Call it after publishing what the
 * owner is woken for.  @thread any */
void samsa_selector_wakeup(samsa_selector_t *sel);

#endif /* SAMSA_NET_SELECTOR_H */
