/*
 * client/consumer/cproto.c - ConsumerProtocol Subscription / Assignment codecs
 * (see cproto.h).
 * Threads: pure.
 */
#include "client/consumer/cproto.h"

#include <string.h>

#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/slice.h"

static void
cproto_wr_topics(samsa_wr_t *wr, const samsa_cproto_topic_t *t, int32_t n)
{
    int32_t  i, j;

    samsa_wr_i32(wr, n);
    for (i = 0; i < n; i++) {
        samsa_wr_str(wr, samsa_slice_cstr(t[i].topic));
        samsa_wr_i32(wr, t[i].nparts);
        for (j = 0; j < t[i].nparts; j++) {
            samsa_wr_i32(wr, t[i].parts[j]);
        }
    }
}

static void
cproto_wr_userdata(samsa_wr_t *wr, const uint8_t *p, int32_t len)
{
    samsa_wr_nullable_bytes(wr, p != NULL ? (samsa_slice_t) {
                                                (const char *) p,
                                                (size_t) len }
                                          : SAMSA_SLICE_NULL);
}

void
samsa_cproto_sub_encode(const samsa_cproto_sub_t *sub, samsa_buf_t *out)
{
    samsa_wr_t  wr;
    int32_t     i;

    samsa_wr_init(&wr, out);
    samsa_wr_i16(&wr, sub->version);
    samsa_wr_i32(&wr, sub->ntopics);
    for (i = 0; i < sub->ntopics; i++) {
        samsa_wr_str(&wr, samsa_slice_cstr(sub->topics[i]));
    }
    cproto_wr_userdata(&wr, sub->userdata, sub->userdata_len);
    if (sub->version >= 1) {
        cproto_wr_topics(&wr, sub->owned, sub->nowned);
    }
    if (sub->version >= 2) {
        samsa_wr_i32(&wr, sub->generation);
    }
    if (sub->version >= 3) {
        samsa_wr_nullable_str(&wr, sub->rack != NULL
                                       ? samsa_slice_cstr(sub->rack)
                                       : SAMSA_SLICE_NULL);
    }
}

void
samsa_cproto_asg_encode(const samsa_cproto_asg_t *asg, samsa_buf_t *out)
{
    samsa_wr_t  wr;

    samsa_wr_init(&wr, out);
    samsa_wr_i16(&wr, asg->version);
    cproto_wr_topics(&wr, asg->topics, asg->ntopics);
    cproto_wr_userdata(&wr, asg->userdata, asg->userdata_len);
}

static char *
cproto_dup(samsa_slice_t s)
{
    return samsa_strndup(s.ptr, s.len);
}

static samsa_err_t
cproto_rd_topics(samsa_rd_t *rd, samsa_cproto_topic_t **out, int32_t *n)
{
    samsa_cproto_topic_t  *t;
    samsa_slice_t          name;
    int32_t                cnt, i, j;

    cnt = samsa_rd_array_cnt(rd, false, true, 6);
    if (rd->err != SAMSA_ERR_NONE) {
        return rd->err;
    }
    if (cnt <= 0) {
        return SAMSA_ERR_NONE;
    }
    t = samsa_calloc((size_t) cnt, sizeof(*t));
    *out = t;
    for (i = 0; i < cnt; i++) {
        name = samsa_rd_str(rd);
        if (rd->err != SAMSA_ERR_NONE) {
            return rd->err;
        }
        t[i].topic = cproto_dup(name);
        *n = i + 1;
        t[i].nparts = samsa_rd_array_cnt(rd, false, true, 4);
        if (rd->err != SAMSA_ERR_NONE) {
            t[i].nparts = 0;
            return rd->err;
        }
        if (t[i].nparts < 0) {
            t[i].nparts = 0;
        }
        t[i].parts = samsa_calloc((size_t) t[i].nparts + 1,
                                  sizeof(int32_t));
        for (j = 0; j < t[i].nparts; j++) {
            t[i].parts[j] = samsa_rd_i32(rd);
        }
    }
    return rd->err;
}

