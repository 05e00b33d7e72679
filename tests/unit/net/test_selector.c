/* Unit tests for net/selector.c: registering sockets, changing their
 * interest, waking a wait from another thread, deregistering. */
#include "unit.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/selector.h"
#include "util/time.h"

typedef struct sel_pair {
    samsa_selector_t  sel;
    int               fd;       /* registered end */
    int               peer;
} sel_pair_t;

static void
pair_open(sel_pair_t *p)
{
    int  sv[2];

    assert_int_equal(samsa_selector_init(&p->sel), SAMSA_ERR_NONE);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv),
                     0);
    p->fd = sv[0];
    p->peer = sv[1];
}

static void
pair_close(sel_pair_t *p)
{
    close(p->fd);
    if (p->peer >= 0) {
        close(p->peer);
    }
    samsa_selector_fini(&p->sel);
}

static size_t
wait_n(samsa_selector_t *sel, samsa_selector_event_t *evs, int64_t ms)
{
    size_t  n = 99;

    assert_int_equal(samsa_selector_wait(sel, evs, 8, ms, &n),
                     SAMSA_ERR_NONE);
    return n;
}

static void
test_selector_reports_readable_with_its_pointer(void **state)
{
    sel_pair_t              p;
    samsa_selector_event_t  evs[8];
    int                     tag;

    (void) state;
    pair_open(&p);
    assert_int_equal(samsa_selector_add(&p.sel, p.fd, SAMSA_SELECTOR_F_READ,
                                        &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 0), 0);
    assert_int_equal(write(p.peer, "x", 1), 1);
    assert_int_equal(wait_n(&p.sel, evs, 1000), 1);
    assert_ptr_equal(evs[0].ptr, &tag);
    assert_int_equal(evs[0].ready, SAMSA_SELECTOR_F_READ);
    /* registering the same socket twice is refused */
    assert_int_equal(samsa_selector_add(&p.sel, p.fd, SAMSA_SELECTOR_F_READ,
                                        &tag),
                     SAMSA_ERR__IO);
    pair_close(&p);
}

static void
test_selector_interest_change(void **state)
{
    sel_pair_t              p;
    samsa_selector_event_t  evs[8];
    int                     tag;

    (void) state;
    pair_open(&p);
    assert_int_equal(write(p.peer, "x", 1), 1);
    /* writable only: the pending byte is not reported */
    assert_int_equal(samsa_selector_add(&p.sel, p.fd, SAMSA_SELECTOR_F_WRITE,
                                        &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 0), 1);
    assert_int_equal(evs[0].ready, SAMSA_SELECTOR_F_WRITE);
    /* both */
    assert_int_equal(samsa_selector_modify(&p.sel, p.fd,
                                           SAMSA_SELECTOR_F_READ
                                               | SAMSA_SELECTOR_F_WRITE,
                                           &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 0), 1);
    assert_int_equal(evs[0].ready,
                     SAMSA_SELECTOR_F_READ | SAMSA_SELECTOR_F_WRITE);
    /* none (muted, nothing to write): silent although readable */
    assert_int_equal(samsa_selector_modify(&p.sel, p.fd, 0, &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 50), 0);
    /* ...but a hang-up is reported whatever the interest */
    close(p.peer);
    p.peer = -1;
    assert_int_equal(wait_n(&p.sel, evs, 1000), 1);
    assert_true(evs[0].ready & SAMSA_SELECTOR_F_HUP);
    assert_false(evs[0].ready & SAMSA_SELECTOR_F_READ);
    pair_close(&p);
}

