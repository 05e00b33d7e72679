/*
 * config/config_kraft.c - see config_kraft.h: the voters and bootstrap
 * parsers, and the KRaft cross-key checks of samsa_config_load() with
 * Kafka's messages (KafkaConfig.validateValues, QuorumConfig).
 * Threads: the parsers any; the loader main, during samsa_config_load().
 */
#include "config/config_kraft.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/config_int.h"
#include "util/alloc.h"

#define KRAFT_FORM  "{id}@{host}:{port}"

/* One "id@host:port" into *v. */
static bool
kraft_voter_parse(const char *item, samsa_config_voter_t *v, char *why,
                  size_t why_size)
{
    const char  *at = strchr(item, '@');
    char         id[16], hwhy[512];
    int64_t      num;

    if (at == NULL || at == item || (size_t) (at - item) >= sizeof(id)) {
        snprintf(why, why_size, "'%s' is not of the form " KRAFT_FORM, item);
        return false;
    }
    memcpy(id, item, (size_t) (at - item));
    id[at - item] = '\0';
    if (id[0] == '+' || samsa_config_parse_i64(id, 0, INT32_MAX, &num)
                        != NULL) {
        snprintf(why, why_size, "'%s': the voter id '%s' is not a number "
                 "from 0 to 2147483647", item, id);
        return false;
    }
    if (!samsa_config_net_parse_hostport(at + 1, v->addr.host, &v->addr.port,
                                         1, hwhy, sizeof(hwhy))) {
        snprintf(why, why_size, "'%s' is not of the form " KRAFT_FORM ": %s",
                 item, hwhy);
        return false;
    }
    if (v->addr.host[0] == '\0') {
        snprintf(why, why_size, "'%s' is not of the form " KRAFT_FORM
                 ": missing host", item);
        return false;
    }
    v->id = (int32_t) num;
    return true;
}

samsa_err_t
samsa_config_voters_parse(const char *text, samsa_config_voter_t **out,
                          size_t *n, char *why, size_t why_size)
{
    char                 **items;
    const char            *bad;
    size_t                 i, j, nitems;
    samsa_config_voter_t  *v;
    samsa_err_t            err = SAMSA_ERR_NONE;

    *out = NULL;
    *n = 0;
    bad = samsa_config_split_list(text != NULL ? text : "", &items, &nitems);
    if (bad != NULL) {
        snprintf(why, why_size, "%s", bad);
        samsa_config_strv_free(items, nitems);
        return SAMSA_ERR__CONFIG;
    }
    v = samsa_calloc(nitems + 1, sizeof(*v));
    for (i = 0; err == SAMSA_ERR_NONE && i < nitems; i++) {
        if (!kraft_voter_parse(items[i], &v[i], why, why_size)) {
            err = SAMSA_ERR__CONFIG;
        }
        for (j = 0; err == SAMSA_ERR_NONE && j < i; j++) {
            if (v[j].id == v[i].id) {
                snprintf(why, why_size, "'%s': voter id %d is listed twice",
                         items[i], (int) v[i].id);
                err = SAMSA_ERR__CONFIG;
            }
        }
    }
    samsa_config_strv_free(items, nitems);
    if (err != SAMSA_ERR_NONE) {
        samsa_free(v);
        return err;
    }
    *out = v;
    *n = nitems;
    return SAMSA_ERR_NONE;
}

/* A Kafka Uuid's text form (22 URL-safe base64 characters); the full
 * check (decodes to 16 bytes, not zero) is meta/metaprops.h's. */
static bool
kraft_dir_id_form(const char *s)
{
    return strlen(s) == SAMSA_CONFIG_DIR_ID_SIZE - 1
           && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789-_") == SAMSA_CONFIG_DIR_ID_SIZE - 1;
}

