/*
 * net/selector.c - the epoll set and eventfd wake-up of a network loop
 * (see selector.h).
 * Threads: as selector.h says: one owner thread; wake-ups from any.
 */
#include "net/selector.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/diag.h"
#include "util/fsutil.h"

#define SELECTOR_MAX_BATCH 256

_Static_assert(SAMSA_SELECTOR_F_READ == EPOLLIN, "READ is EPOLLIN");
_Static_assert(SAMSA_SELECTOR_F_WRITE == EPOLLOUT, "WRITE is EPOLLOUT");
_Static_assert(SAMSA_SELECTOR_F_ERR == EPOLLERR, "ERR is EPOLLERR");
_Static_assert(SAMSA_SELECTOR_F_HUP == EPOLLHUP, "HUP is EPOLLHUP");

#define SELECTOR_F_ALL                                                   \
    (SAMSA_SELECTOR_F_READ | SAMSA_SELECTOR_F_WRITE | SAMSA_SELECTOR_F_ERR \
     | SAMSA_SELECTOR_F_HUP)

samsa_err_t
samsa_selector_init(samsa_selector_t *sel)
{
    /* edge-triggered: every write is reported once, so the counter is
     * never read (it cannot reach its 2^64 - 1 limit) */
    struct epoll_event  ev = { .events = EPOLLIN | EPOLLET, .data.ptr = NULL };

    atomic_init(&sel->wake_pending, false);
    atomic_init(&sel->awake, false);
    sel->announces = false;
    sel->wakefd = -1;
    sel->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (sel->epfd < 0) {
        samsa_error("epoll_create1 failed: %s", strerror(errno));
        return SAMSA_ERR__IO;
    }
    sel->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (sel->wakefd < 0) {
        samsa_error("eventfd failed: %s", strerror(errno));
        goto out_close;
    }
    if (epoll_ctl(sel->epfd, EPOLL_CTL_ADD, sel->wakefd, &ev) != 0) {
        samsa_error("epoll_ctl(ADD) of the wake-up eventfd failed: %s",
                    strerror(errno));
        goto out_close;
    }
    return SAMSA_ERR_NONE;

out_close:
    samsa_selector_fini(sel);
    return SAMSA_ERR__IO;
}

void
samsa_selector_fini(samsa_selector_t *sel)
{
    samsa_close_fd(&sel->wakefd);
    samsa_close_fd(&sel->epfd);
}

static samsa_err_t
selector_ctl(samsa_selector_t *sel, int op, int fd, uint32_t interest,
             void *ptr)
{
    struct epoll_event  ev = { .events = interest, .data.ptr = ptr };

    samsa_assert(op == EPOLL_CTL_DEL || ptr != NULL);
    samsa_assert((interest & ~(SELECTOR_F_ALL | SAMSA_SELECTOR_F_EDGE)) == 0);
    if (epoll_ctl(sel->epfd, op, fd, &ev) != 0) {
        samsa_error("epoll_ctl(%s) of fd %d failed: %s",
                    op == EPOLL_CTL_ADD   ? "ADD"
                    : op == EPOLL_CTL_MOD ? "MOD"
                                          : "DEL",
                    fd, strerror(errno));
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_selector_add(samsa_selector_t *sel, int fd, uint32_t interest,
                   void *ptr)
{
    return selector_ctl(sel, EPOLL_CTL_ADD, fd, interest, ptr);
}

samsa_err_t
samsa_selector_modify(samsa_selector_t *sel, int fd, uint32_t interest,
                      void *ptr)
{
    return selector_ctl(sel, EPOLL_CTL_MOD, fd, interest, ptr);
}

samsa_err_t
samsa_selector_remove(samsa_selector_t *sel, int fd)
{
    return selector_ctl(sel, EPOLL_CTL_DEL, fd, 0, NULL);
}

/* The eventfd was reported (edge-triggered: nothing to read).  Clear the
 * flag with an exchange: a wake-up before the clear found the flag set
 * and wrote nothing, but the caller has not yet looked at what it was
 * woken for; one after the clear writes again.  The exchange reads the
 * waker's, so what the waker did before waking is visible here. */
static void
selector_drain_wakeup(samsa_selector_t *sel)
{
    (void) atomic_exchange(&sel->wake_pending, false);
}

samsa_err_t
samsa_selector_wait(samsa_selector_t *sel, samsa_selector_event_t *evs,
                    size_t max, int64_t timeout_ms, size_t *nready)
{
    struct epoll_event  raw[SELECTOR_MAX_BATCH];
    int                 n, i;

    *nready = 0;
    if (max > SELECTOR_MAX_BATCH) {
        max = SELECTOR_MAX_BATCH;
    }
    if (timeout_ms < 0) {
        timeout_ms = 0;
    } else if (timeout_ms > INT32_MAX) {
        timeout_ms = INT32_MAX;
    }
    n = epoll_wait(sel->epfd, raw, (int) max, (int) timeout_ms);
    if (sel->announces) {
        /* until the next prepare_wait the owner looks at its queues */
        atomic_store_explicit(&sel->awake, true, memory_order_relaxed);
    }
    if (n < 0) {
        if (errno == EINTR) {
            return SAMSA_ERR_NONE;
        }
        samsa_error("epoll_wait failed: %s", strerror(errno));
        return SAMSA_ERR__IO;
    }
    for (i = 0; i < n; i++) {
        if (raw[i].data.ptr == NULL) {
            selector_drain_wakeup(sel);
            continue;
        }
        evs[*nready].ptr = raw[i].data.ptr;
        evs[*nready].ready = raw[i].events & SELECTOR_F_ALL;
        (*nready)++;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_selector_prepare_wait(samsa_selector_t *sel)
{
    sel->announces = true;
    atomic_store_explicit(&sel->awake, false, memory_order_relaxed);
    /* the store before the owner's next look at its queues (Dekker's
     * pair with the waker's fence) */
    atomic_thread_fence(memory_order_seq_cst);
}

void
samsa_selector_wakeup(samsa_selector_t *sel)
{
    uint64_t  one = 1;

    /* what the caller published before the load of awake */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sel->awake, memory_order_relaxed)) {
        return;
    }
    if (atomic_exchange(&sel->wake_pending, true)) {
        return;
    }
    if (write(sel->wakefd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is saturated, a wake-up is pending anyway */
    }
}
