/* Unit tests for client/admin/admin.c without a broker: configuration errors
 * name the key, bad arguments fail before any I/O, and calls against a
 * closed port or a listener that never answers return the transport error
 * or SAMSA_ERR__TIMED_OUT within their time limit (the timed-out request
 * is failed before the call returns, so nothing outlives it). */
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <samsa/admin.h>

static int64_t
now_ms(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A listening socket on 127.0.0.1 that never accepts (the kernel still
 * completes connections into its backlog); *port gets its port. */
static int
silent_listener(int *port)
{
    struct sockaddr_in  sa;
    socklen_t           len = sizeof(sa);
    int                 fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A port with nothing listening (bound, then closed). */
static int
closed_port(void)
{
    int  port, fd = silent_listener(&port);

    close(fd);
    return port;
}

static samsa_admin_t *
admin_for(const char *bootstrap, const char *setup_timeout_ms)
{
    samsa_conf_t   *conf = samsa_conf_new();
    samsa_admin_t  *a = NULL;
    char            err[256];

    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", bootstrap,
                                    err, sizeof(err)), SAMSA_ERR_NONE);
    if (setup_timeout_ms != NULL) {
        assert_int_equal(samsa_conf_set(conf,
                                        "socket.connection.setup.timeout.ms",
                                        setup_timeout_ms, err, sizeof(err)),
                         SAMSA_ERR_NONE);
    }
    assert_int_equal(samsa_admin_new(conf, &a, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    samsa_conf_free(conf);
    return a;
}

static void
test_admin_config_errors_name_the_key(void **state)
{
    samsa_conf_t   *conf = samsa_conf_new();
    samsa_admin_t  *a = (samsa_admin_t *) 1;
    char            err[256] = "";

    (void) state;
    assert_int_equal(samsa_admin_new(conf, &a, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_null(a);
    assert_non_null(strstr(err, "bootstrap.servers"));
    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "nohostport",
                                    NULL, 0), SAMSA_ERR_NONE);
    assert_int_equal(samsa_admin_new(conf, &a, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'bootstrap.servers'"));
    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "h:99999",
                                    NULL, 0), SAMSA_ERR_NONE);
    assert_int_equal(samsa_admin_new(conf, &a, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_int_equal(samsa_conf_set(conf, "default.api.timeout.ms", "x",
                                    err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "default.api.timeout.ms"));
    samsa_conf_free(conf);
    samsa_admin_free(NULL);
    samsa_admin_result_free(NULL);
}

static void
test_admin_bad_arguments_fail_without_io(void **state)
{
    samsa_admin_t             *a = admin_for("127.0.0.1:1,[::1]:2", NULL);
    samsa_admin_items_t       *items = (samsa_admin_items_t *) 1;
    samsa_tp_results_t        *tpr = (samsa_tp_results_t *) 1;
    samsa_alter_op_t           op = { "retention.ms", 9, "1" };
    samsa_alter_resource_t     r = { SAMSA_RESOURCE_TOPIC, "t", &op, 1 };
    samsa_tp_spec_t            bad = { NULL, 0, 0 };
    samsa_tp_spec_t            neg = { "t", -1, 0 };
    int64_t                    t0 = now_ms();

    (void) state;
    assert_int_equal(samsa_admin_create_topics(a, NULL, 0, false, 1000,
                                               &items), SAMSA_ERR__INVALID_ARG);
    assert_null(items);
    assert_int_equal(samsa_admin_delete_topics(a, NULL, 1, 1000, &items),
                     SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_admin_incremental_alter_configs(a, &r, 1, false,
                                                           1000, &items),
                     SAMSA_ERR__INVALID_ARG);           /* op 9 */
    assert_int_equal(samsa_admin_list_offsets(a, &bad, 1, false, 1000, &tpr),
                     SAMSA_ERR__INVALID_ARG);
    assert_null(tpr);
    assert_int_equal(samsa_admin_delete_records(a, &neg, 1, 1000, &tpr),
                     SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_admin_alter_group_offsets(a, "g", NULL, 0, 1000,
                                                     &tpr),
                     SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_admin_list_group_offsets(a, NULL, NULL, 0, 1000,
                                                    &tpr),
                     SAMSA_ERR__INVALID_ARG);
    assert_true(now_ms() - t0 < 500);                   /* no waiting */
    samsa_admin_free(a);
}

static void
test_admin_closed_port_fails_within_timeout(void **state)
{
    char                  bs[64], err[256];
    samsa_admin_t        *a;
    samsa_topic_descs_t  *td = (samsa_topic_descs_t *) 1;
    int64_t               t0;

    (void) state;
    snprintf(bs, sizeof(bs), "127.0.0.1:%d", closed_port());
    a = admin_for(bs, NULL);
    t0 = now_ms();
    assert_int_equal(samsa_admin_connect(a, 700, err, sizeof(err)),
                     SAMSA_ERR__CLOSED);
    assert_true(now_ms() - t0 >= 650 && now_ms() - t0 < 3000);
    assert_non_null(strstr(err, bs));
    assert_non_null(strstr(err, "refused"));
    t0 = now_ms();
    assert_int_equal(samsa_admin_describe_topics(a, NULL, 0, 300, &td),
                     SAMSA_ERR__CLOSED);
    assert_null(td);
    assert_true(now_ms() - t0 < 2000);
    samsa_admin_free(a);
}

static void
test_admin_silent_broker_times_out(void **state)
{
    char                   bs[64], err[256];
    samsa_admin_t         *a;
    samsa_admin_items_t   *items = NULL;
    samsa_new_topic_t      nt = { "t", 1, 1, NULL, 0 };
    int64_t                t0, took;
    int                    port, fd = silent_listener(&port);

    (void) state;
    snprintf(bs, sizeof(bs), "127.0.0.1:%d", port);
    /* the TCP connect succeeds; ApiVersions is never answered */
    a = admin_for(bs, "400");
    t0 = now_ms();
    assert_int_equal(samsa_admin_create_topics(a, &nt, 1, false, 1200,
                                               &items), SAMSA_ERR__TIMED_OUT);
    took = now_ms() - t0;
    assert_null(items);
    assert_true(took >= 1100 && took < 4000);
    t0 = now_ms();
    assert_int_equal(samsa_admin_connect(a, 300, err, sizeof(err)),
                     SAMSA_ERR__TIMED_OUT);
    assert_true(now_ms() - t0 < 3000);
    samsa_admin_free(a);
    close(fd);
}

/* A fake broker for one connection: answers every ApiVersions (as v0:
 * Metadata 0-12, CreateTopics 2-7) and never anything else; counts the
 * other requests.  Stops when the client closes. */
typedef struct fake {
    int   lfd;
    int   other;            /* requests left unanswered */
} fake_t;

static bool
read_full(int fd, uint8_t *p, size_t n)
{
    ssize_t  r;

    while (n > 0) {
        r = read(fd, p, n);
        if (r <= 0) {
            return false;
        }
        p += r;
        n -= (size_t) r;
    }
    return true;
}

static void *
fake_main(void *arg)
{
    fake_t   *f = arg;
    uint8_t   hdr[12], body[4096];
    uint8_t   resp[] = { 0, 0, 0, 22, 0, 0, 0, 0,     /* size, corr */
                         0, 0, 0, 0, 0, 2,            /* error, 2 keys */
                         0, 3, 0, 0, 0, 12,           /* Metadata 0-12 */
                         0, 19, 0, 2, 0, 7 };         /* CreateTopics 2-7 */
    uint32_t  size;
    int       fd = accept(f->lfd, NULL, NULL);

    while (fd >= 0 && read_full(fd, hdr, 12)) {
        size = (uint32_t) hdr[0] << 24 | (uint32_t) hdr[1] << 16
               | (uint32_t) hdr[2] << 8 | hdr[3];
        if (size < 8 || size - 8 > sizeof(body)
            || !read_full(fd, body, size - 8)) {
            break;
        }
        if (hdr[4] == 0 && hdr[5] == 18) {           /* ApiVersions */
            memcpy(resp + 4, hdr + 8, 4);            /* correlation id */
            if (write(fd, resp, sizeof(resp)) != (ssize_t) sizeof(resp)) {
                break;
            }
        } else {
            f->other++;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static void
test_admin_unanswered_request_times_out(void **state)
{
    char                  bs[64];
    samsa_admin_t        *a;
    samsa_admin_items_t  *items = NULL;
    samsa_new_topic_t     nt = { "t", 1, 1, NULL, 0 };
    fake_t                f = { 0, 0 };
    pthread_t             th;
    int64_t               t0, took;
    int                   port;

    (void) state;
    f.lfd = silent_listener(&port);
    assert_int_equal(pthread_create(&th, NULL, fake_main, &f), 0);
    snprintf(bs, sizeof(bs), "127.0.0.1:%d", port);
    a = admin_for(bs, NULL);
    /* the handshake works; CreateTopics is sent and never answered: the
     * call gives up at its deadline and closes the connection, failing
     * the request before it returns */
    t0 = now_ms();
    assert_int_equal(samsa_admin_create_topics(a, &nt, 1, false, 800,
                                               &items), SAMSA_ERR__TIMED_OUT);
    took = now_ms() - t0;
    assert_null(items);
    assert_true(took >= 750 && took < 3000);
    samsa_admin_free(a);
    assert_int_equal(pthread_join(th, NULL), 0);     /* saw the close */
    assert_int_equal(f.other, 1);
    close(f.lfd);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_admin_config_errors_name_the_key),
        cmocka_unit_test(test_admin_bad_arguments_fail_without_io),
        cmocka_unit_test(test_admin_closed_port_fails_within_timeout),
        cmocka_unit_test(test_admin_silent_broker_times_out),
        cmocka_unit_test(test_admin_unanswered_request_times_out),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
