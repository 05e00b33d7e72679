/*
 * Unit tests for src/proto/gen.py, through the codecs it generates from
 * tests/unit/proto/schema/Kitchen.schema: every type, defaults, version
 * ranges, nullability, tagged fields (including one regular before it is
 * tagged), shared and embedded structs, and hostile input.
 */
#include "unit.h"

#include <stdlib.h>

#include "proto/testgen/Kitchen.c"
#include "rt.h"

RT_DEFINE(KitchenRequest)
RT_DEFINE(KitchenResponse)

static samsa_uuid_t
uuid_n(uint8_t n)
{
    samsa_uuid_t  u;

    memset(u.b, n, sizeof(u.b));
    return u;
}

static void
test_gen_init_defaults(void **state)
{
    samsa_KitchenRequest_t  m;

    (void) state;
    memset(&m, 0x5a, sizeof(m));
    samsa_KitchenRequest_init(&m);
    assert_int_equal(m.I8, -8);
    assert_int_equal(m.I16, -16);
    assert_int_equal(m.I32, INT32_MAX);
    assert_true(m.I64 == INT64_MIN);
    assert_int_equal(m.U16, 65535);
    assert_true(m.U32 == UINT32_MAX);
    assert_true(m.F64 == 2.5);
    assert_true(m.Flag);
    assert_true(samsa_uuid_is_zero(m.Id));
    assert_true(samsa_slice_eq_cstr(m.Str, "hi"));
    assert_null(m.NStr.ptr);
    assert_non_null(m.Blob.ptr);
    assert_int_equal(m.Blob.len, 0);
    assert_null(m.NBlob.ptr);
    assert_null(m.Recs.bytes.ptr);
    assert_int_equal(m.Ints_cnt, 0);
    assert_null(m.Ints);
    assert_int_equal(m.Inner.A, 7);                 /* nested default */
    assert_true(samsa_slice_eq_cstr(m.Inner.B, ""));
    assert_int_equal(m.One.Id, 0);
    assert_true(samsa_slice_eq_cstr(m.One.Label, ""));
    assert_int_equal(m.Old, 5);
    assert_null(m.LateStr.ptr);
    assert_true(samsa_slice_eq_cstr(m.TagStr, "x"));
    assert_int_equal(m.TagArr_cnt, 0);
    assert_int_equal(m.Late, 0);
    assert_int_equal(m.Promo, 9);
}

static void
test_gen_nested_init(void **state)
{
    samsa_KitchenItem_t  it;

    (void) state;
    samsa_KitchenItem_init(&it);
    assert_int_equal(it.Tagged, -1);
    assert_true(samsa_slice_eq_cstr(it.Name, ""));
}

/* Every field set to something other than its default. */
static void
populate(samsa_KitchenRequest_t *m, samsa_arena_t *arena)
{
    samsa_KitchenRequest_init(m);
    m->I8 = 1;
    m->I16 = 2;
    m->I32 = 3;
    m->I64 = 4;
    m->U16 = 5;
    m->U32 = 6;
    m->F64 = -1.5;
    m->Flag = false;
    m->Id = uuid_n(1);
    m->Str = S("str");
    m->NStr = S("nstr");
    m->Blob = S("blob");
    m->NBlob = S("nb");
    m->Recs.bytes = S("recs");
    m->Ints_cnt = 3;
    m->Ints = samsa_arena_calloc(arena, 3, sizeof(*m->Ints));
    m->Ints[0] = 1;
    m->Ints[1] = -1;
    m->Ints[2] = INT64_MAX;
    m->Strs_cnt = 2;
    m->Strs = samsa_arena_calloc(arena, 2, sizeof(*m->Strs));
    m->Strs[0] = S("a");
    m->Strs[1] = S("bc");
    m->Uuids_cnt = 2;
    m->Uuids = samsa_arena_calloc(arena, 2, sizeof(*m->Uuids));
    m->Uuids[0] = uuid_n(2);
    m->Uuids[1] = uuid_n(3);
    m->Inner.A = 70;
    m->Inner.B = S("inner");
    m->Items_cnt = 2;
    m->Items = samsa_arena_calloc(arena, 2, sizeof(*m->Items));
    samsa_KitchenItem_init(&m->Items[0]);
    samsa_KitchenItem_init(&m->Items[1]);
    m->Items[0].Name = S("it0");
    m->Items[0].Vals_cnt = 2;
    m->Items[0].Vals = samsa_arena_calloc(arena, 2, sizeof(int32_t));
    m->Items[0].Vals[0] = 10;
    m->Items[0].Vals[1] = -10;
    m->Items[0].Tagged = 5;
    m->Items[1].Name = S("it1");
    m->Shareds_cnt = 2;
    m->Shareds = samsa_arena_calloc(arena, 2, sizeof(*m->Shareds));
    m->Shareds[0].Id = 1;
    m->Shareds[0].Label = S("l");
    m->Shareds[1].Id = 2;
    m->Shareds[1].Label = SAMSA_SLICE_NULL;
    m->One.Id = 3;
    m->One.Label = S("one");
    m->Old = 50;
    m->LateStr = S("late");
    m->TagStr = S("tag");
    m->TagArr_cnt = 2;
    m->TagArr = samsa_arena_calloc(arena, 2, sizeof(*m->TagArr));
    m->TagArr[0].K = 1;
    m->TagArr[1].K = 2;
    m->TagU = uuid_n(4);
    m->Late = 77;
    m->Promo = 99;
    m->TagSt.E = 11;
    m->TagSt.F = 12;
    m->TagSt_set = true;
}

