/*
 * tests/integration/powercut_shim.c - an LD_PRELOAD library that records
 * what fsync/fdatasync made durable under one directory, so that a test can
 * put that directory back the way a power cut would leave it
 * (tests/integration/powercut.py; used by test_storage_powercut.py).
 *
 * It records, it does not hold writes back: the process writes to its files
 * as usual, and at every fsync()/fdatasync() of a file or directory under
 * $SAMSA_POWERCUT_DIR the shim copies what that call makes durable into
 * $SAMSA_POWERCUT_SHADOW:
 *
 *   f<ino>  a file's whole content (size included) as of its last sync
 *   d<ino>  a directory's entries as of its last fsync, one a line:
 *           "f <ino> <name>" or "d <ino> <name>"
 *
 * Each is written under a temporary name and renamed, so a SIGKILL at any
 * moment leaves the previous version; the copy is taken before the sync
 * returns, so before the process can act on it (answer a client).  The
 * power cut itself is the test's SIGKILL followed by powercut.rollback(),
 * which rebuilds the directory from the shadow alone: the entries of each
 * directory's last fsync (the root's baseline when it was never synced),
 * each file with its last synced content or empty.
 *
 * Files are keyed by inode, as the disk keys them: a checkpoint fdatasynced
 * as "x.tmp" and renamed "x" keeps its content.  An open() with O_CREAT or
 * O_TRUNC that leaves the file empty resets f<ino> to empty, so a new file
 * on a reused inode never inherits an unlinked one's content (a truncation
 * is thus taken as durable at once; Samsa truncates only fresh files so).
 *
 * Not modelled: writes reaching the disk without a sync (the OS's writeback;
 * the model is the worst case, where nothing is written back), torn or
 * reordered writes within one sync, sync(), syncfs(), msync(),
 * sync_file_range() and O_SYNC/O_DSYNC (Samsa uses none of them; here they
 * make nothing durable), and metadata (mode, times).
 *
 * It is built without the sanitizers (the ASan/TSan runtime stays the only
 * instrumented library; the test puts it first in LD_PRELOAD) and uses raw
 * system calls for its own I/O, so it never re-enters itself or the
 * sanitizers' interceptors.  The lazily set pointers to the real functions
 * are written racily, always with the same value (invisible to TSan: this
 * file is not instrumented).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define PC_EXPORT __attribute__((visibility("default")))

/* linux_dirent64, as getdents64(2) fills it */
struct pc_dirent {
    uint64_t        d_ino;
    int64_t         d_off;
    unsigned short  d_reclen;
    unsigned char   d_type;
    char            d_name[];
};

static atomic_uint  pc_tmp_seq;

/* Held from a copy's start to its rename, so that of two syncs of one file
 * the later copy is the one left.  A spin lock, not a pthread mutex: TSan
 * would take a mutex for synchronisation between the process's threads
 * and could hide a race of theirs. */
static atomic_flag  pc_lock = ATOMIC_FLAG_INIT;

static void
pc_lock_take(void)
{
    while (atomic_flag_test_and_set_explicit(&pc_lock, memory_order_acquire)) {
        syscall(SYS_sched_yield);
    }
}

static void
pc_lock_drop(void)
{
    atomic_flag_clear_explicit(&pc_lock, memory_order_release);
}

