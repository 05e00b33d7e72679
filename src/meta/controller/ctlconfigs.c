/*
 * meta/controller/ctlconfigs.c - the controller's AlterConfigs and
 * IncrementalAlterConfigs for topic and broker resources (dynamic broker
 * configs, meta/brokercfg.h), as Kafka's ControllerApis
 * and ConfigurationControlManager do them: compute the resource's new set
 * of overrides, validate the whole set (meta/topic_config.h), and write a
 * ConfigRecord for each key whose value changes (a null value deletes).
 * Threads: the controller thread (see controller_int.h).
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <string.h>

#include "meta/brokercfg.h"
#include "meta/topic_config.h"
#include "meta/topic_name.h"
#include "util/diag.h"

/* ConfigResource.Type names, for messages. */
static const char *
ctl_resource_type_name(int8_t type)
{
    switch (type) {
    case 2:  return "TOPIC";
    case 4:  return "BROKER";
    case 8:  return "BROKER_LOGGER";
    case 16: return "CLIENT_METRICS";
    case 32: return "GROUP";
    default: return NULL;
    }
}

static const char *const  ctl_op_names[] = {
    "SET", "DELETE", "APPEND", "SUBTRACT",
};

/* A resource's overrides while an alter computes them. */
typedef struct ctl_cfgset {
    samsa_image_config_t  *cfgs;
    size_t                 n;
    size_t                 cap;
} ctl_cfgset_t;

static samsa_image_config_t *
ctl_cfgset_find(ctl_cfgset_t *set, const char *name)
{
    size_t  i;

    for (i = 0; i < set->n; i++) {
        if (strcmp(set->cfgs[i].name, name) == 0) {
            return &set->cfgs[i];
        }
    }
    return NULL;
}

/* Set name to value (NULL: remove). */
static void
ctl_cfgset_put(ctl_cfgset_t *set, samsa_arena_t *arena, const char *name,
               const char *value)
{
    samsa_image_config_t  *c = ctl_cfgset_find(set, name);
    samsa_image_config_t  *bigger;

    if (c != NULL && value == NULL) {
        *c = set->cfgs[--set->n];
        return;
    }
    if (c != NULL) {
        c->value = value;
        return;
    }
    if (value == NULL) {
        return;
    }
    if (set->n == set->cap) {
        set->cap = set->cap * 2 + 8;
        bigger = samsa_arena_calloc(arena, set->cap, sizeof(*bigger));
        if (set->n > 0) {
            memcpy(bigger, set->cfgs, set->n * sizeof(*bigger));
        }
        set->cfgs = bigger;
    }
    set->cfgs[set->n].name = name;
    set->cfgs[set->n].value = value;
    set->n++;
}

/* Like put, but keeps a NULL value (so the validator refuses it). */
static void
ctl_cfgset_put_raw(ctl_cfgset_t *set, samsa_arena_t *arena, const char *name,
                   const char *value)
{
    samsa_image_config_t  *c;

    ctl_cfgset_put(set, arena, name, value != NULL ? value : "");
    c = ctl_cfgset_find(set, name);
    c->value = value;
}

/* APPEND or SUBTRACT the comma-separated items of value to or from cur
 * (Kafka's getParts: a missing value is the key's default). */
static const char *
ctl_list_op(const samsa_config_def_t *def, const char *cur,
            const char *value, bool append, samsa_arena_t *arena)
{
    size_t        cap = strlen(cur != NULL ? cur : def->dflt)
                        + strlen(value != NULL ? value : "") + 2;
    char         *out = samsa_arena_alloc(arena, cap), *items, *it, *save;
    char         *vals, *v, *vsave;
    size_t        o = 0;
    bool          drop, seen;

    out[0] = '\0';
    items = samsa_arena_strndup(arena, cur != NULL ? cur : def->dflt,
                                strlen(cur != NULL ? cur : def->dflt));
    for (it = strtok_r(items, ",", &save); it != NULL;
         it = strtok_r(NULL, ",", &save)) {
        drop = false;
        vals = samsa_arena_strndup(arena, value != NULL ? value : "",
                                   strlen(value != NULL ? value : ""));
        for (v = strtok_r(vals, ",", &vsave); !append && v != NULL;
             v = strtok_r(NULL, ",", &vsave)) {
            drop = drop || strcmp(v, it) == 0;
        }
        if (!drop) {
            o += (size_t) snprintf(out + o, cap - o, "%s%s", o > 0 ? "," : "",
                                   it);
        }
    }
    vals = samsa_arena_strndup(arena, value != NULL ? value : "",
                               strlen(value != NULL ? value : ""));
    for (v = strtok_r(vals, ",", &vsave); append && v != NULL;
         v = strtok_r(NULL, ",", &vsave)) {
        items = samsa_arena_strndup(arena, out, o);
        seen = false;
        for (it = strtok_r(items, ",", &save); it != NULL && !seen;
             it = strtok_r(NULL, ",", &save)) {
            seen = strcmp(it, v) == 0;
        }
        if (!seen) {
            o += (size_t) snprintf(out + o, cap - o, "%s%s", o > 0 ? "," : "",
                                   v);
        }
    }
    return out;
}

