/*
 * meta/image.c - see image.h.  An image is an array of topic pointers in
 * name order plus two hash indexes over it (by name, by id): util/map.h
 * maps whose nodes are an array parallel to the topics (node i indexes
 * topics[i]; the topics cannot hold the nodes, being shared).  Topics are
 * immutable once an image holds them and are shared, counted, between
 * consecutive images; a delta clones a shared topic the first time a
 * record changes it (copy on write) and owns new ones until it applies.
 * Features, other resources' configs and brokers are few and are copied
 * whole into each image.
 */
#include "meta/image.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "meta/acl.h"
#include "meta/qentity.h"
#include "meta/topic_name.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/map.h"

/* A topic with its storage and count.  pub's pointers point into it. */
typedef struct image_topic {
    samsa_image_topic_t       pub;
    atomic_int                refs;     /* [atomic] images and deltas */
    char                     *name;
    samsa_image_partition_t  *parts;    /* replicas/isr: samsa_malloc'd */
    int32_t                   nparts;
    int32_t                   cap_parts;
    samsa_image_config_t     *cfgs;     /* name/value: samsa_strdup'd */
    size_t                    ncfgs;
} image_topic_t;

typedef struct image_feature {
    char     *name;
    int16_t   level;
} image_feature_t;

/* Configs of one non-topic resource. */
typedef struct image_resource {
    int8_t                 type;
    char                  *name;
    samsa_image_config_t  *cfgs;        /* sorted by name */
    size_t                 ncfgs;
} image_resource_t;

/* The small parts every image copies whole. */
typedef struct image_misc {
    image_feature_t       *features;    /* sorted by name */
    size_t                 nfeatures;
    image_resource_t      *resources;
    size_t                 nresources;
    samsa_image_broker_t  *brokers;
    size_t                 nbrokers;
    int64_t                next_producer_id;
    samsa_acl_set_t       *acls;        /* referenced; NULL: none.  A
                                           delta changes it only once
                                           samsa_acl_set_mut made it its
                                           own (copy on write) */
} image_misc_t;

/* Hash index over a topic array: nodes[i] is topics[i]'s, linked while
 * topics[i] is not NULL. */
typedef struct topic_index {
    samsa_map_t        map;
    samsa_map_node_t  *nodes;           /* as many as the array's cap */
} topic_index_t;

struct samsa_image {
    atomic_int       refs;              /* [atomic] */
    int64_t          offset;            /* [const] */
    image_topic_t  **topics;            /* [const] name order */
    size_t           ntopics;
    topic_index_t    by_name;           /* [const] */
    topic_index_t    by_id;             /* [const] */
    image_misc_t     misc;              /* [const] */
};

struct samsa_image_delta {
    samsa_image_t   *base;              /* referenced */
    image_topic_t  **topics;            /* referenced; NULL: removed */
    bool            *owned;             /* topics[i] is private, mutable */
    size_t           ntopics;
    size_t           cap;
    size_t           nlive;
    bool             sort;              /* a topic was added */
    topic_index_t    by_name;
    topic_index_t    by_id;
    image_misc_t     misc;
    int64_t          offset;
};

static const char  id_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---- topic ids and names */

void
samsa_image_id_str(samsa_uuid_t id, char out[SAMSA_UUID_STR_SIZE])
{
    uint32_t  v;
    int       i, o = 0;

    for (i = 0; i < 15; i += 3) {
        v = (uint32_t) id.b[i] << 16 | (uint32_t) id.b[i + 1] << 8
            | id.b[i + 2];
        out[o++] = id_b64[(v >> 18) & 63];
        out[o++] = id_b64[(v >> 12) & 63];
        out[o++] = id_b64[(v >> 6) & 63];
        out[o++] = id_b64[v & 63];
    }
    v = (uint32_t) id.b[15] << 16;
    out[o++] = id_b64[(v >> 18) & 63];
    out[o++] = id_b64[(v >> 12) & 63];
    out[o] = '\0';
}

samsa_uuid_t
samsa_image_id_random(void)
{
    samsa_uuid_t  id;
    char          text[SAMSA_UUID_STR_SIZE];

    do {
        if (getrandom(id.b, sizeof(id.b), 0) != (ssize_t) sizeof(id.b)) {
            samsa_assert(!"getrandom failed");
        }
        id.b[6] = (uint8_t) ((id.b[6] & 0x0f) | 0x40);     /* version 4 */
        id.b[8] = (uint8_t) ((id.b[8] & 0x3f) | 0x80);     /* IETF variant */
        samsa_image_id_str(id, text);
    } while (text[0] == '-');
    return id;
}

/* ---- hash indexes */

/* What an index's eq compares a node with. */
typedef struct index_key {
    const topic_index_t   *idx;
    image_topic_t *const  *topics;
    const char            *name;
    size_t                 len;
    samsa_uuid_t           id;
} index_key_t;

static const image_topic_t *
index_topic(const samsa_map_node_t *node, const index_key_t *k)
{
    return k->topics[node - k->idx->nodes];
}

static bool
index_name_eq(const samsa_map_node_t *node, const void *key)
{
    const index_key_t    *k = key;
    const image_topic_t  *t = index_topic(node, k);

    return t->pub.name_len == k->len && memcmp(t->name, k->name, k->len) == 0;
}

static bool
index_id_eq(const samsa_map_node_t *node, const void *key)
{
    const index_key_t  *k = key;

    return samsa_uuid_eq(index_topic(node, k)->pub.id, k->id);
}

static uint64_t
index_hash(const char *name, size_t len, samsa_uuid_t id, bool by_id)
{
    return by_id ? samsa_hash_bytes(id.b, sizeof(id.b), 0)
                 : samsa_hash_bytes(name, len, 0);
}

static void
index_fini(topic_index_t *idx)
{
    samsa_map_fini(&idx->map);
    samsa_free(idx->nodes);
    idx->nodes = NULL;
}

/* Link topics[i] (t) into idx. */
static void
index_insert(topic_index_t *idx, const image_topic_t *t, size_t i,
             bool by_id)
{
    samsa_map_insert(&idx->map, &idx->nodes[i],
                     index_hash(t->name, t->pub.name_len, t->pub.id, by_id));
}

/* Rebuild idx over topics[0..n) (NULL entries skipped), sized for cap. */
static void
index_build(topic_index_t *idx, image_topic_t *const *topics, size_t n,
            size_t cap, bool by_id)
{
    size_t  i;

    index_fini(idx);
    samsa_map_init(&idx->map);
    idx->nodes = samsa_calloc(cap + 1, sizeof(*idx->nodes));
    for (i = 0; i < n; i++) {
        if (topics[i] != NULL) {
            index_insert(idx, topics[i], i, by_id);
        }
    }
}

/* Position of the topic with that name (by_id false) or id, or SIZE_MAX. */
static size_t
index_find(const topic_index_t *idx, image_topic_t *const *topics,
           const char *name, size_t len, samsa_uuid_t id, bool by_id)
{
    index_key_t        k = { idx, topics, name, len, id };
    samsa_map_node_t  *node;

    node = samsa_map_find(&idx->map, index_hash(name, len, id, by_id),
                          by_id ? index_id_eq : index_name_eq, &k);
    return node != NULL ? (size_t) (node - idx->nodes) : SIZE_MAX;
}

/* ---- topics */