static void
test_selector_remove(void **state)
{
    sel_pair_t              p;
    samsa_selector_event_t  evs[8];
    int                     tag;

    (void) state;
    pair_open(&p);
    assert_int_equal(samsa_selector_add(&p.sel, p.fd, SAMSA_SELECTOR_F_READ,
                                        &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_selector_remove(&p.sel, p.fd), SAMSA_ERR_NONE);
    assert_int_equal(write(p.peer, "x", 1), 1);
    assert_int_equal(wait_n(&p.sel, evs, 50), 0);
    /* not registered any more: changing or removing it again fails */
    assert_int_equal(samsa_selector_remove(&p.sel, p.fd), SAMSA_ERR__IO);
    assert_int_equal(samsa_selector_modify(&p.sel, p.fd,
                                           SAMSA_SELECTOR_F_READ, &tag),
                     SAMSA_ERR__IO);
    /* and it can come back */
    assert_int_equal(samsa_selector_add(&p.sel, p.fd, SAMSA_SELECTOR_F_READ,
                                        &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 1000), 1);
    assert_ptr_equal(evs[0].ptr, &tag);
    pair_close(&p);
}

typedef struct waker {
    samsa_selector_t  *sel;
    _Atomic int        flag;    /* what the waker publishes */
} waker_t;

static void *
waker_main(void *arg)
{
    waker_t  *w = arg;

    usleep(100 * 1000);
    atomic_store_explicit(&w->flag, 1, memory_order_relaxed);
    samsa_selector_wakeup(w->sel);
    return NULL;
}

static void
test_selector_wakeup_from_another_thread(void **state)
{
    samsa_selector_t        sel;
    samsa_selector_event_t  evs[8];
    waker_t                 w;
    pthread_t               t;
    int64_t                 t0, waited;

    (void) state;
    assert_int_equal(samsa_selector_init(&sel), SAMSA_ERR_NONE);
    w.sel = &sel;
    atomic_init(&w.flag, 0);
    t0 = samsa_now_ms();
    assert_int_equal(pthread_create(&t, NULL, waker_main, &w), 0);
    /* a 10 s wait that the other thread ends after 100 ms; the wake-up
     * itself is not an event */
    while (atomic_load_explicit(&w.flag, memory_order_relaxed) == 0) {
        assert_int_equal(wait_n(&sel, evs, 10000), 0);
        assert_true(samsa_now_ms() - t0 < 5000);
    }
    waited = samsa_now_ms() - t0;
    assert_true(waited >= 90);
    assert_int_equal(pthread_join(t, NULL), 0);
    /* consumed: the next wait sleeps its full timeout */
    t0 = samsa_now_ms();
    assert_int_equal(wait_n(&sel, evs, 100), 0);
    assert_true(samsa_now_ms() - t0 >= 90);
    /* wake-ups before a wait coalesce and end exactly that wait */
    samsa_selector_wakeup(&sel);
    samsa_selector_wakeup(&sel);
    samsa_selector_wakeup(&sel);
    t0 = samsa_now_ms();
    assert_int_equal(wait_n(&sel, evs, 10000), 0);
    assert_true(samsa_now_ms() - t0 < 5000);
    t0 = samsa_now_ms();
    assert_int_equal(wait_n(&sel, evs, 100), 0);
    assert_true(samsa_now_ms() - t0 >= 90);
    samsa_selector_fini(&sel);
    samsa_selector_fini(&sel);          /* harmless twice */
}

/* An owner that announces its waits: a wake-up while it is awake (after
 * a wait returned, before the next prepare_wait) writes nothing, one
 * after the announcement ends the wait. */
static void
test_selector_announced_waits_skip_wakeups_while_awake(void **state)
{
    samsa_selector_t        sel;
    samsa_selector_event_t  evs[8];
    int64_t                 t0;

    (void) state;
    assert_int_equal(samsa_selector_init(&sel), SAMSA_ERR_NONE);
    samsa_selector_prepare_wait(&sel);
    assert_int_equal(wait_n(&sel, evs, 0), 0);          /* awake now */
    samsa_selector_wakeup(&sel);                        /* skipped */
    t0 = samsa_now_ms();
    assert_int_equal(wait_n(&sel, evs, 100), 0);
    assert_true(samsa_now_ms() - t0 >= 90);
    samsa_selector_prepare_wait(&sel);
    samsa_selector_wakeup(&sel);                        /* written */
    t0 = samsa_now_ms();
    assert_int_equal(wait_n(&sel, evs, 10000), 0);
    assert_true(samsa_now_ms() - t0 < 5000);
    samsa_selector_fini(&sel);
}

/* Many wake-ups against an owner that announces, checks, then waits 10 s:
 * none is lost (each round would take 10 s if one were). */
#define ROUNDS  2000

typedef struct pinger {
    samsa_selector_t  *sel;
    _Atomic int        posted;  /* what the waker publishes */
    _Atomic int        seen;    /* what the owner took */
} pinger_t;

static void *
pinger_main(void *arg)
{
    pinger_t  *p = arg;
    int        i;

    for (i = 1; i <= ROUNDS; i++) {
        while (atomic_load(&p->seen) < i - 1) {
            sched_yield();  /* one at a time: each taken before the next */
        }
        atomic_store(&p->posted, i);
        samsa_selector_wakeup(p->sel);
    }
    return NULL;
}

static void
test_selector_announced_waits_lose_no_wakeup(void **state)
{
    samsa_selector_t        sel;
    samsa_selector_event_t  evs[8];
    pinger_t                p;
    pthread_t               t;
    int64_t                 t0;
    int                     got;

    (void) state;
    assert_int_equal(samsa_selector_init(&sel), SAMSA_ERR_NONE);
    p.sel = &sel;
    atomic_init(&p.posted, 0);
    atomic_init(&p.seen, 0);
    assert_int_equal(pthread_create(&t, NULL, pinger_main, &p), 0);
    while (atomic_load(&p.seen) < ROUNDS) {
        samsa_selector_prepare_wait(&sel);
        got = atomic_load(&p.posted);
        if (got > atomic_load(&p.seen)) {
            atomic_store(&p.seen, got);
            continue;                                   /* look again */
        }
        t0 = samsa_now_ms();
        (void) wait_n(&sel, evs, 10000);
        assert_true(samsa_now_ms() - t0 < 5000);        /* not lost */
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    samsa_selector_fini(&sel);
}

/* SAMSA_SELECTOR_F_EDGE: readiness is reported when bytes arrive, not
 * again while they wait unread. */
static void
test_selector_edge_triggered(void **state)
{
    sel_pair_t              p;
    samsa_selector_event_t  evs[8];
    int                     tag;

    (void) state;
    pair_open(&p);
    assert_int_equal(samsa_selector_add(&p.sel, p.fd,
                                        SAMSA_SELECTOR_F_READ
                                            | SAMSA_SELECTOR_F_EDGE,
                                        &tag),
                     SAMSA_ERR_NONE);
    assert_int_equal(wait_n(&p.sel, evs, 0), 0);
    assert_int_equal(write(p.peer, "x", 1), 1);
    assert_int_equal(wait_n(&p.sel, evs, 1000), 1);
    assert_ptr_equal(evs[0].ptr, &tag);
    assert_true(evs[0].ready & SAMSA_SELECTOR_F_READ);
    assert_int_equal(wait_n(&p.sel, evs, 50), 0);       /* unread: no news */
    assert_int_equal(write(p.peer, "y", 1), 1);
    assert_int_equal(wait_n(&p.sel, evs, 1000), 1);     /* new bytes: news */
    pair_close(&p);
}

static void
test_selector_bad_fd_is_an_error(void **state)
{
    samsa_selector_t  sel;
    int               tag;

    (void) state;
    assert_int_equal(samsa_selector_init(&sel), SAMSA_ERR_NONE);
    assert_int_equal(samsa_selector_add(&sel, -1, SAMSA_SELECTOR_F_READ,
                                        &tag),
                     SAMSA_ERR__IO);
    samsa_selector_fini(&sel);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_selector_reports_readable_with_its_pointer),
        cmocka_unit_test(test_selector_interest_change),
        cmocka_unit_test(test_selector_remove),
        cmocka_unit_test(test_selector_wakeup_from_another_thread),
        cmocka_unit_test(test_selector_announced_waits_skip_wakeups_while_awake),
        cmocka_unit_test(test_selector_announced_waits_lose_no_wakeup),
        cmocka_unit_test(test_selector_edge_triggered),
        cmocka_unit_test(test_selector_bad_fd_is_an_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
