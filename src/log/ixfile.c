/*
 * log/ixfile.c - mapped fixed-entry index files (see ixfile.h).
 * The mapping is never shrunk while the file is: after a trim, pages past
 * the end of the file stay mapped but are never read (readers stay below
 * the entry count), so a trim needs no remap and no exclusive lock.
 * No descriptor is held between calls: a mapping outlives the descriptor
 * it was made from, and the few operations that need one (resize, trim,
 * reserving blocks, the pwrite fallback, flush) open the file for the
 * call.  So a segment holds one descriptor (its .log), not three.
 */
#include "log/ixfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/fdcache.h"
#include "util/alloc.h"
#include "util/diag.h"

/* Bytes of disk blocks an append reserves at a time (8192 offset-index
 * entries: one fallocate per that many appends). */
#define IXFILE_ALLOC_CHUNK  (64 * 1024)

static samsa_err_t
ixfile_io_error(const samsa_ixfile_t *ix, const char *what, int err)
{
    samsa_error("log: %s %s: %s", what,
                __atomic_load_n(&ix->path, __ATOMIC_ACQUIRE), strerror(err));
    return SAMSA_ERR_KAFKA_STORAGE_ERROR;
}

/* A failed open: SAMSA_ERR__NOFILE on EMFILE/ENFILE (the descriptor
 * cache evicts and retries), else KAFKA_STORAGE_ERROR after a samsa_error
 * naming the file. */
static samsa_err_t
ixfile_open_error(const samsa_ixfile_t *ix, int err)
{
    return samsa_fdcache_errno_is_nofile(err)
               ? SAMSA_ERR__NOFILE
               : ixfile_io_error(ix, "cannot open", err);
}

/* Open the file at its current name for one operation: a descriptor, or
 * -1 with *err set (ixfile_open_error). */
static int
ixfile_fd_open(const samsa_ixfile_t *ix, samsa_err_t *err)
{
    int  fd = open(__atomic_load_n(&ix->path, __ATOMIC_ACQUIRE),
                   O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        *err = ixfile_open_error(ix, errno);
    }
    return fd;
}

/* Map bytes of the file (bytes > 0) from fd, replacing any mapping.
 * @locks ix->lock held for writing, or ix not shared yet */
static samsa_err_t
ixfile_map(samsa_ixfile_t *ix, int fd, size_t bytes)
{
    void  *m;

    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        return ixfile_io_error(ix, "cannot map", errno);
    }
    /* Lookups are binary searches and appends touch only the tail: no
     * read-around.  Without this each first touch of a page faulted in
     * the kernel's mmap read-around window of the (mostly sparse) file,
     * zero-filled; with thousands of partitions appending round-robin
     * those windows filled the page cache and evicted one another (issue
     * 22's round-robin row).  Advice only: a failure changes nothing. */
    (void) madvise(m, bytes, MADV_RANDOM);
    if (ix->map != NULL) {
        munmap(ix->map, ix->map_bytes);
    }
    ix->map = m;
    ix->map_bytes = bytes;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_ixfile_open(samsa_ixfile_t *ix, const char *path, size_t entry_size,
                  bool *created)
{
    struct stat  st;
    samsa_err_t  err;
    int          fd;

    memset(ix, 0, sizeof(*ix));
    ix->path = samsa_strdup(path);
    ix->entry_size = entry_size;
    fd = open(path, O_RDWR | O_CLOEXEC);
    *created = false;
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        *created = true;
    }
    if (fd < 0) {
        err = ixfile_open_error(ix, errno);
        goto out_free;
    }
    if (fstat(fd, &st) != 0) {
        err = ixfile_io_error(ix, "cannot stat", errno);
        goto out_close;
    }
    ix->alloc_bytes = 0;
    ix->misaligned = (size_t) st.st_size % entry_size != 0;
    ix->max_entries = (size_t) st.st_size / entry_size;
    atomic_init(&ix->n, ix->max_entries);
    if (st.st_size > 0) {
        err = ixfile_map(ix, fd, (size_t) st.st_size);
        if (err != SAMSA_ERR_NONE) {
            goto out_close;
        }
    }
    close(fd);
    ix->attached = true;
    pthread_rwlock_init(&ix->lock, NULL);
    return SAMSA_ERR_NONE;