static image_topic_t *
topic_ref(image_topic_t *t)
{
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

static void
topic_unref(image_topic_t *t)
{
    int32_t  i;
    size_t   j;

    if (t == NULL
        || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel)
           != 1) {
        return;
    }
    for (i = 0; i < t->nparts; i++) {
        samsa_free((void *) t->parts[i].replicas);
        samsa_free((void *) t->parts[i].isr);
        samsa_free((void *) t->parts[i].adding);
        samsa_free((void *) t->parts[i].removing);
    }
    for (j = 0; j < t->ncfgs; j++) {
        samsa_free((void *) t->cfgs[j].name);
        samsa_free((void *) t->cfgs[j].value);
    }
    samsa_free(t->parts);
    samsa_free(t->cfgs);
    samsa_free(t->name);
    samsa_free(t);
}

/* Point pub at the storage again (after the storage moved). */
static void
topic_sync(image_topic_t *t)
{
    t->pub.name = t->name;
    t->pub.partitions = t->parts;
    t->pub.npartitions = t->nparts;
    t->pub.configs = t->cfgs;
    t->pub.nconfigs = t->ncfgs;
}

static image_topic_t *
topic_new(const char *name, size_t len, samsa_uuid_t id)
{
    image_topic_t  *t = samsa_calloc(1, sizeof(*t));

    atomic_init(&t->refs, 1);
    t->name = samsa_strndup(name, len);
    t->pub.name_len = len;
    t->pub.id = id;
    t->pub.is_internal = samsa_topic_name_is_internal(name, len);
    topic_sync(t);
    return t;
}

static int32_t *
ints_dup(const int32_t *v, int32_t n)
{
    int32_t  *copy = samsa_malloc(sizeof(*copy) * (size_t) (n > 0 ? n : 1));

    if (n > 0) {
        memcpy(copy, v, sizeof(*copy) * (size_t) n);
    }
    return copy;
}

/* A private copy of t (one reference) for a delta to change. */
static image_topic_t *
topic_clone(const image_topic_t *t)
{
    image_topic_t  *c = topic_new(t->name, t->pub.name_len, t->pub.id);
    int32_t         i;
    size_t          j;

    c->cap_parts = t->nparts;
    c->nparts = t->nparts;
    c->parts = samsa_calloc((size_t) (t->nparts > 0 ? t->nparts : 1),
                            sizeof(*c->parts));
    for (i = 0; i < t->nparts; i++) {
        c->parts[i] = t->parts[i];
        c->parts[i].replicas = ints_dup(t->parts[i].replicas,
                                        t->parts[i].nreplicas);
        c->parts[i].isr = ints_dup(t->parts[i].isr, t->parts[i].nisr);
        c->parts[i].adding = ints_dup(t->parts[i].adding,
                                      t->parts[i].nadding);
        c->parts[i].removing = ints_dup(t->parts[i].removing,
                                        t->parts[i].nremoving);
    }
    c->ncfgs = t->ncfgs;
    c->cfgs = samsa_calloc(t->ncfgs > 0 ? t->ncfgs : 1, sizeof(*c->cfgs));
    for (j = 0; j < t->ncfgs; j++) {
        c->cfgs[j].name = samsa_strdup(t->cfgs[j].name);
        c->cfgs[j].value = samsa_strdup(t->cfgs[j].value);
    }
    topic_sync(c);
    return c;
}

/* Set (value non-NULL) or delete one override in a sorted config array. */
static void
configs_set(samsa_image_config_t **cfgs, size_t *n, samsa_slice_t name,
            samsa_slice_t value)
{
    size_t  i;
    int     cmp = 1;

    for (i = 0; i < *n; i++) {
        cmp = strncmp((*cfgs)[i].name, name.ptr, name.len);
        if (cmp == 0 && (*cfgs)[i].name[name.len] != '\0') {
            cmp = 1;
        }
        if (cmp >= 0) {
            break;
        }
    }
    if (i < *n && cmp == 0) {
        samsa_free((void *) (*cfgs)[i].value);
        if (value.ptr != NULL) {
            (*cfgs)[i].value = samsa_slice_dup(value);
            return;
        }
        samsa_free((void *) (*cfgs)[i].name);
        memmove(&(*cfgs)[i], &(*cfgs)[i + 1], (*n - i - 1) * sizeof(**cfgs));
        (*n)--;
        return;
    }
    if (value.ptr == NULL) {
        return;                         /* deleting an absent key */
    }
    *cfgs = samsa_realloc(*cfgs, (*n + 1) * sizeof(**cfgs));
    memmove(&(*cfgs)[i + 1], &(*cfgs)[i], (*n - i) * sizeof(**cfgs));
    (*cfgs)[i].name = samsa_slice_dup(name);
    (*cfgs)[i].value = samsa_slice_dup(value);
    (*n)++;
}

static void
configs_free(samsa_image_config_t *cfgs, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_free((void *) cfgs[i].name);
        samsa_free((void *) cfgs[i].value);
    }
    samsa_free(cfgs);
}

static samsa_image_config_t *
configs_dup(const samsa_image_config_t *cfgs, size_t n)
{
    samsa_image_config_t  *c = samsa_calloc(n > 0 ? n : 1, sizeof(*c));
    size_t                 i;

    for (i = 0; i < n; i++) {
        c[i].name = samsa_strdup(cfgs[i].name);
        c[i].value = samsa_strdup(cfgs[i].value);
    }
    return c;
}

/* ---- the small parts */

/* Free what a broker entry owns (its strings and arrays). */
static void
broker_fini(samsa_image_broker_t *b)
{
    size_t  i;

    for (i = 0; i < b->nendpoints; i++) {
        samsa_free((void *) b->endpoints[i].listener);
        samsa_free((void *) b->endpoints[i].host);
    }
    for (i = 0; i < b->nfeatures; i++) {
        samsa_free((void *) b->features[i].name);
    }
    samsa_free((void *) b->endpoints);
    samsa_free((void *) b->features);
    samsa_free((void *) b->rack);
    memset(b, 0, sizeof(*b));
}

/* dst: a deep copy of src. */
static void
broker_copy(samsa_image_broker_t *dst, const samsa_image_broker_t *src)
{
    samsa_image_endpoint_t        *eps;
    samsa_image_broker_feature_t  *fs;
    size_t                         i;

    *dst = *src;
    dst->rack = src->rack != NULL ? samsa_strdup(src->rack) : NULL;
    eps = samsa_calloc(src->nendpoints + 1, sizeof(*eps));
    for (i = 0; i < src->nendpoints; i++) {
        eps[i] = src->endpoints[i];
        eps[i].listener = samsa_strdup(src->endpoints[i].listener);
        eps[i].host = samsa_strdup(src->endpoints[i].host);
    }
    fs = samsa_calloc(src->nfeatures + 1, sizeof(*fs));
    for (i = 0; i < src->nfeatures; i++) {
        fs[i] = src->features[i];
        fs[i].name = samsa_strdup(src->features[i].name);
    }
    dst->endpoints = eps;
    dst->features = fs;
}

static void
misc_fini(image_misc_t *m)
{
    size_t  i;

    for (i = 0; i < m->nfeatures; i++) {
        samsa_free(m->features[i].name);
    }
    for (i = 0; i < m->nresources; i++) {
        samsa_free(m->resources[i].name);
        configs_free(m->resources[i].cfgs, m->resources[i].ncfgs);
    }
    for (i = 0; i < m->nbrokers; i++) {
        broker_fini(&m->brokers[i]);
    }
    samsa_free(m->features);
    samsa_free(m->resources);
    samsa_free(m->brokers);
    samsa_acl_set_put(m->acls);
    memset(m, 0, sizeof(*m));
}

