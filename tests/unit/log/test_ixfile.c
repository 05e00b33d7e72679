/* Unit tests for log/ixfile.c: mapped fixed-entry index files. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/ixfile.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
test_ixfile_prealloc_append_trim_reopen(void **state)
{
    char            *dir = bg_tmpdir(), path[512];
    samsa_ixfile_t   ix;
    const uint8_t   *e;
    uint8_t          entry[8];
    bool             created;
    size_t           n, i;

    (void) state;
    snprintf(path, sizeof(path), "%s/x.index", dir);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_true(created);
    assert_int_equal(samsa_ixfile_count(&ix), 0);
    assert_true(samsa_ixfile_full(&ix));        /* nothing preallocated */
    assert_int_equal(samsa_ixfile_resize(&ix, 8 * 4 + 7), SAMSA_ERR_NONE);
    assert_int_equal(bg_file_size(path), 32);   /* rounded to entries */
    for (i = 0; i < 4; i++) {
        memset(entry, (int) i + 1, sizeof(entry));
        assert_true(samsa_ixfile_append(&ix, entry));
    }
    assert_false(samsa_ixfile_append(&ix, entry));
    samsa_ixfile_truncate(&ix, 3);
    assert_int_equal(samsa_ixfile_count(&ix), 3);
    assert_int_equal(samsa_ixfile_trim(&ix), SAMSA_ERR_NONE);
    assert_int_equal(bg_file_size(path), 24);
    e = samsa_ixfile_read_begin(&ix, &n);
    assert_int_equal(n, 3);
    assert_int_equal(e[16], 3);
    samsa_ixfile_read_end(&ix);
    assert_int_equal(samsa_ixfile_flush(&ix), SAMSA_ERR_NONE);
    samsa_ixfile_close(&ix);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_false(created);
    assert_false(ix.misaligned);
    assert_int_equal(samsa_ixfile_count(&ix), 3);
    assert_int_equal(samsa_ixfile_resize(&ix, 1 << 20), SAMSA_ERR_NONE);
    assert_true(samsa_ixfile_append(&ix, entry));
    e = samsa_ixfile_read_begin(&ix, &n);
    assert_int_equal(n, 4);
    assert_int_equal(e[0], 1);
    assert_int_equal(e[31], 4);
    samsa_ixfile_read_end(&ix);
    samsa_ixfile_close(&ix);
    /* a size that is not a multiple of the entry size is flagged */
    assert_int_equal(truncate(path, 13), 0);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_true(ix.misaligned);
    assert_int_equal(samsa_ixfile_count(&ix), 1);
    samsa_ixfile_close(&ix);
    bg_rmrf(dir);
}

/* Appends go into the mapping where fallocate gave the sparse file its
 * blocks, 64 KiB at a time, and reach the file: read back with pread after
 * close, the rest of the preallocated file stays a hole. */
static void
test_ixfile_append_through_reserved_mapping(void **state)
{
    char            *dir = bg_tmpdir(), path[512];
    samsa_ixfile_t   ix;
    uint8_t          entry[8], back[8];
    bool             created;
    struct stat      st;
    uint32_t         i;
    int              fd;

    (void) state;
    snprintf(path, sizeof(path), "%s/y.index", dir);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_ixfile_resize(&ix, 1 << 20), SAMSA_ERR_NONE);
    assert_int_equal(ix.alloc_bytes, 0);
    for (i = 0; i < 10000; i++) {
        memcpy(entry, &i, sizeof(i));
        memcpy(entry + 4, &i, sizeof(i));
        assert_true(samsa_ixfile_append(&ix, entry));
    }
    /* 10000 entries of 8 bytes: two 64 KiB reservations */
    assert_int_equal(ix.alloc_bytes, 2 * 64 * 1024);
    assert_int_equal(stat(path, &st), 0);
    assert_true((size_t) st.st_blocks * 512 >= 2 * 64 * 1024);
    assert_true((size_t) st.st_blocks * 512 < (1 << 20));
    samsa_ixfile_close(&ix);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    for (i = 0; i < 10000; i += 997) {
        assert_int_equal(pread(fd, back, sizeof(back), (off_t) i * 8), 8);
        assert_memory_equal(back, &i, sizeof(i));
        assert_memory_equal(back + 4, &i, sizeof(i));
    }
    close(fd);
    bg_rmrf(dir);
}

/* VmFlags of the mapping that starts at addr, from /proc/self/smaps. */
static bool
mapping_flags(const void *addr, char *flags, size_t cap)
{
    FILE       *f = fopen("/proc/self/smaps", "r");
    char        line[512];
    uintptr_t   lo, hi;
    bool        in = false, found = false;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2
            && strchr(line, '-') < strchr(line, ' ')) {
            in = lo == (uintptr_t) addr;
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, cap, "%s", line + 8);
            found = true;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Index mappings are advised random (no read-around: a page fault reads
 * one page of the sparse file, not the kernel's read-around window), after
 * open, after a resize remaps, after the descriptor cache reattaches. */
static void
test_ixfile_mapping_advised_random(void **state)
{
    char            *dir = bg_tmpdir(), path[512], flags[512];
    samsa_ixfile_t   ix;
    uint8_t          entry[8] = { 1 };
    bool             created;

    (void) state;
    snprintf(path, sizeof(path), "%s/z.index", dir);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_ixfile_resize(&ix, 1 << 20), SAMSA_ERR_NONE);
    assert_true(mapping_flags(ix.map, flags, sizeof(flags)));
    assert_non_null(strstr(flags, " rr"));
    assert_true(samsa_ixfile_append(&ix, entry));
    samsa_ixfile_detach(&ix);
    assert_int_equal(samsa_ixfile_attach(&ix), SAMSA_ERR_NONE);
    assert_true(mapping_flags(ix.map, flags, sizeof(flags)));
    assert_non_null(strstr(flags, " rr"));
    samsa_ixfile_close(&ix);
    assert_int_equal(samsa_ixfile_open(&ix, path, 8, &created),
                     SAMSA_ERR_NONE);
    assert_true(mapping_flags(ix.map, flags, sizeof(flags)));
    assert_non_null(strstr(flags, " rr"));
    samsa_ixfile_close(&ix);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ixfile_prealloc_append_trim_reopen),
        cmocka_unit_test(test_ixfile_append_through_reserved_mapping),
        cmocka_unit_test(test_ixfile_mapping_advised_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