static void
cproto_rd_userdata(samsa_rd_t *rd, uint8_t **p, int32_t *len)
{
    samsa_slice_t  ud = samsa_rd_nullable_bytes(rd);

    if (rd->err != SAMSA_ERR_NONE || ud.ptr == NULL) {
        return;
    }
    *p = samsa_malloc(ud.len + 1);
    memcpy(*p, ud.ptr, ud.len);
    *len = (int32_t) ud.len;
}

samsa_err_t
samsa_cproto_sub_decode(const uint8_t *p, size_t len, samsa_cproto_sub_t *sub)
{
    samsa_rd_t     rd;
    samsa_slice_t  s;
    int32_t        cnt, i;

    memset(sub, 0, sizeof(*sub));
    sub->generation = -1;
    samsa_rd_init(&rd, p, len);
    sub->version = samsa_rd_i16(&rd);
    if (rd.err == SAMSA_ERR_NONE && sub->version < 0) {
        samsa_rd_fail(&rd, SAMSA_ERR__BAD_MSG);
    }
    cnt = samsa_rd_array_cnt(&rd, false, true, 2);
    if (rd.err == SAMSA_ERR_NONE && cnt > 0) {
        sub->topics = samsa_calloc((size_t) cnt + 1, sizeof(char *));
        for (i = 0; i < cnt; i++) {
            s = samsa_rd_str(&rd);
            if (rd.err != SAMSA_ERR_NONE) {
                break;
            }
            sub->topics[sub->ntopics++] = cproto_dup(s);
        }
    }
    cproto_rd_userdata(&rd, &sub->userdata, &sub->userdata_len);
    if (rd.err == SAMSA_ERR_NONE && sub->version >= 1) {
        (void) cproto_rd_topics(&rd, &sub->owned, &sub->nowned);
    }
    if (rd.err == SAMSA_ERR_NONE && sub->version >= 2) {
        sub->generation = samsa_rd_i32(&rd);
    }
    if (rd.err == SAMSA_ERR_NONE && sub->version >= 3) {
        s = samsa_rd_nullable_str(&rd);
        if (rd.err == SAMSA_ERR_NONE && s.ptr != NULL) {
            sub->rack = cproto_dup(s);
        }
    }
    if (rd.err != SAMSA_ERR_NONE) {
        samsa_err_t  err = rd.err;

        samsa_cproto_sub_fini(sub);
        return err;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_cproto_topics_free(samsa_cproto_topic_t *topics, int32_t n)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(topics[i].topic);
        samsa_free(topics[i].parts);
    }
    samsa_free(topics);
}

void
samsa_cproto_sub_fini(samsa_cproto_sub_t *sub)
{
    int32_t  i;

    for (i = 0; i < sub->ntopics; i++) {
        samsa_free(sub->topics[i]);
    }
    samsa_free(sub->topics);
    samsa_free(sub->userdata);
    samsa_cproto_topics_free(sub->owned, sub->nowned);
    samsa_free(sub->rack);
    memset(sub, 0, sizeof(*sub));
    sub->generation = -1;
}

samsa_err_t
samsa_cproto_asg_decode(const uint8_t *p, size_t len, samsa_cproto_asg_t *asg)
{
    samsa_rd_t   rd;
    samsa_err_t  err;

    memset(asg, 0, sizeof(*asg));
    if (len == 0) {
        return SAMSA_ERR_NONE;
    }
    samsa_rd_init(&rd, p, len);
    asg->version = samsa_rd_i16(&rd);
    if (rd.err == SAMSA_ERR_NONE && asg->version < 0) {
        samsa_rd_fail(&rd, SAMSA_ERR__BAD_MSG);
    }
    if (rd.err == SAMSA_ERR_NONE) {
        (void) cproto_rd_topics(&rd, &asg->topics, &asg->ntopics);
    }
    cproto_rd_userdata(&rd, &asg->userdata, &asg->userdata_len);
    if (rd.err != SAMSA_ERR_NONE) {
        err = rd.err;
        samsa_cproto_asg_fini(asg);
        return err;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_cproto_asg_fini(samsa_cproto_asg_t *asg)
{
    samsa_cproto_topics_free(asg->topics, asg->ntopics);
    samsa_free(asg->userdata);
    memset(asg, 0, sizeof(*asg));
}
