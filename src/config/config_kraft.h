/*
 * config/config_kraft.h - the KRaft side of the configuration, parsed and
 * checked together: process.roles, node.id, controller.quorum.voters,
 * controller.quorum.bootstrap.servers, controller.listener.names,
 * inter.broker.listener.name and the quorum and broker-lease timeouts, as
 * one samsa_config_kraft_t for the server and the quorum to read.
 *
 * Two modes.  Without process.roles (Samsa's single-node default) the node
 * is broker and controller at once and its own only voter; the voters and
 * bootstrap keys may only name this node.  With process.roles (KRaft
 * cluster mode, as Kafka 4 always is) the checks are Kafka's
 * (KafkaConfig.validateValues): node.id must be set, one of voters or
 * bootstrap servers must be, a controller must be among the voters, a
 * broker-only node must not be, and so on; its log dirs must have been
 * formatted by `samsa-server format`.
 *
 * Threads: filled by samsa_config_load() on the main thread before any
 * other thread starts; read-only afterwards, any thread may read it.
 * Ownership: the samsa_config_kraft_t lives inside its samsa_config_t and
 * everything it points to belongs to it (freed by samsa_config_fini()).
 * The parsers below give the caller arrays to free with samsa_free().
 */
#ifndef SAMSA_CONFIG_CONFIG_KRAFT_H
#define SAMSA_CONFIG_CONFIG_KRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

struct samsa_config;

#define SAMSA_CONFIG_ROLE_F_BROKER      0x1u
#define SAMSA_CONFIG_ROLE_F_CONTROLLER  0x2u

#define SAMSA_CONFIG_KRAFT_HOST_MAX     256     /* with its NUL */

/* One host:port; host is a name or an IP literal (IPv6 without its
 * brackets). */
typedef struct samsa_config_hostport {
    char     host[SAMSA_CONFIG_KRAFT_HOST_MAX];
    int      port;              /* 1..65535; 0 only in a single-node
                                   voter made from a port-0 listener */
} samsa_config_hostport_t;

#define SAMSA_CONFIG_DIR_ID_SIZE        23      /* a Kafka Uuid's text */

/* One entry of controller.quorum.voters: id@host:port; in a dynamic
 * quorum's initial voters (format --initial-controllers) also the voter's
 * metadata directory id, id@host:port:directory-id. */
typedef struct samsa_config_voter {
    int32_t                  id;
    samsa_config_hostport_t  addr;
    char                     dir_id[SAMSA_CONFIG_DIR_ID_SIZE]; /* "": none */
} samsa_config_voter_t;

typedef struct samsa_config_kraft {
    bool                      is_cluster;   /* process.roles was set */
    unsigned                  roles;        /* SAMSA_CONFIG_ROLE_F_* */
    int32_t                   node_id;
    /* controller.quorum.voters in the order given; in single-node mode with
     * the key empty, this node alone (its first controller listener) */
    samsa_config_voter_t     *voters;
    size_t                    nvoters;
    /* a dynamic quorum (KIP-853): cluster mode with
     * controller.quorum.bootstrap.servers and no controller.quorum.voters
     * (only one of them may be set on a controller).  The voters above are
     * then empty after samsa_config_load(); the server fills them from
     * the metadata dir's bootstrap voters file (meta/bootvoters.h) before
     * any thread starts: the initial voter set, as formatted */
    bool                      dynamic;
    /* controller.quorum.bootstrap.servers, in the order given */
    samsa_config_hostport_t  *bootstrap_servers;
    size_t                    nbootstrap_servers;
    /* the first of controller.listener.names (upper case; borrowed from
     * the samsa_config_t), or NULL when it is empty */
    const char               *controller_listener_name;
    /* inter.broker.listener.name (upper case), else the advertised
     * listener named after security.inter.broker.protocol, else the first
     * advertised listener; NULL on a controller-only node */
    char                     *inter_broker_listener_name;
    int32_t                   broker_heartbeat_interval_ms;
    int32_t                   broker_session_timeout_ms;
    int32_t                   election_timeout_ms;   /* controller.quorum.* */
    int32_t                   fetch_timeout_ms;
    int64_t                   max_record_bytes_between_snapshots;
} samsa_config_kraft_t;

/* Parse controller.quorum.voters text: "id@host:port, ..." (empty text:
 * none), id 0..2147483647, port 1..65535, each id once.  On success *out
 * (to free with samsa_free) has *n entries.  SAMSA_ERR__CONFIG with why
 * naming the bad entry, e.g. "'1@localhost' is not of the form
 * {id}@{host}:{port}: missing ':' before the port"; *out NULL then.
 * @thread any */
SAMSA_MUST_CHECK samsa_err_t samsa_config_voters_parse(
    const char *text, samsa_config_voter_t **out, size_t *n, char *why,
    size_t why_size);

/* Parse Kafka's --initial-controllers text (kafka-storage format,
 * KIP-853): "id@host:port:directory-id, ..." (IPv6 hosts in brackets), the
 * directory id 22 URL-safe base64 characters; a missing directory id is
 * an error when need_dir_id.  Else as samsa_config_voters_parse.
 * @thread any */
SAMSA_MUST_CHECK samsa_err_t samsa_config_initial_voters_parse(
    const char *text, bool need_dir_id, samsa_config_voter_t **out,
    size_t *n, char *why, size_t why_size);

/* A dynamic quorum's initial voters, read from the metadata dir after
 * samsa_config_load() (main thread, before any other thread starts):
 * cfg's kraft voters become voters[0..n) (cfg takes the array, from
 * samsa_malloc/calloc).  @thread main */
void samsa_config_kraft_set_voters(struct samsa_config *cfg,
                                   samsa_config_voter_t *voters, size_t n);

/* Parse a host:port list (controller.quorum.bootstrap.servers) the same
 * way; repeats are allowed.  @thread any */
SAMSA_MUST_CHECK samsa_err_t samsa_config_hostports_parse(
    const char *text, samsa_config_hostport_t **out, size_t *n, char *why,
    size_t why_size);

/* True if id is one of k's voters. */
bool samsa_config_kraft_is_voter(const samsa_config_kraft_t *k, int32_t id);

/* Free what k owns and zero it; safe twice. */
void samsa_config_kraft_fini(samsa_config_kraft_t *k);

#endif /* SAMSA_CONFIG_CONFIG_KRAFT_H */