static void
misc_copy(image_misc_t *dst, const image_misc_t *src)
{
    size_t  i;

    memset(dst, 0, sizeof(*dst));
    dst->next_producer_id = src->next_producer_id;
    dst->acls = src->acls != NULL ? samsa_acl_set_ref(src->acls) : NULL;
    dst->nfeatures = src->nfeatures;
    dst->features = samsa_calloc(src->nfeatures + 1, sizeof(*dst->features));
    for (i = 0; i < src->nfeatures; i++) {
        dst->features[i].name = samsa_strdup(src->features[i].name);
        dst->features[i].level = src->features[i].level;
    }
    dst->nresources = src->nresources;
    dst->resources = samsa_calloc(src->nresources + 1,
                                  sizeof(*dst->resources));
    for (i = 0; i < src->nresources; i++) {
        dst->resources[i].type = src->resources[i].type;
        dst->resources[i].name = samsa_strdup(src->resources[i].name);
        dst->resources[i].cfgs = configs_dup(src->resources[i].cfgs,
                                             src->resources[i].ncfgs);
        dst->resources[i].ncfgs = src->resources[i].ncfgs;
    }
    dst->nbrokers = src->nbrokers;
    dst->brokers = samsa_calloc(src->nbrokers + 1, sizeof(*dst->brokers));
    for (i = 0; i < src->nbrokers; i++) {
        broker_copy(&dst->brokers[i], &src->brokers[i]);
    }
}

/* ---- reading an image */

samsa_image_t *
samsa_image_new_empty(void)
{
    samsa_image_t  *img = samsa_calloc(1, sizeof(*img));

    atomic_init(&img->refs, 1);
    img->offset = -1;
    img->topics = samsa_calloc(1, sizeof(*img->topics));
    return img;
}

samsa_image_t *
samsa_image_ref(samsa_image_t *img)
{
    atomic_fetch_add_explicit(&img->refs, 1, memory_order_relaxed);
    return img;
}

void
samsa_image_put(samsa_image_t *img)
{
    size_t  i;

    if (img == NULL
        || atomic_fetch_sub_explicit(&img->refs, 1, memory_order_acq_rel)
           != 1) {
        return;
    }
    for (i = 0; i < img->ntopics; i++) {
        topic_unref(img->topics[i]);
    }
    samsa_free(img->topics);
    index_fini(&img->by_name);
    index_fini(&img->by_id);
    misc_fini(&img->misc);
    samsa_free(img);
}

int64_t
samsa_image_offset(const samsa_image_t *img)
{
    return img->offset;
}

const samsa_image_topic_t *
samsa_image_topic_find(const samsa_image_t *img, const char *name,
                       size_t len)
{
    samsa_uuid_t  none = { { 0 } };
    size_t        i = index_find(&img->by_name, img->topics, name, len, none,
                                 false);

    return i == SIZE_MAX ? NULL : &img->topics[i]->pub;
}

const samsa_image_topic_t *
samsa_image_topic_find_id(const samsa_image_t *img, samsa_uuid_t id)
{
    size_t  s;

    if (samsa_uuid_is_zero(id)) {
        return NULL;
    }
    s = index_find(&img->by_id, img->topics, NULL, 0, id, true);
    return s == SIZE_MAX ? NULL : &img->topics[s]->pub;
}

size_t
samsa_image_topic_count(const samsa_image_t *img)
{
    return img->ntopics;
}

const samsa_image_topic_t *
samsa_image_topic_at(const samsa_image_t *img, size_t i)
{
    samsa_assert(i < img->ntopics);
    return &img->topics[i]->pub;
}

const char *
samsa_image_topic_config(const samsa_image_topic_t *topic, const char *name)
{
    size_t  i;

    for (i = 0; i < topic->nconfigs; i++) {
        if (strcmp(topic->configs[i].name, name) == 0) {
            return topic->configs[i].value;
        }
    }
    return NULL;
}

static image_resource_t *
misc_resource(const image_misc_t *m, int8_t type, const char *name,
              size_t len)
{
    size_t  i;

    for (i = 0; i < m->nresources; i++) {
        if (m->resources[i].type == type
            && strlen(m->resources[i].name) == len
            && memcmp(m->resources[i].name, name, len) == 0) {
            return &m->resources[i];
        }
    }
    return NULL;
}

const samsa_image_config_t *
samsa_image_resource_configs(const samsa_image_t *img, int8_t type,
                             const char *name, size_t *n)
{
    const image_resource_t  *r = misc_resource(&img->misc, type, name,
                                               strlen(name));

    *n = r != NULL ? r->ncfgs : 0;
    return r != NULL && r->ncfgs > 0 ? r->cfgs : NULL;
}

size_t
samsa_image_resource_count(const samsa_image_t *img)
{
    return img->misc.nresources;
}

const samsa_image_config_t *
samsa_image_resource_at(const samsa_image_t *img, size_t i, int8_t *type,
                        const char **name, size_t *n)
{
    const image_resource_t  *r;

    samsa_assert(i < img->misc.nresources);
    r = &img->misc.resources[i];
    *type = r->type;
    *name = r->name;
    *n = r->ncfgs;
    return r->cfgs;
}

void
samsa_image_scram_format(const samsa_scram_cred_t *cred, char *out,
                         size_t size)
{
    char    salt[SAMSA_SCRAM_MAX_SALT * 2], stored[100], server[100];
    size_t  hlen = samsa_scram_hash_len(cred->mech);

    if (samsa_scram_b64_encode(cred->salt, cred->salt_len, salt, sizeof(salt))
            != SAMSA_ERR_NONE
        || samsa_scram_b64_encode(cred->stored_key, hlen, stored,
                                  sizeof(stored)) != SAMSA_ERR_NONE
        || samsa_scram_b64_encode(cred->server_key, hlen, server,
                                  sizeof(server)) != SAMSA_ERR_NONE) {
        snprintf(out, size, "invalid");
        return;
    }
    snprintf(out, size, "%d,%s,%s,%s", (int) cred->iterations, salt, stored,
             server);
}

bool
samsa_image_scram_parse(const char *text, samsa_scram_mech_t mech,
                        samsa_scram_cred_t *cred)
{
    const char  *p = text, *comma[3];
    size_t       hlen = samsa_scram_hash_len(mech), n;
    char        *end;
    long         iter;
    int          i;

    memset(cred, 0, sizeof(*cred));
    cred->mech = mech;
    iter = strtol(p, &end, 10);
    if (end == p || *end != ',' || iter <= 0 || iter > INT32_MAX) {
        return false;
    }
    cred->iterations = (int32_t) iter;
    p = end + 1;
    for (i = 0; i < 3; i++) {
        comma[i] = strchr(p, ',');
        if (i < 2 && comma[i] == NULL) {
            return false;
        }
        if (i == 2) {
            comma[i] = p + strlen(p);
        }
        p = comma[i] + 1;
    }
    p = strchr(text, ',') + 1;
    if (samsa_scram_b64_decode((samsa_slice_t) { p, (size_t) (comma[0] - p) },
                               cred->salt, sizeof(cred->salt),
                               &cred->salt_len) != SAMSA_ERR_NONE
        || samsa_scram_b64_decode(
               (samsa_slice_t) { comma[0] + 1,
                                 (size_t) (comma[1] - comma[0] - 1) },
               cred->stored_key, sizeof(cred->stored_key), &n)
               != SAMSA_ERR_NONE
        || n != hlen
        || samsa_scram_b64_decode(
               (samsa_slice_t) { comma[1] + 1,
                                 (size_t) (comma[2] - comma[1] - 1) },
               cred->server_key, sizeof(cred->server_key), &n)
               != SAMSA_ERR_NONE
        || n != hlen) {
        return false;
    }
    return true;
}