/* The new overrides of one resource from its ops, or an error in r. */
static bool
ctl_alter_compute(const samsa_image_topic_t *topic,
                  const samsa_controller_alter_config_t *res,
                  bool incremental, samsa_arena_t *arena, ctl_cfgset_t *set,
                  samsa_controller_result_t *r)
{
    const samsa_config_def_t        *def;
    samsa_image_config_t            *cur;
    size_t                           i;

    memset(set, 0, sizeof(*set));
    for (i = 0; incremental && i < topic->nconfigs; i++) {
        ctl_cfgset_put(set, arena, topic->configs[i].name,
                       topic->configs[i].value);
    }
    for (i = 0; i < res->nops; i++) {
        const samsa_controller_config_op_t  *op = &res->ops[i];

        if (!incremental) {
            ctl_cfgset_put_raw(set, arena, op->name, op->value);
            continue;
        }
        if (op->op < SAMSA_CONFIG_OP_SET || op->op > SAMSA_CONFIG_OP_SUBTRACT) {
            r->error = SAMSA_ERR_INVALID_REQUEST;
            r->message = samsa_ctl_msg(arena, "Unknown operation type %d",
                                       (int) op->op);
            return false;
        }
        if (op->op == SAMSA_CONFIG_OP_SET) {
            ctl_cfgset_put_raw(set, arena, op->name, op->value);
            continue;
        }
        if (op->op == SAMSA_CONFIG_OP_DELETE) {
            ctl_cfgset_put(set, arena, op->name, NULL);
            continue;
        }
        def = samsa_topic_config_find(op->name);
        if (def == NULL || def->type != SAMSA_CONFIG_LIST) {
            r->error = SAMSA_ERR_INVALID_CONFIG;
            r->message = samsa_ctl_msg(arena, "Can't %s to key %s because "
                                       "its type is not LIST.",
                                       ctl_op_names[op->op], op->name);
            return false;
        }
        cur = ctl_cfgset_find(set, op->name);
        ctl_cfgset_put(set, arena, op->name,
                       ctl_list_op(def, cur != NULL ? cur->value : NULL,
                                   op->value,
                                   op->op == SAMSA_CONFIG_OP_APPEND, arena));
    }
    return true;
}

static void
ctl_add_config_record(samsa_ctlbatch_t *b, int8_t type, samsa_slice_t topic,
                      const char *name, const char *value)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    samsa_ConfigRecord_init(&rec.u.ConfigRecord);
    rec.u.ConfigRecord.ResourceType = type;
    rec.u.ConfigRecord.ResourceName = topic;
    rec.u.ConfigRecord.Name = samsa_slice_cstr(name);
    rec.u.ConfigRecord.Value = value != NULL ? samsa_slice_cstr(value)
                                             : SAMSA_SLICE_NULL;
    samsa_ctlbatch_add(b, &rec);
}

/* One ConfigRecord per key whose value changes (Kafka's
 * legacyAlterConfigResource / incrementalAlterConfigResource). */
static void
ctl_alter_records(samsa_ctlbatch_t *b, int8_t type,
                  const samsa_image_topic_t *topic, const ctl_cfgset_t *set)
{
    const char  *old;
    size_t       i, changes = 0;

    for (i = 0; i < set->n; i++) {
        old = samsa_image_topic_config(topic, set->cfgs[i].name);
        changes += old == NULL || strcmp(old, set->cfgs[i].value) != 0;
    }
    for (i = 0; i < topic->nconfigs; i++) {
        changes += ctl_cfgset_find((ctl_cfgset_t *) set,
                                   topic->configs[i].name) == NULL;
    }
    if (!samsa_ctlbatch_room(b, (int64_t) changes)) {
        return;
    }
    for (i = 0; i < set->n; i++) {
        old = samsa_image_topic_config(topic, set->cfgs[i].name);
        if (old == NULL || strcmp(old, set->cfgs[i].value) != 0) {
            ctl_add_config_record(b, type, samsa_slice_cstr(topic->name),
                                  set->cfgs[i].name, set->cfgs[i].value);
        }
    }
    for (i = 0; i < topic->nconfigs; i++) {
        if (ctl_cfgset_find((ctl_cfgset_t *) set, topic->configs[i].name)
            == NULL) {
            ctl_add_config_record(b, type, samsa_slice_cstr(topic->name),
                                  topic->configs[i].name, NULL);
        }
    }
}