static void
check_common(const samsa_KitchenRequest_t *m)
{
    assert_int_equal(m->I8, 1);
    assert_int_equal(m->I16, 2);
    assert_int_equal(m->I32, 3);
    assert_true(m->I64 == 4);
    assert_true(m->F64 == -1.5);
    assert_false(m->Flag);
    assert_true(samsa_slice_eq_cstr(m->Str, "str"));
    assert_true(samsa_slice_eq_cstr(m->NStr, "nstr"));
    assert_true(samsa_slice_eq_cstr(m->Blob, "blob"));
    assert_true(samsa_slice_eq_cstr(m->NBlob, "nb"));
    assert_true(samsa_slice_eq_cstr(m->Recs.bytes, "recs"));
    assert_int_equal(m->Ints_cnt, 3);
    assert_true(m->Ints[2] == INT64_MAX);
    assert_int_equal(m->Inner.A, 70);
    assert_int_equal(m->Items_cnt, 2);
    assert_true(samsa_slice_eq_cstr(m->Items[1].Name, "it1"));
    assert_int_equal(m->Shareds_cnt, 2);
    assert_int_equal(m->Shareds[1].Id, 2);
    assert_int_equal(m->One.Id, 3);
}

/* Fields of v1 and later. */
static void
check_v1(const samsa_KitchenRequest_t *m, int16_t v)
{
    bool  has = v >= 1;

    assert_int_equal(m->U16, has ? 5 : 65535);
    assert_true(m->U32 == (has ? 6 : UINT32_MAX));
    assert_true(samsa_uuid_eq(m->Id, has ? uuid_n(1) : uuid_n(0)));
    assert_int_equal(m->Strs_cnt, has ? 2 : 0);
    if (has) {
        assert_true(samsa_slice_eq_cstr(m->Strs[1], "bc"));
        assert_int_equal(m->Items[0].Vals_cnt, 2);
        assert_int_equal(m->Items[0].Vals[1], -10);
        assert_true(samsa_slice_eq_cstr(m->Shareds[0].Label, "l"));
        assert_null(m->Shareds[1].Label.ptr);
        assert_true(samsa_slice_eq_cstr(m->One.Label, "one"));
    } else {
        assert_int_equal(m->Items[0].Vals_cnt, 0);
        assert_true(samsa_slice_eq_cstr(m->Shareds[0].Label, ""));
        assert_true(samsa_slice_eq_cstr(m->One.Label, ""));
    }
    assert_int_equal(m->Old, v <= 1 ? 50 : 5);
}