bool
samsa_image_scram_credential(const samsa_image_t *img, const char *user,
                             samsa_scram_mech_t mech,
                             samsa_scram_cred_t *cred)
{
    const samsa_image_config_t  *cfgs;
    const char                  *name = samsa_scram_mech_name(mech);
    size_t                       n, i;

    cfgs = samsa_image_resource_configs(img, SAMSA_IMAGE_RESOURCE_SCRAM, user,
                                        &n);
    for (i = 0; i < n; i++) {
        if (strcmp(cfgs[i].name, name) == 0) {
            return samsa_image_scram_parse(cfgs[i].value, mech, cred);
        }
    }
    return false;
}

bool
samsa_image_client_quota(const samsa_image_t *img, const char *entity_key,
                         const char *key, double *value)
{
    const samsa_image_config_t  *cfgs;
    size_t                       n, i;

    cfgs = samsa_image_resource_configs(img, SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA,
                                        entity_key, &n);
    for (i = 0; i < n; i++) {
        if (strcmp(cfgs[i].name, key) == 0) {
            *value = strtod(cfgs[i].value, NULL);
            return true;
        }
    }
    return false;
}

int16_t
samsa_image_feature_level(const samsa_image_t *img, const char *name)
{
    size_t  i;

    for (i = 0; i < img->misc.nfeatures; i++) {
        if (strcmp(img->misc.features[i].name, name) == 0) {
            return img->misc.features[i].level;
        }
    }
    return 0;
}

size_t
samsa_image_feature_count(const samsa_image_t *img)
{
    return img->misc.nfeatures;
}

const char *
samsa_image_feature_at(const samsa_image_t *img, size_t i, int16_t *level)
{
    samsa_assert(i < img->misc.nfeatures);
    *level = img->misc.features[i].level;
    return img->misc.features[i].name;
}

const samsa_image_broker_t *
samsa_image_broker_find(const samsa_image_t *img, int32_t id)
{
    size_t  i;

    for (i = 0; i < img->misc.nbrokers; i++) {
        if (img->misc.brokers[i].id == id) {
            return &img->misc.brokers[i];
        }
    }
    return NULL;
}

size_t
samsa_image_broker_count(const samsa_image_t *img)
{
    return img->misc.nbrokers;
}

const samsa_image_broker_t *
samsa_image_broker_at(const samsa_image_t *img, size_t i)
{
    samsa_assert(i < img->misc.nbrokers);
    return &img->misc.brokers[i];
}

bool
samsa_image_ids_has(const int32_t *ids, int32_t n, int32_t id)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

const samsa_image_endpoint_t *
samsa_image_broker_endpoint(const samsa_image_broker_t *broker,
                            const char *listener)
{
    size_t  i;

    for (i = 0; i < broker->nendpoints; i++) {
        if (strcasecmp(broker->endpoints[i].listener, listener) == 0) {
            return &broker->endpoints[i];
        }
    }
    return NULL;
}

int64_t
samsa_image_next_producer_id(const samsa_image_t *img)
{
    return img->misc.next_producer_id;
}

const samsa_acl_set_t *
samsa_image_acls(const samsa_image_t *img)
{
    return img->misc.acls;
}

/* ---- deltas */

samsa_image_delta_t *
samsa_image_delta_new(samsa_image_t *base)
{
    samsa_image_delta_t  *d = samsa_calloc(1, sizeof(*d));
    size_t                i;

    d->base = samsa_image_ref(base);
    d->cap = base->ntopics + 8;
    d->topics = samsa_calloc(d->cap, sizeof(*d->topics));
    d->owned = samsa_calloc(d->cap, sizeof(*d->owned));
    for (i = 0; i < base->ntopics; i++) {
        d->topics[i] = topic_ref(base->topics[i]);
    }
    d->ntopics = base->ntopics;
    d->nlive = base->ntopics;
    index_build(&d->by_name, d->topics, d->ntopics, d->cap, false);
    index_build(&d->by_id, d->topics, d->ntopics, d->cap, true);
    misc_copy(&d->misc, &base->misc);
    d->offset = base->offset;
    return d;
}

void
samsa_image_delta_free(samsa_image_delta_t *d)
{
    size_t  i;

    if (d == NULL) {
        return;
    }
    for (i = 0; i < d->ntopics; i++) {
        topic_unref(d->topics[i]);
    }
    samsa_free(d->topics);
    samsa_free(d->owned);
    index_fini(&d->by_name);
    index_fini(&d->by_id);
    misc_fini(&d->misc);
    samsa_image_put(d->base);
    samsa_free(d);
}

static size_t
delta_find(const samsa_image_delta_t *d, const char *name, size_t len,
           samsa_uuid_t id, bool by_id)
{
    return index_find(by_id ? &d->by_id : &d->by_name, d->topics, name, len,
                      id, by_id);
}

const samsa_image_topic_t *
samsa_image_delta_topic_find(const samsa_image_delta_t *d, const char *name,
                             size_t len)
{
    samsa_uuid_t  none = { { 0 } };
    size_t        i = delta_find(d, name, len, none, false);

    return i == SIZE_MAX ? NULL : &d->topics[i]->pub;
}

const samsa_image_topic_t *
samsa_image_delta_topic_find_id(const samsa_image_delta_t *d,
                                samsa_uuid_t id)
{
    size_t  i = delta_find(d, NULL, 0, id, true);

    return i == SIZE_MAX ? NULL : &d->topics[i]->pub;
}

const samsa_image_config_t *
samsa_image_delta_resource_configs(const samsa_image_delta_t *d, int8_t type,
                                   const char *name, size_t len, size_t *n)
{
    const image_resource_t  *r = misc_resource(&d->misc, type, name, len);

    *n = r != NULL ? r->ncfgs : 0;
    return r != NULL && r->ncfgs > 0 ? r->cfgs : NULL;
}

size_t
samsa_image_delta_topic_slots(const samsa_image_delta_t *d)
{
    return d->ntopics;
}

const samsa_image_topic_t *
samsa_image_delta_topic_slot(const samsa_image_delta_t *d, size_t i)
{
    samsa_assert(i < d->ntopics);
    return d->topics[i] != NULL ? &d->topics[i]->pub : NULL;
}

/* The topic at i, made private to the delta (cloned if shared). */
static image_topic_t *
delta_topic_mut(samsa_image_delta_t *d, size_t i)
{
    image_topic_t  *c;

    if (!d->owned[i]) {
        c = topic_clone(d->topics[i]);
        topic_unref(d->topics[i]);
        d->topics[i] = c;               /* same name and id: the indexes
                                           stay right */
        d->owned[i] = true;
    }
    return d->topics[i];
}

static void
delta_topic_add(samsa_image_delta_t *d, image_topic_t *t)
{
    if (d->ntopics == d->cap) {
        d->cap = d->cap * 2 + 8;
        d->topics = samsa_realloc(d->topics, d->cap * sizeof(*d->topics));
        d->owned = samsa_realloc(d->owned, d->cap * sizeof(*d->owned));
        index_build(&d->by_name, d->topics, d->ntopics, d->cap, false);
        index_build(&d->by_id, d->topics, d->ntopics, d->cap, true);
    }
    d->topics[d->ntopics] = t;
    d->owned[d->ntopics] = true;
    index_insert(&d->by_name, t, d->ntopics, false);
    index_insert(&d->by_id, t, d->ntopics, true);
    d->ntopics++;
    d->nlive++;
    d->sort = true;
}

