/*
 * libFuzzer target: log recovery over arbitrary segment files.  The input
 * is written as a partition directory's only segment: the first two bytes
 * (big-endian, folded into range) give the length of a .index file taken
 * from what follows, the rest is the .log.  Recovery after an unclean stop
 * must never crash, must leave a .log of exactly the whole valid batches
 * with sane indexes, and a second recovery must find nothing to cut.
 */
#include "fuzz.h"

#include <stdio.h>
#include <unistd.h>

#include "log/recover.h"
#include "util/diag.h"

static char  fuzz_dir[64];

static void
fuzz_recovery_write(const char *name, const uint8_t *p, size_t n)
{
    char   path[128];
    FILE  *fp;

    snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
    fp = fopen(path, "wb");
    fuzz_require(fp != NULL);
    fuzz_require(n == 0 || fwrite(p, 1, n, fp) == n);
    fclose(fp);
}

static void
fuzz_recovery_run(int64_t *leo, int64_t *cut)
{
    samsa_recover_args_t    args = {
        .dir = fuzz_dir,
        .recovery_point = -1,
        .log_start_offset = -1,
        .clean = false,
        .index_max_bytes = 4096,
        .index_interval_bytes = 64,
    };
    samsa_recover_result_t  res;
    samsa_seg_t            *seg;
    samsa_seg_end_t         end;

    fuzz_require(samsa_recover_partition(&args, &res) == SAMSA_ERR_NONE);
    fuzz_require(res.nsegs == 1);
    seg = res.segs[0];
    end = samsa_seg_end(seg);
    fuzz_require(end.next_offset == res.log_end_offset);
    fuzz_require(samsa_seg_indexes_sane(seg, end.next_offset, end.size,
                                        true));
    *leo = res.log_end_offset;
    *cut = res.truncated_bytes;
    samsa_recover_result_fini(&res);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t   idx_len;
    int64_t  leo1, leo2, cut1, cut2;

    if (fuzz_dir[0] == '\0') {       /* tmpfs first: fsync is free there */
        snprintf(fuzz_dir, sizeof(fuzz_dir), "/dev/shm/samsa-fuzz-XXXXXX");
        if (mkdtemp(fuzz_dir) == NULL) {
            snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/samsa-fuzz-XXXXXX");
            fuzz_require(mkdtemp(fuzz_dir) != NULL);
        }
        samsa_diag_set_level(SAMSA_DIAG_ERROR);
    }
    if (size < 2) {
        return 0;
    }
    idx_len = samsa_load_be16(data) % (size - 1);
    fuzz_recovery_write("00000000000000000000.index", data + 2, idx_len);
    fuzz_recovery_write("00000000000000000000.log", data + 2 + idx_len,
                        size - 2 - idx_len);
    fuzz_recovery_run(&leo1, &cut1);
    fuzz_recovery_run(&leo2, &cut2);
    fuzz_require(leo1 == leo2 && cut2 == 0);
    samsa_seg_unlink_files(fuzz_dir, 0, "");
    return 0;
}