samsa_err_t
samsa_config_initial_voters_parse(const char *text, bool need_dir_id,
                                  samsa_config_voter_t **out, size_t *n,
                                  char *why, size_t why_size)
{
    char                 **items;
    const char            *bad, *at, *colon;
    char                   item[1024];
    size_t                 i, j, nitems, len;
    samsa_config_voter_t  *v;
    samsa_err_t            err = SAMSA_ERR_NONE;

    *out = NULL;
    *n = 0;
    bad = samsa_config_split_list(text != NULL ? text : "", &items, &nitems);
    if (bad != NULL) {
        snprintf(why, why_size, "%s", bad);
        samsa_config_strv_free(items, nitems);
        return SAMSA_ERR__CONFIG;
    }
    v = samsa_calloc(nitems + 1, sizeof(*v));
    for (i = 0; err == SAMSA_ERR_NONE && i < nitems; i++) {
        len = strlen(items[i]);
        if (len >= sizeof(item)) {
            snprintf(why, why_size, "'%.64s...' is too long", items[i]);
            err = SAMSA_ERR__CONFIG;
            break;
        }
        memcpy(item, items[i], len + 1);
        at = strchr(item, '@');
        colon = strrchr(item, ':');
        /* id@host:port:dir-id: the last part is no port number */
        if (at != NULL && colon != NULL && colon > at
            && strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
            if (!kraft_dir_id_form(colon + 1)) {
                snprintf(why, why_size, "'%s': '%s' is not a directory id "
                         "(22 characters of URL-safe base64, as "
                         "`samsa-server random-cluster-id` prints)",
                         items[i], colon + 1);
                err = SAMSA_ERR__CONFIG;
                break;
            }
            snprintf(v[i].dir_id, sizeof(v[i].dir_id), "%s", colon + 1);
            item[colon - item] = '\0';
        } else if (need_dir_id) {
            snprintf(why, why_size, "'%s' is not of the form "
                     KRAFT_FORM ":{directory-id}", items[i]);
            err = SAMSA_ERR__CONFIG;
            break;
        }
        if (!kraft_voter_parse(item, &v[i], why, why_size)) {
            err = SAMSA_ERR__CONFIG;
        }
        for (j = 0; err == SAMSA_ERR_NONE && j < i; j++) {
            if (v[j].id == v[i].id) {
                snprintf(why, why_size, "'%s': voter id %d is listed twice",
                         items[i], (int) v[i].id);
                err = SAMSA_ERR__CONFIG;
            } else if (v[i].dir_id[0] != '\0'
                       && strcmp(v[j].dir_id, v[i].dir_id) == 0) {
                snprintf(why, why_size, "'%s': directory id %s is listed "
                         "twice", items[i], v[i].dir_id);
                err = SAMSA_ERR__CONFIG;
            }
        }
    }
    samsa_config_strv_free(items, nitems);
    if (err != SAMSA_ERR_NONE) {
        samsa_free(v);
        return err;
    }
    *out = v;
    *n = nitems;
    return SAMSA_ERR_NONE;
}

void
samsa_config_kraft_set_voters(samsa_config_t *cfg,
                              samsa_config_voter_t *voters, size_t n)
{
    samsa_free(cfg->kraft.voters);
    cfg->kraft.voters = voters;
    cfg->kraft.nvoters = n;
}

samsa_err_t
samsa_config_hostports_parse(const char *text, samsa_config_hostport_t **out,
                             size_t *n, char *why, size_t why_size)
{
    char                    **items;
    const char               *bad;
    size_t                    i, nitems;
    samsa_config_hostport_t  *hp;
    samsa_err_t               err = SAMSA_ERR_NONE;

    *out = NULL;
    *n = 0;
    bad = samsa_config_split_list(text != NULL ? text : "", &items, &nitems);
    if (bad != NULL) {
        snprintf(why, why_size, "%s", bad);
        samsa_config_strv_free(items, nitems);
        return SAMSA_ERR__CONFIG;
    }
    hp = samsa_calloc(nitems + 1, sizeof(*hp));
    for (i = 0; err == SAMSA_ERR_NONE && i < nitems; i++) {
        if (!samsa_config_net_parse_hostport(items[i], hp[i].host,
                                             &hp[i].port, 1, why,
                                             why_size)) {
            err = SAMSA_ERR__CONFIG;
        } else if (hp[i].host[0] == '\0') {
            snprintf(why, why_size, "'%s': missing host", items[i]);
            err = SAMSA_ERR__CONFIG;
        }
    }
    samsa_config_strv_free(items, nitems);
    if (err != SAMSA_ERR_NONE) {
        samsa_free(hp);
        return err;
    }
    *out = hp;
    *n = nitems;
    return SAMSA_ERR_NONE;
}