out_close:
    close(fd);
out_free:
    samsa_free(ix->path);
    ix->path = NULL;
    return err;
}

void
samsa_ixfile_close(samsa_ixfile_t *ix)
{
    if (ix->path == NULL) {
        return;
    }
    if (ix->map != NULL) {
        munmap(ix->map, ix->map_bytes);
    }
    pthread_rwlock_destroy(&ix->lock);
    samsa_free(ix->path);
    ix->path = NULL;
}

void
samsa_ixfile_detach(samsa_ixfile_t *ix)
{
    /* the descriptor cache closes without the segment's files_lock, under
     * which a rename (samsa_ixfile_set_path) may store a new name */
    if (__atomic_load_n(&ix->path, __ATOMIC_ACQUIRE) == NULL
        || !ix->attached) {
        return;
    }
    if (ix->map != NULL) {
        munmap(ix->map, ix->map_bytes);
        ix->map = NULL;
        ix->map_bytes = 0;
    }
    ix->attached = false;
}

samsa_err_t
samsa_ixfile_attach(samsa_ixfile_t *ix)
{
    struct stat  st;
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          fd;

    if (ix->attached) {
        return SAMSA_ERR_NONE;
    }
    /* alloc_bytes stands: nothing shrinks the file while it is detached
     * (every shrink goes through this file's functions, attached) */
    fd = ixfile_fd_open(ix, &err);
    if (fd < 0) {
        return err;
    }
    if (fstat(fd, &st) != 0) {
        err = ixfile_io_error(ix, "cannot stat", errno);
    } else if (st.st_size > 0) {
        /* the mapping is only read below the entry count */
        err = ixfile_map(ix, fd, (size_t) st.st_size);
    }
    close(fd);
    ix->attached = err == SAMSA_ERR_NONE;
    return err;
}

char *
samsa_ixfile_set_path(samsa_ixfile_t *ix, const char *path)
{
    char  *old = ix->path;

    /* readers formatting an error may hold the old name: the caller
     * frees it later */
    __atomic_store_n(&ix->path, samsa_strdup(path), __ATOMIC_RELEASE);
    return old;
}

samsa_err_t
samsa_ixfile_resize(samsa_ixfile_t *ix, size_t max_bytes)
{
    size_t       n = samsa_ixfile_count(ix);
    size_t       entries = max_bytes / ix->entry_size;
    size_t       bytes;
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          fd;

    if (entries < n) {
        entries = n;
    }
    bytes = entries * ix->entry_size;
    fd = ixfile_fd_open(ix, &err);
    if (fd < 0) {
        return err;
    }
    if (ftruncate(fd, (off_t) bytes) != 0) {
        err = ixfile_io_error(ix, "cannot resize", errno);
        close(fd);
        return err;
    }
    if (bytes > ix->map_bytes) {
        pthread_rwlock_wrlock(&ix->lock);
        err = ixfile_map(ix, fd, bytes);
        pthread_rwlock_unlock(&ix->lock);
    }
    close(fd);
    if (err == SAMSA_ERR_NONE) {
        ix->max_entries = entries;
        ix->misaligned = false;
    }
    if (ix->alloc_bytes > bytes) {
        ix->alloc_bytes = bytes;
    }
    return err;
}

samsa_err_t
samsa_ixfile_trim(samsa_ixfile_t *ix)
{
    size_t       n = samsa_ixfile_count(ix);
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          fd = ixfile_fd_open(ix, &err);

    if (fd < 0) {
        return err;
    }
    if (ftruncate(fd, (off_t) (n * ix->entry_size)) != 0) {
        err = ixfile_io_error(ix, "cannot trim", errno);
        close(fd);
        return err;
    }
    close(fd);
    ix->max_entries = n;
    if (ix->alloc_bytes > n * ix->entry_size) {
        ix->alloc_bytes = n * ix->entry_size;
    }
    return SAMSA_ERR_NONE;
}

/* Give the sparse file disk blocks up to past end (IXFILE_ALLOC_CHUNK at
 * a time, within the file), through fd: true when bytes below end may be
 * stored into the mapping. */