static int
pc_sys_open(const char *path, int flags, mode_t mode)
{
    return (int) syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

static void
pc_sys_close(int fd)
{
    syscall(SYS_close, fd);
}

static bool
pc_write_all(int fd, const char *p, size_t len)
{
    long  n;

    while (len > 0) {
        n = syscall(SYS_write, fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= (size_t) n;
    }
    return true;
}

/* fd's path when it lies under $SAMSA_POWERCUT_DIR and the shadow is set. */
static bool
pc_watched(int fd, char *path, size_t size)
{
    const char  *dir = getenv("SAMSA_POWERCUT_DIR");
    char         link[64];
    long         n;
    size_t       len;

    if (dir == NULL || getenv("SAMSA_POWERCUT_SHADOW") == NULL) {
        return false;
    }
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = syscall(SYS_readlinkat, AT_FDCWD, link, path, size - 1);
    if (n <= 0) {
        return false;
    }
    path[n] = '\0';
    len = strlen(dir);
    return strncmp(path, dir, len) == 0
           && (path[len] == '/' || path[len] == '\0');
}

/* Open a temporary file in the shadow; its name goes to tmp. */
static int
pc_shadow_tmp(char *tmp, size_t size)
{
    snprintf(tmp, size, "%s/.tmp.%ld.%u", getenv("SAMSA_POWERCUT_SHADOW"),
             (long) syscall(SYS_gettid), atomic_fetch_add(&pc_tmp_seq, 1));
    return pc_sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

/* Rename tmp to <shadow>/<kind><ino> (or drop it when !ok). */
static void
pc_shadow_commit(const char *tmp, char kind, uint64_t ino, bool ok)
{
    char  path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%c%llu", getenv("SAMSA_POWERCUT_SHADOW"),
             kind, (unsigned long long) ino);
    if (!ok || syscall(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, path) != 0) {
        syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
    }
}

/* f<ino> := the content of the file open as fd (empty when empty). */
static void
pc_record_file(int fd, uint64_t ino, bool empty)
{
    char  link[64], tmp[PATH_MAX], buf[65536];
    int   in = -1, out;
    long  n = 0;
    bool  ok = true;

    out = pc_shadow_tmp(tmp, sizeof(tmp));
    if (out < 0) {
        return;
    }
    if (!empty) {
        /* a fresh open: fd itself may be write-only, and its offset is
         * the process's */
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        in = pc_sys_open(link, O_RDONLY, 0);
        ok = in >= 0;
    }
    while (ok && in >= 0) {
        n = syscall(SYS_read, in, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        ok = pc_write_all(out, buf, (size_t) n);
    }
    if (in >= 0) {
        pc_sys_close(in);
    }
    pc_sys_close(out);
    pc_shadow_commit(tmp, 'f', ino, ok);
}

/* One directory entry as a listing line; false when it is neither a
 * regular file nor a directory (those are not modelled). */
static bool
pc_dirent_line(int dfd, const struct pc_dirent *de, char *line, size_t size)
{
    struct stat  st;
    char         kind;

    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0
        || syscall(SYS_newfstatat, dfd, de->d_name, &st,
                   AT_SYMLINK_NOFOLLOW) != 0) {
        return false;
    }
    if (S_ISREG(st.st_mode)) {
        kind = 'f';
    } else if (S_ISDIR(st.st_mode)) {
        kind = 'd';
    } else {
        return false;
    }
    snprintf(line, size, "%c %llu %s\n", kind, (unsigned long long) st.st_ino,
             de->d_name);
    return true;
}

/* d<ino> := the entries of the directory open as fd. */
static void
pc_record_dir(int fd, uint64_t ino)
{
    char                     link[64], tmp[PATH_MAX], buf[32768];
    char                     line[PATH_MAX + 32];
    const struct pc_dirent  *de;
    int                      dfd, out;
    long                     n, i;
    bool                     ok = true;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    dfd = pc_sys_open(link, O_RDONLY | O_DIRECTORY, 0);
    if (dfd < 0) {
        return;
    }
    out = pc_shadow_tmp(tmp, sizeof(tmp));
    while (out >= 0 && ok) {
        n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        for (i = 0; i < n && ok; i += de->d_reclen) {
            de = (const struct pc_dirent *) (buf + i);
            if (pc_dirent_line(dfd, de, line, sizeof(line))) {
                ok = pc_write_all(out, line, strlen(line));
            }
        }
    }
    pc_sys_close(dfd);
    if (out >= 0) {
        pc_sys_close(out);
        pc_shadow_commit(tmp, 'd', ino, ok);
    }
}

/* After a successful sync of fd (or an open that may have emptied it). */
static void
pc_after_sync(int fd, bool only_if_empty)
{
    char         path[PATH_MAX];
    struct stat  st;
    int          saved = errno;

    if (!pc_watched(fd, path, sizeof(path))) {
        errno = saved;
        return;
    }
    pc_lock_take();
    if (syscall(SYS_fstat, fd, &st) == 0) {
        if (only_if_empty) {
            if (S_ISREG(st.st_mode) && st.st_size == 0) {
                pc_record_file(fd, st.st_ino, true);
            }
        } else if (S_ISREG(st.st_mode)) {
            pc_record_file(fd, st.st_ino, false);
        } else if (S_ISDIR(st.st_mode)) {
            pc_record_dir(fd, st.st_ino);
        }
    }
    pc_lock_drop();
    errno = saved;
}

static void *
pc_next(const char *name)
{
    void  *f = dlsym(RTLD_NEXT, name);

    if (f == NULL) {
        static const char  msg[] = "powercut_shim: a libc symbol is missing\n";

        syscall(SYS_write, 2, msg, sizeof(msg) - 1);
        abort();
    }
    return f;
}

PC_EXPORT int fsync(int fd);
PC_EXPORT int fdatasync(int fd);
PC_EXPORT int open(const char *path, int flags, ...);
PC_EXPORT int open64(const char *path, int flags, ...);
PC_EXPORT int openat(int dirfd, const char *path, int flags, ...);
PC_EXPORT int openat64(int dirfd, const char *path, int flags, ...);

int
fsync(int fd)
{
    static int  (*real)(int);
    int         rc;

    if (real == NULL) {
        real = (int (*)(int)) pc_next("fsync");
    }
    rc = real(fd);
    if (rc == 0) {
        pc_after_sync(fd, false);
    }
    return rc;
}

int
fdatasync(int fd)
{
    static int  (*real)(int);
    int         rc;

    if (real == NULL) {
        real = (int (*)(int)) pc_next("fdatasync");
    }
    rc = real(fd);
    if (rc == 0) {
        pc_after_sync(fd, false);
    }
    return rc;
}

/* The mode argument, present only with O_CREAT or O_TMPFILE. */
#define PC_MODE(flags, last, mode)                                          \
    do {                                                                    \
        va_list  ap;                                                        \
        (mode) = 0;                                                         \
        if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {    \
            va_start(ap, last);                                             \
            (mode) = (mode_t) va_arg(ap, int);                              \
            va_end(ap);                                                     \
        }                                                                   \
    } while (0)

static int
pc_opened(int fd, int flags)
{
    if (fd >= 0 && (flags & (O_CREAT | O_TRUNC)) != 0) {
        pc_after_sync(fd, true);
    }
    return fd;
}

int
open(const char *path, int flags, ...)
{
    static int  (*real)(const char *, int, ...);
    mode_t      mode;

    PC_MODE(flags, flags, mode);
    if (real == NULL) {
        real = (int (*)(const char *, int, ...)) pc_next("open");
    }
    return pc_opened(real(path, flags, mode), flags);
}

int
open64(const char *path, int flags, ...)
{
    static int  (*real)(const char *, int, ...);
    mode_t      mode;

    PC_MODE(flags, flags, mode);
    if (real == NULL) {
        real = (int (*)(const char *, int, ...)) pc_next("open64");
    }
    return pc_opened(real(path, flags, mode), flags);
}

int
openat(int dirfd, const char *path, int flags, ...)
{
    static int  (*real)(int, const char *, int, ...);
    mode_t      mode;

    PC_MODE(flags, flags, mode);
    if (real == NULL) {
        real = (int (*)(int, const char *, int, ...)) pc_next("openat");
    }
    return pc_opened(real(dirfd, path, flags, mode), flags);
}

int
openat64(int dirfd, const char *path, int flags, ...)
{
    static int  (*real)(int, const char *, int, ...);
    mode_t      mode;

    PC_MODE(flags, flags, mode);
    if (real == NULL) {
        real = (int (*)(int, const char *, int, ...)) pc_next("openat64");
    }
    return pc_opened(real(dirfd, path, flags, mode), flags);
}