/* The resource's checks before its configs (ControllerApis and
 * ConfigurationControlManager.checkConfigResource, then the existence
 * check); the topic, or NULL with an error in r. */
static const samsa_image_topic_t *
ctl_alter_resource(samsa_ctlbatch_t *b,
                   const samsa_controller_alter_config_t *res,
                   samsa_arena_t *arena, samsa_controller_result_t *r)
{
    const samsa_image_topic_t  *topic;
    const char                 *type = ctl_resource_type_name(
                                           res->resource_type);
    char                        err[512];

    if (type == NULL) {
        r->error = SAMSA_ERR_UNSUPPORTED_VERSION;
        r->message = samsa_ctl_msg(arena, "Unknown resource type %d.",
                                   (int) res->resource_type);
        return NULL;
    }
    if (res->resource_type != SAMSA_CONFIG_RESOURCE_TOPIC) {
        r->error = SAMSA_ERR_INVALID_REQUEST;
        r->message = samsa_ctl_msg(arena, "Unsupported configuration "
                                   "resource type %s.", type);
        return NULL;
    }
    if (samsa_topic_name_validate(res->resource_name.ptr,
                                  res->resource_name.len, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        r->error = SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
        r->message = samsa_ctl_msg(arena, "%s", err);
        return NULL;
    }
    topic = samsa_image_delta_topic_find(b->delta, res->resource_name.ptr,
                                         res->resource_name.len);
    if (topic == NULL) {
        r->error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        r->message = samsa_ctl_msg(arena, "The topic '%.*s' does not exist.",
                                   (int) res->resource_name.len,
                                   res->resource_name.ptr);
    }
    return topic;
}

/* A BROKER resource's name: "" (the cluster-wide default) or a broker id
 * (ControllerConfigurationValidator). */
static bool
ctl_broker_name_ok(samsa_slice_t name, samsa_arena_t *arena,
                   samsa_controller_result_t *r)
{
    size_t  i;

    for (i = 0; i < name.len; i++) {
        if (name.ptr[i] < '0' || name.ptr[i] > '9' || i >= 9) {
            r->error = SAMSA_ERR_INVALID_REQUEST;
            r->message = samsa_ctl_msg(arena, "Invalid broker name %.*s",
                                       (int) name.len, name.ptr);
            return false;
        }
    }
    return true;
}

/* Dynamic broker configs (Kafka's ConfigAdminManager.preprocess then the
 * controller): the resource's new set is checked against the levels in
 * effect (meta/brokercfg.h), then written as ConfigRecords of type BROKER.
 * A change that cannot be applied is INVALID_CONFIG (the KAFKA-13609
 * intent; Kafka 3.x answers INVALID_REQUEST); a bad resource name or a
 * null value stays INVALID_REQUEST, as Kafka's. */
static void
ctl_alter_broker(samsa_ctlbatch_t *b,
                 const samsa_controller_alter_config_t *res, bool incremental,
                 samsa_arena_t *arena, samsa_controller_result_t *r)
{
    samsa_brokercfg_levels_t  cur;
    samsa_image_topic_t       pseudo;
    const samsa_image_config_t *cfgs;
    samsa_image_config_t     *copy;
    size_t                    i;
    ctl_cfgset_t              set;
    const char               *name;
    char                      me[16], err[512];
    bool                      is_default = res->resource_name.len == 0;

    if (!ctl_broker_name_ok(res->resource_name, arena, r)) {
        return;
    }
    name = samsa_arena_strndup(arena, res->resource_name.ptr != NULL
                                          ? res->resource_name.ptr : "",
                               res->resource_name.len);
    memset(&pseudo, 0, sizeof(pseudo));
    pseudo.name = name;
    pseudo.name_len = res->resource_name.len;
    /* a copy: the records below change the delta's array */
    cfgs = samsa_image_delta_resource_configs(
        b->delta, SAMSA_CONFIG_RESOURCE_BROKER, name, pseudo.name_len,
        &pseudo.nconfigs);
    copy = samsa_arena_calloc(arena, pseudo.nconfigs + 1, sizeof(*copy));
    for (i = 0; i < pseudo.nconfigs; i++) {
        copy[i].name = samsa_arena_strndup(arena, cfgs[i].name,
                                           strlen(cfgs[i].name));
        copy[i].value = samsa_arena_strndup(arena, cfgs[i].value,
                                            strlen(cfgs[i].value));
    }
    pseudo.configs = copy;
    if (!ctl_alter_compute(&pseudo, res, incremental, arena, &set, r)) {
        return;
    }
    for (i = 0; i < set.n; i++) {
        if (set.cfgs[i].value == NULL) {
            r->error = SAMSA_ERR_INVALID_REQUEST;
            r->message = samsa_ctl_msg(arena, "Null value not supported for "
                                       ": %s", set.cfgs[i].name);
            return;
        }
    }
    snprintf(me, sizeof(me), "%d", (int) b->node_id);
    cur.node = samsa_image_delta_resource_configs(
        b->delta, SAMSA_CONFIG_RESOURCE_BROKER, is_default ? me : name,
        strlen(is_default ? me : name), &cur.nnode);
    cur.dflt = samsa_image_delta_resource_configs(
        b->delta, SAMSA_CONFIG_RESOURCE_BROKER, "", 0, &cur.ndflt);
    if (samsa_brokercfg_validate(b->broker_cfg, &cur, is_default,
                                 set.cfgs, set.n, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        r->error = SAMSA_ERR_INVALID_CONFIG;
        r->message = samsa_ctl_msg(arena, "%s", err);
        return;
    }
    if (!is_default && strcmp(name, me) == 0 && b->broker_check != NULL) {
        /* this node's own: the server checks what it would apply */
        cur.node = set.cfgs;
        cur.nnode = set.n;
        if (b->broker_check->fn(b->broker_check->ctx, &cur, err, sizeof(err))
            != SAMSA_ERR_NONE) {
            r->error = SAMSA_ERR_INVALID_CONFIG;
            r->message = samsa_ctl_msg(arena, "%s", err);
            return;
        }
    }
    ctl_alter_records(b, SAMSA_CONFIG_RESOURCE_BROKER, &pseudo, &set);
}

void
samsa_ctlconfigs_alter(samsa_ctlbatch_t *b,
                       const samsa_controller_alter_config_t *res, size_t n,
                       bool incremental, samsa_arena_t *arena,
                       samsa_controller_result_t *results)
{
    const samsa_image_topic_t  *topic;
    ctl_cfgset_t                set;
    char                        err[512];
    size_t                      i, j;

    memset(results, 0, n * sizeof(*results));
    for (i = 0; i < n; i++) {
        for (j = 0; j < n && results[i].error == SAMSA_ERR_NONE; j++) {
            if (j != i && res[j].resource_type == res[i].resource_type
                && res[j].resource_name.len == res[i].resource_name.len
                && memcmp(res[j].resource_name.ptr, res[i].resource_name.ptr,
                          res[i].resource_name.len) == 0
                && ctl_resource_type_name(res[i].resource_type) != NULL) {
                results[i].error = SAMSA_ERR_INVALID_REQUEST;
                results[i].message = "Duplicate resource.";
            }
        }
        if (results[i].error != SAMSA_ERR_NONE) {
            continue;
        }
        if (res[i].resource_type == SAMSA_CONFIG_RESOURCE_BROKER) {
            ctl_alter_broker(b, &res[i], incremental, arena, &results[i]);
            continue;
        }
        topic = ctl_alter_resource(b, &res[i], arena, &results[i]);
        if (topic == NULL || !ctl_alter_compute(topic, &res[i], incremental,
                                                arena, &set, &results[i])) {
            continue;
        }
        if (samsa_topic_config_validate(b->broker_cfg,
                                        b->img, set.cfgs, set.n, err,
                                        sizeof(err)) != SAMSA_ERR_NONE) {
            results[i].error = SAMSA_ERR_INVALID_CONFIG;
            results[i].message = samsa_ctl_msg(arena, "%s", err);
            continue;
        }
        ctl_alter_records(b, SAMSA_CONFIG_RESOURCE_TOPIC, topic, &set);
    }
}