bool
samsa_config_kraft_is_voter(const samsa_config_kraft_t *k, int32_t id)
{
    size_t  i;

    for (i = 0; i < k->nvoters; i++) {
        if (k->voters[i].id == id) {
            return true;
        }
    }
    return false;
}

void
samsa_config_kraft_fini(samsa_config_kraft_t *k)
{
    samsa_free(k->voters);
    samsa_free(k->bootstrap_servers);
    samsa_free(k->inter_broker_listener_name);
    memset(k, 0, sizeof(*k));
}

/* "[1, 2, 3]": the voter ids, as Kafka prints a set. */
static const char *
kraft_voter_ids(const samsa_config_kraft_t *k, char *buf, size_t size)
{
    size_t  i, o = 0;

    o += (size_t) snprintf(buf, size, "[");
    for (i = 0; i < k->nvoters && o < size; i++) {
        o += (size_t) snprintf(buf + o, size - o, "%s%d", i > 0 ? ", " : "",
                               (int) k->voters[i].id);
    }
    if (o < size) {
        snprintf(buf + o, size - o, "]");
    }
    return buf;
}

/* The two lists, parsed; errors name the key and the entry. */
static samsa_err_t
kraft_fill_lists(samsa_config_loader_t *ld)
{
    samsa_config_kraft_t  *k = &ld->cfg->kraft;
    char                   why[512];

    if (samsa_config_voters_parse(
            samsa_config_str(ld->cfg, "controller.quorum.voters"),
            &k->voters, &k->nvoters, why, sizeof(why)) != SAMSA_ERR_NONE) {
        return samsa_config_bad(ld, "controller.quorum.voters", "%s", why);
    }
    if (samsa_config_hostports_parse(
            samsa_config_str(ld->cfg, "controller.quorum.bootstrap.servers"),
            &k->bootstrap_servers, &k->nbootstrap_servers, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        return samsa_config_bad(ld, "controller.quorum.bootstrap.servers",
                                "%s", why);
    }
    return SAMSA_ERR_NONE;
}

/* Single-node mode: the quorum keys may only name this node; an empty
 * voters key makes this node the only voter. */
static samsa_err_t
kraft_check_single(samsa_config_loader_t *ld)
{
    samsa_config_kraft_t     *k = &ld->cfg->kraft;
    const samsa_listener_t   *l;
    const samsa_config_voter_t *v;
    size_t                    i;

    for (i = 0; i < k->nvoters; i++) {
        v = &k->voters[i];
        if (v->id != k->node_id
            || !samsa_config_net_is_own_controller(ld, v->addr.host,
                                                   v->addr.port)) {
            return samsa_config_bad(ld, "controller.quorum.voters", "'%d@%s:"
                                    "%d' is not this node (node.id=%d and its "
                                    "controller listener); a multi-node "
                                    "quorum needs process.roles set (KRaft "
                                    "cluster mode, see `samsa-server "
                                    "format`)", (int) v->id, v->addr.host,
                                    v->addr.port, (int) k->node_id);
        }
    }
    for (i = 0; i < k->nbootstrap_servers; i++) {
        if (!samsa_config_net_is_own_controller(
                ld, k->bootstrap_servers[i].host,
                k->bootstrap_servers[i].port)) {
            return samsa_config_bad(ld, "controller.quorum.bootstrap.servers",
                                    "'%s:%d' is not this node's controller "
                                    "listener; a multi-node quorum needs "
                                    "process.roles set (KRaft cluster mode)",
                                    k->bootstrap_servers[i].host,
                                    k->bootstrap_servers[i].port);
        }
    }
    for (i = 0; k->nvoters == 0 && i < ld->cfg->nlisteners; i++) {
        l = &ld->cfg->listeners[i];
        if (l->is_controller) {
            /* the parse of an empty list left an empty array here */
            samsa_free(k->voters);
            k->voters = samsa_calloc(1, sizeof(*k->voters));
            k->voters[0].id = k->node_id;
            snprintf(k->voters[0].addr.host, sizeof(k->voters[0].addr.host),
                     "%s", l->host[0] != '\0' ? l->host : "localhost");
            k->voters[0].addr.port = l->port;
            k->nvoters = 1;
        }
    }
    return SAMSA_ERR_NONE;
}

/* KRaft cluster mode: Kafka's checks, in Kafka's words. */
static samsa_err_t
kraft_check_cluster(samsa_config_loader_t *ld)
{
    const char            *key = "controller.quorum.voters";
    samsa_config_kraft_t  *k = &ld->cfg->kraft;
    char                   ids[256];

    if (strcmp(samsa_config_source(ld->cfg, "node.id"), "default") == 0) {
        snprintf(ld->errstr, ld->errstr_size, "Missing configuration "
                 "'node.id' which is required when 'process.roles' is "
                 "defined (i.e. when running in KRaft mode)");
        return SAMSA_ERR__CONFIG;
    }
    if (k->nvoters == 0 && k->nbootstrap_servers == 0) {
        return samsa_config_bad(ld, key, "If using process.roles, either "
                                "controller.quorum.bootstrap.servers must "
                                "contain the set of bootstrap controllers or "
                                "controller.quorum.voters must contain a "
                                "parseable set of controllers");
    }
    if ((k->roles & SAMSA_CONFIG_ROLE_F_CONTROLLER) && k->nvoters > 0
        && k->nbootstrap_servers > 0) {
        return samsa_config_bad(ld, key, "Only one of "
                                "controller.quorum.voters and "
                                "controller.quorum.bootstrap.servers should "
                                "be set on a node with the 'controller' "
                                "role: controller.quorum.voters for a static "
                                "quorum, controller.quorum.bootstrap.servers "
                                "for a dynamic one (KIP-853; its voters come "
                                "from `samsa-server format --standalone`, "
                                "--initial-controllers or "
                                "--no-initial-controllers)");
    }
    k->dynamic = k->nvoters == 0;
    if ((k->roles & SAMSA_CONFIG_ROLE_F_CONTROLLER) && k->nvoters > 0
        && !samsa_config_kraft_is_voter(k, k->node_id)) {
        return samsa_config_bad(ld, key, "If process.roles contains the "
                                "'controller' role, the node id %d must be "
                                "included in the set of voters "
                                "controller.quorum.voters=%s",
                                (int) k->node_id,
                                kraft_voter_ids(k, ids, sizeof(ids)));
    }
    if (k->roles == SAMSA_CONFIG_ROLE_F_BROKER
        && samsa_config_kraft_is_voter(k, k->node_id)) {
        return samsa_config_bad(ld, key, "If process.roles contains just "
                                "the 'broker' role, the node id %d must not "
                                "be included in the set of voters "
                                "controller.quorum.voters=%s",
                                (int) k->node_id,
                                kraft_voter_ids(k, ids, sizeof(ids)));
    }
    return SAMSA_ERR_NONE;
}

static const samsa_listener_t *
kraft_find_advertised(const samsa_config_t *cfg, const char *name)
{
    size_t  i;

    for (i = 0; i < cfg->nadvertised_listeners; i++) {
        if (strcasecmp(cfg->advertised_listeners[i].name, name) == 0) {
            return &cfg->advertised_listeners[i];
        }
    }
    return NULL;
}

/* The advertised listener names, "A, B", for a message. */
static const char *
kraft_advertised_names(const samsa_config_t *cfg, char *buf, size_t size)
{
    size_t  i, o = 0;

    buf[0] = '\0';
    for (i = 0; i < cfg->nadvertised_listeners && o < size; i++) {
        o += (size_t) snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "",
                               cfg->advertised_listeners[i].name);
    }
    return buf;
}