static bool
ixfile_reserve(samsa_ixfile_t *ix, int fd, size_t end)
{
    size_t  file_bytes = ix->max_entries * ix->entry_size, want;

    want = (end + IXFILE_ALLOC_CHUNK - 1) / IXFILE_ALLOC_CHUNK
           * IXFILE_ALLOC_CHUNK;
    if (want > file_bytes) {
        want = file_bytes;
    }
    if (want > ix->map_bytes || end > want
        || fallocate(fd, 0, (off_t) ix->alloc_bytes,
                     (off_t) (want - ix->alloc_bytes)) != 0) {
        return false;
    }
    ix->alloc_bytes = want;
    return true;
}

bool
samsa_ixfile_append(samsa_ixfile_t *ix, const void *entry)
{
    size_t       n = atomic_load_explicit(&ix->n, memory_order_relaxed);
    off_t        pos = (off_t) (n * ix->entry_size);
    ssize_t      w;
    samsa_err_t  err;
    int          fd;

    if (n >= ix->max_entries) {
        return false;
    }
    /* The preallocated file is sparse, and a store into a hole of a full
     * device raises SIGBUS, where a write returns ENOSPC: so the entry
     * goes into the mapping (no syscall) only where fallocate gave the
     * file its blocks, and through pwrite where it could not (a file
     * system without fallocate, or a full one).  The shared mapping sees
     * the write either way.  A lost entry costs lookups a longer scan,
     * nothing else (the index is sparse), so a failed write only skips
     * it. */
    if ((size_t) pos + ix->entry_size <= ix->alloc_bytes) {
        memcpy(ix->map + pos, entry, ix->entry_size);   /* no syscall */
    } else {
        /* once per IXFILE_ALLOC_CHUNK where fallocate works, every entry
         * where it does not: one descriptor for the reservation and, if
         * that fails, the write */
        fd = ixfile_fd_open(ix, &err);
        if (fd < 0) {
            return false;
        }
        if (ixfile_reserve(ix, fd, (size_t) pos + ix->entry_size)) {
            memcpy(ix->map + pos, entry, ix->entry_size);
            w = (ssize_t) ix->entry_size;
        } else {
            do {
                w = pwrite(fd, entry, ix->entry_size, pos);
            } while (w < 0 && errno == EINTR);
        }
        close(fd);
        if (w != (ssize_t) ix->entry_size) {
            return false;
        }
    }
    /* pairs with the acquire in samsa_ixfile_count() */
    atomic_store_explicit(&ix->n, n + 1, memory_order_release);
    return true;
}

void
samsa_ixfile_truncate(samsa_ixfile_t *ix, size_t n)
{
    pthread_rwlock_wrlock(&ix->lock);
    if (n < atomic_load_explicit(&ix->n, memory_order_relaxed)) {
        atomic_store_explicit(&ix->n, n, memory_order_release);
    }
    pthread_rwlock_unlock(&ix->lock);
}

bool
samsa_ixfile_full(const samsa_ixfile_t *ix)
{
    return atomic_load_explicit(&ix->n, memory_order_relaxed)
           >= ix->max_entries;
}

size_t
samsa_ixfile_count(samsa_ixfile_t *ix)
{
    return atomic_load_explicit(&ix->n, memory_order_acquire);
}

const uint8_t *
samsa_ixfile_read_begin(samsa_ixfile_t *ix, size_t *n)
{
    pthread_rwlock_rdlock(&ix->lock);
    *n = samsa_ixfile_count(ix);
    return ix->map;
}

void
samsa_ixfile_read_end(samsa_ixfile_t *ix)
{
    pthread_rwlock_unlock(&ix->lock);
}

samsa_err_t
samsa_ixfile_flush(samsa_ixfile_t *ix)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          fd = ixfile_fd_open(ix, &err);

    if (fd < 0) {
        return err;
    }
    /* the descriptor is new, but fdatasync writes back the inode's dirty
     * pages (the mapping's stores included), whichever descriptor asks */
    if (fdatasync(fd) != 0) {
        err = ixfile_io_error(ix, "cannot fdatasync", errno);
    }
    close(fd);
    return err;
}