/* Fields of v2 and later: the tagged ones appear with flexibility. */
static void
check_v2(const samsa_KitchenRequest_t *m, int16_t v)
{
    bool  has = v >= 2;

    assert_true(samsa_slice_eq_cstr(m->Inner.B, has ? "inner" : ""));
    assert_int_equal(m->Items[0].Tagged, has ? 5 : -1);
    assert_int_equal(m->Items[1].Tagged, -1);
    assert_true(has ? samsa_slice_eq_cstr(m->LateStr, "late")
                    : m->LateStr.ptr == NULL);
    assert_true(samsa_slice_eq_cstr(m->TagStr, has ? "tag" : "x"));
    assert_int_equal(m->TagArr_cnt, has ? 2 : 0);
    if (has) {
        assert_int_equal(m->TagArr[1].K, 2);
    }
    assert_true(samsa_uuid_eq(m->TagU, has ? uuid_n(4) : uuid_n(0)));
    assert_int_equal(m->TagSt_set, has);
    assert_int_equal(m->TagSt.E, has ? 11 : -1);
    assert_true(m->TagSt.F == (has ? 12 : -1));
}

static void
check_v3(const samsa_KitchenRequest_t *m, int16_t v)
{
    bool  has = v >= 3;

    assert_int_equal(m->Uuids_cnt, has ? 2 : 0);
    if (has) {
        assert_true(samsa_uuid_eq(m->Uuids[1], uuid_n(3)));
    }
    assert_int_equal(m->Late, has ? 77 : 0);
    assert_int_equal(m->Promo, 99);         /* regular v0-2, tagged v3 */
}