/* inter.broker.listener.name against security.inter.broker.protocol and
 * the advertised listeners (KafkaConfig.interBrokerListenerName and
 * validateValues); then the listener brokers will talk to each other on. */
static samsa_err_t
kraft_fill_inter_broker(samsa_config_loader_t *ld)
{
    const char                *key = "inter.broker.listener.name";
    samsa_config_t            *cfg = ld->cfg;
    const char                *name = samsa_config_str(cfg, key);
    const samsa_listener_t    *l;
    char                       names[256];
    size_t                     i;

    if (name != NULL && strcmp(samsa_config_source(
                                   cfg, "security.inter.broker.protocol"),
                               "default") != 0) {
        return samsa_config_bad(ld, key, "Only one of "
                                "inter.broker.listener.name and "
                                "security.inter.broker.protocol should be "
                                "set");
    }
    if (!cfg->role_broker) {
        return SAMSA_ERR_NONE;
    }
    if (name != NULL) {
        for (i = 0; i < cfg->ncontroller_listener_names; i++) {
            if (strcasecmp(cfg->controller_listener_names[i], name) == 0) {
                return samsa_config_bad(ld, key, "'%s' is a controller "
                                        "listener (controller.listener."
                                        "names); brokers talk to each other "
                                        "on a broker listener", name);
            }
        }
        if (kraft_find_advertised(cfg, name) == NULL) {
            return samsa_config_bad(ld, key, "inter.broker.listener.name "
                                    "must be a listener name defined in "
                                    "advertised.listeners. The valid options "
                                    "based on currently configured listeners "
                                    "are %s", kraft_advertised_names(
                                        cfg, names, sizeof(names)));
        }
    } else {
        name = samsa_config_str(cfg, "security.inter.broker.protocol");
    }
    l = kraft_find_advertised(cfg, name);
    if (l == NULL && cfg->nadvertised_listeners > 0) {
        l = &cfg->advertised_listeners[0];
    }
    if (l != NULL) {
        cfg->kraft.inter_broker_listener_name = samsa_strdup(l->name);
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_config_kraft_load(samsa_config_loader_t *ld)
{
    samsa_config_t        *cfg = ld->cfg;
    samsa_config_kraft_t  *k = &cfg->kraft;
    samsa_err_t            err;

    k->is_cluster = samsa_config_is_set(cfg, "process.roles");
    k->roles = (cfg->role_broker ? SAMSA_CONFIG_ROLE_F_BROKER : 0)
               | (cfg->role_controller ? SAMSA_CONFIG_ROLE_F_CONTROLLER : 0);
    k->node_id = cfg->node_id;
    k->controller_listener_name = cfg->ncontroller_listener_names > 0
                                  ? cfg->controller_listener_names[0] : NULL;
    k->broker_heartbeat_interval_ms =
        samsa_config_int(cfg, "broker.heartbeat.interval.ms");
    k->broker_session_timeout_ms =
        samsa_config_int(cfg, "broker.session.timeout.ms");
    k->election_timeout_ms =
        samsa_config_int(cfg, "controller.quorum.election.timeout.ms");
    k->fetch_timeout_ms =
        samsa_config_int(cfg, "controller.quorum.fetch.timeout.ms");
    k->max_record_bytes_between_snapshots = samsa_config_long(
        cfg, "metadata.log.max.record.bytes.between.snapshots");
    if ((err = kraft_fill_lists(ld)) != SAMSA_ERR_NONE) {
        return err;
    }
    err = k->is_cluster ? kraft_check_cluster(ld) : kraft_check_single(ld);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    return kraft_fill_inter_broker(ld);
}