static void
delta_topic_remove(samsa_image_delta_t *d, size_t i)
{
    image_topic_t  *t = d->topics[i];

    samsa_map_remove(&d->by_name.map, &d->by_name.nodes[i]);
    samsa_map_remove(&d->by_id.map, &d->by_id.nodes[i]);
    d->topics[i] = NULL;
    d->owned[i] = false;
    d->nlive--;
    topic_unref(t);
}

/* ---- replay, record by record (Kafka's MetadataDelta.replay) */

static samsa_err_t replay_bad(char *errstr, size_t errstr_size,
                              int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fill errstr with "metadata record at offset N: <what>". */
static samsa_err_t
replay_bad(char *errstr, size_t errstr_size, int64_t offset,
           const char *fmt, ...)
{
    va_list  ap;

    snprintf(errstr, errstr_size, "metadata record at offset %lld: ",
             (long long) offset);
    va_start(ap, fmt);
    samsa_errstr_vappend(errstr, errstr_size, fmt, ap);
    va_end(ap);
    return SAMSA_ERR__BAD_MSG;
}

static samsa_err_t
replay_topic(samsa_image_delta_t *d, const samsa_TopicRecord_t *r,
             int64_t offset, char *errstr, size_t errstr_size)
{
    char  name[256], id[SAMSA_UUID_STR_SIZE];

    snprintf(name, sizeof(name), "%.*s", (int) r->Name.len, r->Name.ptr);
    samsa_image_id_str(r->TopicId, id);
    if (r->Name.len == 0 || samsa_uuid_is_zero(r->TopicId)) {
        return replay_bad(errstr, errstr_size, offset,
                          "TopicRecord '%s' with id %s", name, id);
    }
    if (delta_find(d, r->Name.ptr, r->Name.len, r->TopicId, false)
        != SIZE_MAX) {
        return replay_bad(errstr, errstr_size, offset,
                          "TopicRecord for existing topic '%s'", name);
    }
    if (delta_find(d, NULL, 0, r->TopicId, true) != SIZE_MAX) {
        return replay_bad(errstr, errstr_size, offset,
                          "TopicRecord '%s' reuses topic id %s", name, id);
    }
    delta_topic_add(d, topic_new(r->Name.ptr, r->Name.len, r->TopicId));
    return SAMSA_ERR_NONE;
}

/* The delta's topic with that id, made private, or NULL with errstr. */
static image_topic_t *
replay_topic_by_id(samsa_image_delta_t *d, samsa_uuid_t topic_id,
                   const char *what, int64_t offset, char *errstr,
                   size_t errstr_size)
{
    char    id[SAMSA_UUID_STR_SIZE];
    size_t  i = delta_find(d, NULL, 0, topic_id, true);

    if (i == SIZE_MAX) {
        samsa_image_id_str(topic_id, id);
        (void) replay_bad(errstr, errstr_size, offset,
                          "%s for unknown topic id %s", what, id);
        return NULL;
    }
    return delta_topic_mut(d, i);
}

static samsa_err_t
replay_partition(samsa_image_delta_t *d, const samsa_PartitionRecord_t *r,
                 int64_t offset, char *errstr, size_t errstr_size)
{
    image_topic_t            *t;
    samsa_image_partition_t  *p;

    t = replay_topic_by_id(d, r->TopicId, "PartitionRecord", offset, errstr,
                           errstr_size);
    if (t == NULL) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (r->PartitionId < 0 || r->PartitionId > t->nparts
        || r->Replicas_cnt < 0 || r->Isr_cnt < 0
        || r->AddingReplicas_cnt < 0 || r->RemovingReplicas_cnt < 0) {
        return replay_bad(errstr, errstr_size, offset,
                          "PartitionRecord %s-%d out of order", t->name,
                          (int) r->PartitionId);
    }
    if (r->PartitionId == t->nparts) {
        if (t->nparts == t->cap_parts) {
            t->cap_parts = t->cap_parts * 2 + 4;
            t->parts = samsa_realloc(t->parts, (size_t) t->cap_parts
                                               * sizeof(*t->parts));
        }
        memset(&t->parts[t->nparts++], 0, sizeof(*t->parts));
    }
    p = &t->parts[r->PartitionId];
    samsa_free((void *) p->replicas);
    samsa_free((void *) p->isr);
    samsa_free((void *) p->adding);
    samsa_free((void *) p->removing);
    p->partition = r->PartitionId;
    p->leader = r->Leader;
    p->leader_epoch = r->LeaderEpoch;
    p->partition_epoch = r->PartitionEpoch;
    p->replicas = ints_dup(r->Replicas, r->Replicas_cnt);
    p->nreplicas = r->Replicas_cnt;
    p->isr = ints_dup(r->Isr, r->Isr_cnt);
    p->nisr = r->Isr_cnt;
    p->adding = ints_dup(r->AddingReplicas, r->AddingReplicas_cnt);
    p->nadding = r->AddingReplicas_cnt;
    p->removing = ints_dup(r->RemovingReplicas, r->RemovingReplicas_cnt);
    p->nremoving = r->RemovingReplicas_cnt;
    topic_sync(t);
    return SAMSA_ERR_NONE;
}

/* Kafka's PartitionRegistration.merge(PartitionChangeRecord). */
static samsa_err_t
replay_partition_change(samsa_image_delta_t *d,
                        const samsa_PartitionChangeRecord_t *r,
                        int64_t offset, char *errstr, size_t errstr_size)
{
    image_topic_t            *t;
    samsa_image_partition_t  *p;

    t = replay_topic_by_id(d, r->TopicId, "PartitionChangeRecord", offset,
                           errstr, errstr_size);
    if (t == NULL) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (r->PartitionId < 0 || r->PartitionId >= t->nparts) {
        return replay_bad(errstr, errstr_size, offset,
                          "PartitionChangeRecord for unknown partition "
                          "%s-%d", t->name, (int) r->PartitionId);
    }
    p = &t->parts[r->PartitionId];
    if (r->Isr_cnt >= 0) {
        samsa_free((void *) p->isr);
        p->isr = ints_dup(r->Isr, r->Isr_cnt);
        p->nisr = r->Isr_cnt;
    }
    if (r->Replicas_cnt >= 0) {
        samsa_free((void *) p->replicas);
        p->replicas = ints_dup(r->Replicas, r->Replicas_cnt);
        p->nreplicas = r->Replicas_cnt;
    }
    if (r->AddingReplicas_cnt >= 0) {
        samsa_free((void *) p->adding);
        p->adding = ints_dup(r->AddingReplicas, r->AddingReplicas_cnt);
        p->nadding = r->AddingReplicas_cnt;
    }
    if (r->RemovingReplicas_cnt >= 0) {
        samsa_free((void *) p->removing);
        p->removing = ints_dup(r->RemovingReplicas, r->RemovingReplicas_cnt);
        p->nremoving = r->RemovingReplicas_cnt;
    }
    if (r->Leader != -2) {
        p->leader = r->Leader;
        p->leader_epoch++;
    }
    p->partition_epoch++;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
replay_config(samsa_image_delta_t *d, const samsa_ConfigRecord_t *r,
              int64_t offset, char *errstr, size_t errstr_size)
{
    samsa_uuid_t       none = { { 0 } };
    image_resource_t  *res;
    image_misc_t      *m = &d->misc;
    size_t             i;

    if (r->ResourceType == SAMSA_CONFIG_RESOURCE_TOPIC) {
        i = delta_find(d, r->ResourceName.ptr, r->ResourceName.len, none,
                       false);
        if (i == SIZE_MAX) {
            return replay_bad(errstr, errstr_size, offset,
                              "ConfigRecord for unknown topic '%.*s'",
                              (int) r->ResourceName.len,
                              r->ResourceName.ptr);
        }
        delta_topic_mut(d, i);
        configs_set(&d->topics[i]->cfgs, &d->topics[i]->ncfgs, r->Name,
                    r->Value);
        topic_sync(d->topics[i]);
        return SAMSA_ERR_NONE;
    }
    res = misc_resource(m, r->ResourceType, r->ResourceName.ptr,
                        r->ResourceName.len);
    if (res == NULL) {
        m->resources = samsa_realloc(m->resources, (m->nresources + 1)
                                                   * sizeof(*m->resources));
        res = &m->resources[m->nresources++];
        memset(res, 0, sizeof(*res));
        res->type = r->ResourceType;
        res->name = samsa_slice_dup(r->ResourceName);
    }
    configs_set(&res->cfgs, &res->ncfgs, r->Name, r->Value);
    return SAMSA_ERR_NONE;
}

/* UserScramCredentialRecord / RemoveUserScramCredentialRecord: the user's
 * credentials live as the configs of a resource of type
 * SAMSA_IMAGE_RESOURCE_SCRAM named by the user, one per mechanism. */
static samsa_err_t
replay_scram(samsa_image_delta_t *d, samsa_slice_t user, int8_t mech_type,
             const samsa_UserScramCredentialRecord_t *r, int64_t offset,
             char *errstr, size_t errstr_size)
{
    samsa_ConfigRecord_t  cr;
    samsa_scram_cred_t    cred;
    samsa_scram_mech_t    mech;
    char                  value[SAMSA_IMAGE_SCRAM_TEXT];

    if (!samsa_scram_mech_from_type(mech_type, &mech) || user.len == 0) {
        return replay_bad(errstr, errstr_size, offset,
                          "SCRAM credential record with mechanism %d or an "
                          "empty user name", (int) mech_type);
    }
    samsa_ConfigRecord_init(&cr);
    cr.ResourceType = SAMSA_IMAGE_RESOURCE_SCRAM;
    cr.ResourceName = user;
    cr.Name = samsa_slice_cstr(samsa_scram_mech_name(mech));
    cr.Value = (samsa_slice_t) { NULL, 0 };
    if (r != NULL) {
        memset(&cred, 0, sizeof(cred));
        cred.mech = mech;
        cred.iterations = r->Iterations;
        if (r->Salt.len == 0 || r->Salt.len > sizeof(cred.salt)
            || r->StoredKey.len != samsa_scram_hash_len(mech)
            || r->ServerKey.len != samsa_scram_hash_len(mech)) {
            return replay_bad(errstr, errstr_size, offset,
                              "UserScramCredentialRecord with a salt or "
                              "keys of the wrong size");
        }
        memcpy(cred.salt, r->Salt.ptr, r->Salt.len);
        cred.salt_len = r->Salt.len;
        memcpy(cred.stored_key, r->StoredKey.ptr, r->StoredKey.len);
        memcpy(cred.server_key, r->ServerKey.ptr, r->ServerKey.len);
        samsa_image_scram_format(&cred, value, sizeof(value));
        cr.Value = samsa_slice_cstr(value);
    }
    return replay_config(d, &cr, offset, errstr, errstr_size);
}

/* A ClientQuotaRecord: the entity's quotas live as the configs of a
 * resource of type SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA named by its
 * samsa_qentity_key, each value printed with %.17g (exact for a double). */
static samsa_err_t
replay_client_quota(samsa_image_delta_t *d, const samsa_ClientQuotaRecord_t *r,
                    int64_t offset, char *errstr, size_t errstr_size)
{
    samsa_ConfigRecord_t  cr;
    samsa_qentity_t       e;
    samsa_arena_t         arena = SAMSA_ARENA_INIT;
    char                  value[40];
    int32_t               i;
    int                   t;
    samsa_err_t           err;

    memset(&e, 0, sizeof(e));
    for (i = 0; i < r->Entity_cnt; i++) {
        t = samsa_qentity_type_find(r->Entity[i].EntityType);
        if (t < 0 || e.has[t]) {
            return replay_bad(errstr, errstr_size, offset,
                              "ClientQuotaRecord with a bad entity type "
                              "'%.*s'",
                              (int) r->Entity[i].EntityType.len,
                              r->Entity[i].EntityType.ptr);
        }
        e.has[t] = true;
        e.name[t] = r->Entity[i].EntityName;
    }
    if (r->Entity_cnt <= 0) {
        return replay_bad(errstr, errstr_size, offset,
                          "ClientQuotaRecord with an empty entity");
    }
    snprintf(value, sizeof(value), "%.17g", r->Value);
    samsa_ConfigRecord_init(&cr);
    cr.ResourceType = SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA;
    cr.ResourceName = samsa_slice_cstr(samsa_qentity_key(&e, &arena));
    cr.Name = r->Key;
    cr.Value = r->Remove ? (samsa_slice_t) { NULL, 0 }
                         : samsa_slice_cstr(value);
    err = replay_config(d, &cr, offset, errstr, errstr_size);
    samsa_arena_fini(&arena);
    return err;
}

static samsa_err_t
replay_remove_topic(samsa_image_delta_t *d,
                    const samsa_RemoveTopicRecord_t *r, int64_t offset,
                    char *errstr, size_t errstr_size)
{
    char    id[SAMSA_UUID_STR_SIZE];
    size_t  i = delta_find(d, NULL, 0, r->TopicId, true);

    if (i == SIZE_MAX) {
        samsa_image_id_str(r->TopicId, id);
        return replay_bad(errstr, errstr_size, offset,
                          "RemoveTopicRecord for unknown topic id %s", id);
    }
    delta_topic_remove(d, i);
    return SAMSA_ERR_NONE;
}

/* Level 0 removes the feature, as in Kafka's FeaturesDelta. */
static void
replay_feature(samsa_image_delta_t *d, const samsa_FeatureLevelRecord_t *r)
{
    image_misc_t  *m = &d->misc;
    size_t         i;
    int            cmp = 1;

    for (i = 0; i < m->nfeatures; i++) {
        cmp = strncmp(m->features[i].name, r->Name.ptr, r->Name.len);
        if (cmp == 0 && m->features[i].name[r->Name.len] != '\0') {
            cmp = 1;
        }
        if (cmp >= 0) {
            break;
        }
    }
    if (i < m->nfeatures && cmp == 0) {
        if (r->FeatureLevel != 0) {
            m->features[i].level = r->FeatureLevel;
            return;
        }
        samsa_free(m->features[i].name);
        memmove(&m->features[i], &m->features[i + 1],
                (m->nfeatures - i - 1) * sizeof(*m->features));
        m->nfeatures--;
        return;
    }
    if (r->FeatureLevel == 0) {
        return;
    }
    m->features = samsa_realloc(m->features, (m->nfeatures + 1)
                                             * sizeof(*m->features));
    memmove(&m->features[i + 1], &m->features[i],
            (m->nfeatures - i) * sizeof(*m->features));
    m->features[i].name = samsa_slice_dup(r->Name);
    m->features[i].level = r->FeatureLevel;
    m->nfeatures++;
}

/* The delta's broker entry with this id, or NULL. */
static samsa_image_broker_t *
delta_broker(samsa_image_delta_t *d, int32_t id)
{
    size_t  i;

    for (i = 0; i < d->misc.nbrokers; i++) {
        if (d->misc.brokers[i].id == id) {
            return &d->misc.brokers[i];
        }
    }
    return NULL;
}

const samsa_image_broker_t *
samsa_image_delta_broker_find(const samsa_image_delta_t *d, int32_t id)
{
    return delta_broker((samsa_image_delta_t *) d, id);
}

/* A new registration replaces the old one whole (Kafka's ClusterDelta);
 * the brokers stay in id order. */
static void
replay_register_broker(samsa_image_delta_t *d,
                       const samsa_RegisterBrokerRecord_t *r)
{
    image_misc_t                  *m = &d->misc;
    samsa_image_broker_t          *b = delta_broker(d, r->BrokerId);
    samsa_image_endpoint_t        *eps;
    samsa_image_broker_feature_t  *fs;
    size_t                         i;
    int32_t                        j;

    if (b != NULL) {
        broker_fini(b);
    } else {
        m->brokers = samsa_realloc(m->brokers, (m->nbrokers + 1)
                                               * sizeof(*m->brokers));
        for (i = m->nbrokers; i > 0 && m->brokers[i - 1].id > r->BrokerId;
             i--) {
            m->brokers[i] = m->brokers[i - 1];
        }
        m->nbrokers++;
        b = &m->brokers[i];
        memset(b, 0, sizeof(*b));
    }
    b->id = r->BrokerId;
    b->epoch = r->BrokerEpoch;
    b->incarnation_id = r->IncarnationId;
    b->fenced = r->Fenced;
    b->in_controlled_shutdown = r->InControlledShutdown;
    b->rack = r->Rack.ptr != NULL ? samsa_slice_dup(r->Rack) : NULL;
    eps = samsa_calloc((size_t) r->EndPoints_cnt + 1, sizeof(*eps));
    for (j = 0; j < r->EndPoints_cnt; j++) {
        eps[j].listener = samsa_slice_dup(r->EndPoints[j].Name);
        eps[j].host = samsa_slice_dup(r->EndPoints[j].Host);
        eps[j].port = r->EndPoints[j].Port;
        eps[j].security_protocol = r->EndPoints[j].SecurityProtocol;
    }
    b->endpoints = eps;
    b->nendpoints = (size_t) (r->EndPoints_cnt > 0 ? r->EndPoints_cnt : 0);
    fs = samsa_calloc((size_t) r->Features_cnt + 1, sizeof(*fs));
    for (j = 0; j < r->Features_cnt; j++) {
        fs[j].name = samsa_slice_dup(r->Features[j].Name);
        fs[j].min_version = r->Features[j].MinSupportedVersion;
        fs[j].max_version = r->Features[j].MaxSupportedVersion;
    }
    b->features = fs;
    b->nfeatures = (size_t) (r->Features_cnt > 0 ? r->Features_cnt : 0);
}

/* The broker a fence, unfence, change or unregister record names, or
 * NULL with errstr set when it is not registered or its epoch differs
 * (Kafka's ClusterDelta.getBrokerOrThrow). */
static samsa_image_broker_t *
replay_broker_get(samsa_image_delta_t *d, int32_t id, int64_t epoch,
                  const char *rec_name, int64_t offset, char *errstr,
                  size_t errstr_size)
{
    samsa_image_broker_t  *b = delta_broker(d, id);

    if (b == NULL) {
        (void) replay_bad(errstr, errstr_size, offset,
                          "%s for broker %" PRId32 ", which is not "
                          "registered", rec_name, id);
        return NULL;
    }
    if (b->epoch != epoch) {
        (void) replay_bad(errstr, errstr_size, offset,
                          "%s for broker %" PRId32 " with epoch %" PRId64
                          ", but its registration has epoch %" PRId64,
                          rec_name, id, epoch, b->epoch);
        return NULL;
    }
    return b;
}

static samsa_err_t
replay_unregister_broker(samsa_image_delta_t *d,
                         const samsa_UnregisterBrokerRecord_t *r,
                         int64_t offset, char *errstr, size_t errstr_size)
{
    image_misc_t          *m = &d->misc;
    samsa_image_broker_t  *b;
    size_t                 i;

    b = replay_broker_get(d, r->BrokerId, r->BrokerEpoch,
                          "UnregisterBrokerRecord", offset, errstr,
                          errstr_size);
    if (b == NULL) {
        return SAMSA_ERR__BAD_MSG;
    }
    i = (size_t) (b - m->brokers);
    broker_fini(b);
    memmove(&m->brokers[i], &m->brokers[i + 1],
            (m->nbrokers - i - 1) * sizeof(*m->brokers));
    m->nbrokers--;
    return SAMSA_ERR_NONE;
}

/* FenceBrokerRecord (fence true) and UnfenceBrokerRecord. */
static samsa_err_t
replay_fence_broker(samsa_image_delta_t *d, int32_t id, int64_t epoch,
                    bool fence, int64_t offset, char *errstr,
                    size_t errstr_size)
{
    samsa_image_broker_t  *b;

    b = replay_broker_get(d, id, epoch,
                          fence ? "FenceBrokerRecord" : "UnfenceBrokerRecord",
                          offset, errstr, errstr_size);
    if (b == NULL) {
        return SAMSA_ERR__BAD_MSG;
    }
    b->fenced = fence;
    return SAMSA_ERR_NONE;
}

/* Fenced: 1 fence, -1 unfence, 0 no change; InControlledShutdown: 1 in
 * controlled shutdown, 0 no change; other values are refused, as
 * BrokerRegistrationFencingChange.fromValue and
 * BrokerRegistrationInControlledShutdownChange.fromValue refuse them. */
static samsa_err_t
replay_broker_change(samsa_image_delta_t *d,
                     const samsa_BrokerRegistrationChangeRecord_t *r,
                     int64_t offset, char *errstr, size_t errstr_size)
{
    samsa_image_broker_t  *b;

    if (r->Fenced < -1 || r->Fenced > 1) {
        return replay_bad(errstr, errstr_size, offset,
                          "BrokerRegistrationChangeRecord for broker %"
                          PRId32 ": unknown value for Fenced: %d",
                          r->BrokerId, (int) r->Fenced);
    }
    if (r->InControlledShutdown < 0 || r->InControlledShutdown > 1) {
        return replay_bad(errstr, errstr_size, offset,
                          "BrokerRegistrationChangeRecord for broker %"
                          PRId32 ": unknown value for InControlledShutdown: "
                          "%d", r->BrokerId, (int) r->InControlledShutdown);
    }
    b = replay_broker_get(d, r->BrokerId, r->BrokerEpoch,
                          "BrokerRegistrationChangeRecord", offset, errstr,
                          errstr_size);
    if (b == NULL) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (r->Fenced != 0) {
        b->fenced = r->Fenced == 1;
    }
    if (r->InControlledShutdown == 1) {
        b->in_controlled_shutdown = true;
    }
    return SAMSA_ERR_NONE;
}

/* ---- ACLs (AclControlManager.replay) */

const samsa_acl_set_t *
samsa_image_delta_acls(const samsa_image_delta_t *d)
{
    return d->misc.acls;
}

static samsa_err_t
replay_acl(samsa_image_delta_t *d, const samsa_AccessControlEntryRecord_t *r,
           int64_t offset, char *errstr, size_t errstr_size)
{
    samsa_acl_t  acl = {
        .id = r->Id, .resource_type = r->ResourceType,
        .pattern_type = r->PatternType, .operation = r->Operation,
        .permission = r->PermissionType,
    };

    if (samsa_acl_resource_type_known(r->ResourceType)
            <= SAMSA_ACL_RESOURCE_ANY
        || (r->PatternType != SAMSA_ACL_PATTERN_LITERAL
            && r->PatternType != SAMSA_ACL_PATTERN_PREFIXED)
        || samsa_acl_operation_known(r->Operation) <= SAMSA_ACL_OP_ANY
        || (r->PermissionType != SAMSA_ACL_PERMISSION_ALLOW
            && r->PermissionType != SAMSA_ACL_PERMISSION_DENY)) {
        return replay_bad(errstr, errstr_size, offset,
                          "AccessControlEntryRecord with an unknown "
                          "resource type, pattern type, operation or "
                          "permission type (%d %d %d %d)",
                          (int) r->ResourceType, (int) r->PatternType,
                          (int) r->Operation, (int) r->PermissionType);
    }
    if (samsa_uuid_is_zero(r->Id)
        || samsa_acl_set_find_id(d->misc.acls, r->Id) != NULL) {
        return replay_bad(errstr, errstr_size, offset,
                          "AccessControlEntryRecord with a zero or an "
                          "existing id");
    }
    acl.resource_name = samsa_strndup(r->ResourceName.ptr,
                                      r->ResourceName.len);
    acl.principal = samsa_strndup(r->Principal.ptr, r->Principal.len);
    acl.host = samsa_strndup(r->Host.ptr, r->Host.len);
    samsa_acl_set_add(samsa_acl_set_mut(&d->misc.acls), &acl);
    samsa_free((char *) acl.resource_name);
    samsa_free((char *) acl.principal);
    samsa_free((char *) acl.host);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
replay_remove_acl(samsa_image_delta_t *d,
                  const samsa_RemoveAccessControlEntryRecord_t *r,
                  int64_t offset, char *errstr, size_t errstr_size)
{
    if (samsa_acl_set_find_id(d->misc.acls, r->Id) == NULL) {
        return replay_bad(errstr, errstr_size, offset,
                          "RemoveAccessControlEntryRecord: no acl with "
                          "that id");
    }
    (void) samsa_acl_set_remove(samsa_acl_set_mut(&d->misc.acls), r->Id);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_image_delta_replay(samsa_image_delta_t *d,
                         const samsa_MetadataRecords_any_t *rec,
                         int64_t offset, char *errstr, size_t errstr_size)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    switch (rec->type) {
    case SAMSA_MetadataRecords_TopicRecord:
        err = replay_topic(d, &rec->u.TopicRecord, offset, errstr,
                           errstr_size);
        break;
    case SAMSA_MetadataRecords_PartitionRecord:
        err = replay_partition(d, &rec->u.PartitionRecord, offset, errstr,
                               errstr_size);
        break;
    case SAMSA_MetadataRecords_PartitionChangeRecord:
        err = replay_partition_change(d, &rec->u.PartitionChangeRecord,
                                      offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_ConfigRecord:
        err = replay_config(d, &rec->u.ConfigRecord, offset, errstr,
                            errstr_size);
        break;
    case SAMSA_MetadataRecords_ClientQuotaRecord:
        err = replay_client_quota(d, &rec->u.ClientQuotaRecord, offset,
                                  errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_UserScramCredentialRecord:
        err = replay_scram(d, rec->u.UserScramCredentialRecord.Name,
                           rec->u.UserScramCredentialRecord.Mechanism,
                           &rec->u.UserScramCredentialRecord, offset, errstr,
                           errstr_size);
        break;
    case SAMSA_MetadataRecords_RemoveUserScramCredentialRecord:
        err = replay_scram(d, rec->u.RemoveUserScramCredentialRecord.Name,
                           rec->u.RemoveUserScramCredentialRecord.Mechanism,
                           NULL, offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_RemoveTopicRecord:
        err = replay_remove_topic(d, &rec->u.RemoveTopicRecord, offset,
                                  errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_FeatureLevelRecord:
        replay_feature(d, &rec->u.FeatureLevelRecord);
        break;
    case SAMSA_MetadataRecords_ProducerIdsRecord:
        if (rec->u.ProducerIdsRecord.NextProducerId
            < d->misc.next_producer_id) {
            return replay_bad(errstr, errstr_size, offset,
                              "ProducerIdsRecord moves the next producer "
                              "id back");
        }
        d->misc.next_producer_id = rec->u.ProducerIdsRecord.NextProducerId;
        break;
    case SAMSA_MetadataRecords_RegisterBrokerRecord:
        replay_register_broker(d, &rec->u.RegisterBrokerRecord);
        break;
    case SAMSA_MetadataRecords_UnregisterBrokerRecord:
        err = replay_unregister_broker(d, &rec->u.UnregisterBrokerRecord,
                                       offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_FenceBrokerRecord:
        err = replay_fence_broker(d, rec->u.FenceBrokerRecord.Id,
                                  rec->u.FenceBrokerRecord.Epoch, true,
                                  offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_UnfenceBrokerRecord:
        err = replay_fence_broker(d, rec->u.UnfenceBrokerRecord.Id,
                                  rec->u.UnfenceBrokerRecord.Epoch, false,
                                  offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_BrokerRegistrationChangeRecord:
        err = replay_broker_change(d,
                                   &rec->u.BrokerRegistrationChangeRecord,
                                   offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_AccessControlEntryRecord:
        err = replay_acl(d, &rec->u.AccessControlEntryRecord, offset,
                         errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_RemoveAccessControlEntryRecord:
        err = replay_remove_acl(d, &rec->u.RemoveAccessControlEntryRecord,
                                offset, errstr, errstr_size);
        break;
    case SAMSA_MetadataRecords_NoOpRecord:
        break;
    default:
        return replay_bad(errstr, errstr_size, offset,
                          "unsupported record type %d", (int) rec->type);
    }
    if (err == SAMSA_ERR_NONE && offset > d->offset) {
        d->offset = offset;
    }
    return err;
}

/* ---- apply */

static int
topic_cmp(const void *a, const void *b)
{
    const image_topic_t  *x = *(image_topic_t *const *) a;
    const image_topic_t  *y = *(image_topic_t *const *) b;

    return strcmp(x->name, y->name);
}

/* Drop removed entries and restore name order; rebuild the indexes. */
static void
delta_compact(samsa_image_delta_t *d)
{
    size_t  i, n = 0;

    if (d->nlive == d->ntopics && !d->sort) {
        return;
    }
    for (i = 0; i < d->ntopics; i++) {
        if (d->topics[i] != NULL) {
            d->topics[n] = d->topics[i];
            d->owned[n] = d->owned[i];
            n++;
        }
    }
    d->ntopics = n;
    if (d->sort) {
        /* owned[] no longer matches positions after sorting: clear it
         * (the next change clones; correct, merely a copy) */
        qsort(d->topics, n, sizeof(*d->topics), topic_cmp);
        memset(d->owned, 0, d->cap * sizeof(*d->owned));
        d->sort = false;
    }
    index_build(&d->by_name, d->topics, d->ntopics, d->cap, false);
    index_build(&d->by_id, d->topics, d->ntopics, d->cap, true);
}

samsa_image_t *
samsa_image_delta_apply(samsa_image_delta_t *d)
{
    samsa_image_t  *img = samsa_calloc(1, sizeof(*img));
    size_t          i;

    delta_compact(d);
    atomic_init(&img->refs, 1);
    img->offset = d->offset;
    img->ntopics = d->ntopics;
    img->topics = samsa_calloc(d->ntopics + 1, sizeof(*img->topics));
    for (i = 0; i < d->ntopics; i++) {
        img->topics[i] = topic_ref(d->topics[i]);
        d->owned[i] = false;            /* shared from now on */
    }
    index_build(&img->by_name, img->topics, img->ntopics, img->ntopics,
                false);
    index_build(&img->by_id, img->topics, img->ntopics, img->ntopics, true);
    misc_copy(&img->misc, &d->misc);
    return img;
}