static void
test_gen_round_trip_all_versions(void **state)
{
    samsa_KitchenRequest_t  in, out;
    samsa_arena_t           arena;
    samsa_buf_t             buf;
    int16_t                 v;

    (void) state;
    for (v = 0; v <= 3; v++) {
        samsa_arena_init(&arena);
        populate(&in, &arena);
        rt_KitchenRequest(v, &in, &out, &arena, &buf);
        check_common(&out);
        check_v1(&out, v);
        check_v2(&out, v);
        check_v3(&out, v);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Nulls survive where nullable and become empty where not. */
static void
test_gen_nulls(void **state)
{
    samsa_KitchenRequest_t  in, out;
    samsa_arena_t           arena;
    samsa_buf_t             buf;
    int16_t                 v;

    (void) state;
    for (v = 0; v <= 3; v++) {
        samsa_arena_init(&arena);
        samsa_KitchenRequest_init(&in);
        in.Strs_cnt = -1;                           /* nullable from v2 */
        in.Items_cnt = -1;                          /* nullable from v1 */
        in.Str = SAMSA_SLICE_NULL;                  /* never nullable */
        rt_KitchenRequest(v, &in, &out, &arena, &buf);
        assert_null(out.NStr.ptr);
        assert_null(out.NBlob.ptr);
        assert_null(out.Recs.bytes.ptr);
        assert_int_equal(out.Strs_cnt, v >= 2 ? -1 : 0);
        assert_int_equal(out.Items_cnt, v >= 1 ? -1 : 0);
        assert_non_null(out.Str.ptr);
        assert_int_equal(out.Str.len, 0);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Tagged fields at their defaults are left out; others go in tag order. */
static void
test_gen_tags_only_when_not_default(void **state)
{
    samsa_KitchenRequest_t  m;
    samsa_buf_t             b0 = SAMSA_BUF_INIT, b1 = SAMSA_BUF_INIT;
    samsa_wr_t              wr;
    static const uint8_t    late[] = { 0x02, 0x05, 0x02, 0x00, 0x2a,
                                       0x06, 0x04, 0x00, 0x00, 0x00, 0x01 };

    (void) state;
    samsa_KitchenRequest_init(&m);
    samsa_wr_init(&wr, &b0);
    samsa_KitchenRequest_encode(&wr, 3, &m);
    assert_int_equal(b0.data[b0.len - 1], 0x00);    /* no tags */
    m.Late = 42;
    m.Promo = 1;
    samsa_wr_init(&wr, &b1);
    samsa_KitchenRequest_encode(&wr, 3, &m);
    assert_int_equal(b1.len, b0.len - 1 + sizeof(late));
    assert_memory_equal(b1.data, b0.data, b0.len - 1);
    assert_memory_equal(b1.data + b0.len - 1, late, sizeof(late));
    samsa_buf_fini(&b0);
    samsa_buf_fini(&b1);
}

/* A tagged struct field is written when set, whatever its values (Kafka
 * writes it when not its default; the broker sets it only to send it),
 * as tag 7, size 13: int32 E, int64 F and its own (empty) tagged fields;
 * a decoder that meets it sets _set. */
static void
test_gen_tagged_struct(void **state)
{
    samsa_KitchenRequest_t  m;
    samsa_buf_t             b0 = SAMSA_BUF_INIT, b1 = SAMSA_BUF_INIT;
    samsa_wr_t              wr;
    samsa_arena_t           arena;
    static const uint8_t    st[] = { 0x01, 0x07, 0x0d,
                                     0x00, 0x00, 0x00, 0x01,
                                     0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x02,
                                     0x00 };    /* the struct's own tags */

    (void) state;
    samsa_arena_init(&arena);
    samsa_KitchenRequest_init(&m);
    assert_false(m.TagSt_set);
    assert_int_equal(m.TagSt.E, -1);
    samsa_wr_init(&wr, &b0);
    samsa_KitchenRequest_encode(&wr, 2, &m);
    assert_int_equal(b0.data[b0.len - 1], 0x00);    /* no tags */
    m.TagSt.E = 1;
    m.TagSt.F = 2;
    m.TagSt_set = true;
    samsa_wr_init(&wr, &b1);
    samsa_KitchenRequest_encode(&wr, 2, &m);
    assert_int_equal(b1.len, b0.len - 1 + sizeof(st));
    assert_memory_equal(b1.data, b0.data, b0.len - 1);
    assert_memory_equal(b1.data + b0.len - 1, st, sizeof(st));
    assert_int_equal(RT_DECODE(KitchenRequest, 2, b1.data, b1.len, &arena,
                               &m), SAMSA_ERR_NONE);
    assert_true(m.TagSt_set);
    assert_int_equal(m.TagSt.E, 1);
    assert_true(m.TagSt.F == 2);
    assert_int_equal(RT_DECODE(KitchenRequest, 2, b0.data, b0.len, &arena,
                               &m), SAMSA_ERR_NONE);
    assert_false(m.TagSt_set);
    samsa_buf_fini(&b0);
    samsa_buf_fini(&b1);
    samsa_arena_fini(&arena);
}

/* Exact bytes of the small response in each version. */
static void
test_gen_response_bytes(void **state)
{
    static const uint8_t   v0[] = { 0x00, 0x05 };
    static const uint8_t   v1[] = { 0x00, 0x05, 0x00, 0x00, 0x00, 0x01,
                                    0x00, 0x00, 0x00, 0x07, 0xff, 0xff };
    static const uint8_t   v2[] = { 0x00, 0x05, 0x02, 0x00, 0x00, 0x00,
                                    0x07, 0x00, 0x00, 0x00 };
    samsa_KitchenShared_t  sh;
    samsa_KitchenResponse_t  m, out;
    samsa_arena_t          arena;
    samsa_buf_t            buf;

    (void) state;
    samsa_arena_init(&arena);
    samsa_KitchenResponse_init(&m);
    samsa_KitchenShared_init(&sh);
    sh.Id = 7;
    sh.Label = SAMSA_SLICE_NULL;
    m.ErrorCode = 5;
    m.Shareds = &sh;
    m.Shareds_cnt = 1;
    RT_ENCODES_TO(KitchenResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(KitchenResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(KitchenResponse, 2, &m, v2, sizeof(v2));
    RT_ENCODES_TO(KitchenResponse, 3, &m, v2, sizeof(v2));
    rt_KitchenResponse(2, &m, &out, &arena, &buf);
    assert_int_equal(out.Shareds[0].Id, 7);
    assert_null(out.Shareds[0].Label.ptr);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

/* Unknown tags are skipped; a known tag shorter than its value fails. */
static void
test_gen_unknown_tags_skipped(void **state)
{
    static const uint8_t  unknown[] = { 0x00, 0x05, 0x01, 0x02, 0x07, 0x03,
                                        'a', 'b', 'c', 0x64, 0x00 };
    static const uint8_t  cut[] = { 0x00, 0x05, 0x01, 0x01, 0x07, 0x03, 'a' };
    samsa_KitchenResponse_t  m;
    samsa_KitchenRequest_t   req;
    samsa_arena_t         arena;
    samsa_buf_t           buf = SAMSA_BUF_INIT;
    samsa_wr_t            wr;

    (void) state;
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(KitchenResponse, 2, unknown, sizeof(unknown),
                               &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.ErrorCode, 5);
    assert_int_equal(RT_DECODE(KitchenResponse, 2, cut, sizeof(cut),
                               &arena, &m), SAMSA_ERR__UNDERFLOW);

    /* Tag 5 (Late, int16) with a 1-byte value, then with 3 bytes. */
    samsa_KitchenRequest_init(&req);
    samsa_wr_init(&wr, &buf);
    samsa_KitchenRequest_encode(&wr, 3, &req);
    buf.len--;                                      /* drop "no tags" */
    samsa_wr_raw(&wr, "\x01\x05\x01\x07", 4);
    assert_int_equal(RT_DECODE(KitchenRequest, 3, buf.data, buf.len,
                               &arena, &req), SAMSA_ERR__UNDERFLOW);
    buf.len -= 4;
    samsa_wr_raw(&wr, "\x01\x05\x03\x01\x02\x03", 6);
    assert_int_equal(RT_DECODE(KitchenRequest, 3, buf.data, buf.len,
                               &arena, &req), SAMSA_ERR_NONE);
    assert_int_equal(req.Late, 0x0102);
    /* The same tag in v2, where it does not exist yet: skipped. */
    samsa_KitchenRequest_init(&req);
    buf.len = 0;
    samsa_KitchenRequest_encode(&wr, 2, &req);
    buf.len--;
    samsa_wr_raw(&wr, "\x01\x05\x02\x01\x02", 5);
    assert_int_equal(RT_DECODE(KitchenRequest, 2, buf.data, buf.len,
                               &arena, &req), SAMSA_ERR_NONE);
    assert_int_equal(req.Late, 0);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

/* Hostile array counts fail before allocating anything. */
static void
test_gen_hostile_counts(void **state)
{
    static const uint8_t  huge[] = { 0x00, 0x05, 0x7f, 0xff, 0xff, 0xff,
                                     0x00, 0x00, 0x00, 0x07, 0xff, 0xff };
    static const uint8_t  chuge[] = { 0x00, 0x05, 0xff, 0xff, 0xff, 0xff,
                                      0x07, 0x00 };
    static const uint8_t  cmax[] = { 0x00, 0x05, 0x82, 0x80, 0x80, 0x80,
                                     0x08, 0x00 };
    static const uint8_t  null[] = { 0x00, 0x05, 0xff, 0xff, 0xff, 0xff };
    samsa_KitchenResponse_t  m;
    samsa_arena_t         arena;

    (void) state;
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(KitchenResponse, 1, huge, sizeof(huge),
                               &arena, &m), SAMSA_ERR__UNDERFLOW);
    assert_int_equal(RT_DECODE(KitchenResponse, 2, chuge, sizeof(chuge),
                               &arena, &m), SAMSA_ERR__UNDERFLOW);
    assert_int_equal(RT_DECODE(KitchenResponse, 2, cmax, sizeof(cmax),
                               &arena, &m), SAMSA_ERR__BAD_MSG);
    assert_int_equal(arena.used, 0);
    assert_int_equal(RT_DECODE(KitchenResponse, 1, null, sizeof(null),
                               &arena, &m), SAMSA_ERR__BAD_MSG);
    samsa_arena_fini(&arena);
}

static void
test_gen_bad_version(void **state)
{
    static const uint8_t     in[] = { 0x00, 0x05 };
    samsa_KitchenResponse_t  m;
    samsa_arena_t            arena;

    (void) state;
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(KitchenResponse, 4, in, sizeof(in), &arena, &m),
                     SAMSA_ERR_UNSUPPORTED_VERSION);
    assert_int_equal(RT_DECODE(KitchenResponse, -1, in, sizeof(in), &arena,
                               &m), SAMSA_ERR_UNSUPPORTED_VERSION);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_gen_init_defaults),
        cmocka_unit_test(test_gen_nested_init),
        cmocka_unit_test(test_gen_round_trip_all_versions),
        cmocka_unit_test(test_gen_nulls),
        cmocka_unit_test(test_gen_tags_only_when_not_default),
        cmocka_unit_test(test_gen_tagged_struct),
        cmocka_unit_test(test_gen_response_bytes),
        cmocka_unit_test(test_gen_unknown_tags_skipped),
        cmocka_unit_test(test_gen_hostile_counts),
        cmocka_unit_test(test_gen_bad_version),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
