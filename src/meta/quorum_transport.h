/*
 * meta/quorum_transport.h - libraft's connections over sockets that samsa
 * accepts itself: a struct raft_uv_transport (raft/uv.h) for the metadata
 * quorum (meta/quorum.h).
 *
 * Outbound: connect() resolves "host:port" (IPv4/IPv6 literals directly,
 * names with uv_getaddrinfo), dials, writes the handshake below and hands
 * the stream to libraft.  Inbound: the transport binds no port; a socket
 * accepted by samsa's CONTROLLER listener (or a test's listener) whose
 * first 8 bytes are SAMSA_QUORUM_TRANSPORT_MAGIC is given to
 * samsa_quorum_transport_adopt(), which reads and checks the handshake and
 * then calls libraft's accept callback.  A handshake with another cluster
 * id, another version or bad lengths, from a raft id that is not a member
 * (set_member_check), or none within 5 s, is refused (the socket is
 * closed and counted, samsa_quorum_transport_refused()).
 *
 * Handshake, little-endian, 32 bytes then two strings:
 *   0  magic[8]      0xd3 'S' 'A' 'M' 'S' 'A' 'Q' '1'  (first byte >= 0x80:
 *                    as a Kafka request size it is negative, so no Kafka
 *                    client can send it)
 *   8  u32 version   1
 *   12 u32 flags     0
 *   16 u64 raft id   of the sender
 *   24 u16 cluster id length (1..255)
 *   26 u16 address length (1..255)
 *   28 u32 zero
 *   32 cluster id bytes, then the sender's raft address ("host:port")
 * Each socket carries one direction, as libraft wants: the dialler writes,
 * the acceptor reads.
 *
 * Reverse dial, for members that nobody can dial (a broker-only observer
 * has no CONTROLLER listener): such a node calls reverse_dial for every
 * voter; the transport dials it with the reverse magic ("\xd3SAMSAQR")
 * and gives the socket to its own libraft as an inbound stream from that
 * voter (the voter writes, we read), dialling again whenever the voter
 * closes it.  The voter's transport parks such a socket by the sender's
 * id; when libraft connect()s to that id (or to any address whose port is
 * 0, the observer's "unreachable" address) it gets the parked socket, or
 * RAFT_NOCONNECTION after waiting up to 1 s, and libraft retries.  The
 * observer's replies go the ordinary way, dialled to the voter.
 *
 * Threads: everything here runs on the quorum loop thread (the loop given
 * to init), including adopt.
 * Ownership: the caller owns the struct raft_uv_transport (it gives it to
 * raft_uv_init); init allocates its impl, fini frees it after libraft has
 * closed the transport.  Streams handed to libraft are raft_malloc'd and
 * libraft's from then on.
 */
#ifndef SAMSA_META_QUORUM_TRANSPORT_H
#define SAMSA_META_QUORUM_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include <samsa/errors.h>

#define SAMSA_QUORUM_TRANSPORT_MAGIC       "\xd3SAMSAQ1"
#define SAMSA_QUORUM_TRANSPORT_MAGIC_REVERSE "\xd3SAMSAQR"
#define SAMSA_QUORUM_TRANSPORT_MAGIC_LEN   8
#define SAMSA_QUORUM_TRANSPORT_VERSION     1
#define SAMSA_QUORUM_TRANSPORT_STR_MAX     255

/* Fill t's methods and impl for loop; cluster_id (1..255 bytes) goes into
 * every handshake and must match on inbound ones.  Errors:
 * SAMSA_ERR__INVALID_ARG (cluster id). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_transport_init(
    struct raft_uv_transport *t, uv_loop_t *loop, const char *cluster_id,
    char *errstr, size_t errstr_size);

/* Take an accepted, connected socket whose first bytes are (or will be)
 * the magic; the transport owns fd from now on (closes it on any error,
 * also when the transport is closing or not yet listening). */
void samsa_quorum_transport_adopt(struct raft_uv_transport *t, int fd);

/* (A non-voter) keep a reverse socket open to the voter id at address
 * ("ip:port"; host names are not resolved here yet).  After listen.
 * Errors: SAMSA_ERR__INVALID_ARG (address). */
SAMSA_MUST_CHECK samsa_err_t samsa_quorum_transport_reverse_dial(
    struct raft_uv_transport *t, raft_id id, const char *address,
    char *errstr, size_t errstr_size);

/* Whether raft id may talk to us (is in the configuration); asked for
 * every inbound handshake, on the loop thread.  Refused ones are closed
 * and counted. */
typedef bool samsa_quorum_transport_member_fn(void *ctx, raft_id id);
void samsa_quorum_transport_set_member_check(
    struct raft_uv_transport *t, samsa_quorum_transport_member_fn *fn,
    void *ctx);

/* Delay before a failed reverse dial is tried again (default 200 ms). */
void samsa_quorum_transport_set_retry(struct raft_uv_transport *t,
                                      unsigned ms);

/* Inbound handshakes refused so far (wrong magic, version, cluster id). */
uint64_t samsa_quorum_transport_refused(const struct raft_uv_transport *t);

/* Whether the len bytes at buf (len <= 8) are a prefix of one of the two
 * magics: what a listener peeking at a new connection asks. */
bool samsa_quorum_transport_is_magic(const uint8_t *buf, size_t len);

/* Free the impl; only after libraft's close of the transport completed
 * (raft_close's callback) or if raft_uv_init never took t. */
void samsa_quorum_transport_fini(struct raft_uv_transport *t);

#endif /* SAMSA_META_QUORUM_TRANSPORT_H */
