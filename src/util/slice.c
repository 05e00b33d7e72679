/*
 * util/slice.c - see slice.h.  Threads: any.
 */
#include "util/slice.h"

#include "util/alloc.h"

char *
samsa_slice_dup(samsa_slice_t s)
{
    if (s.ptr == NULL) {
        return samsa_strdup("");
    }
    return samsa_strndup(s.ptr, s.len);
}
