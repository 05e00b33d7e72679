/*
 * broker/coordthread.h - stopping a coordinator's worker thread (the
 * group coordinator's expiry thread, the transaction coordinator's
 * marker thread): raise its stop flag under its lock, wake it, join it.
 * Threads: main, at close.
 */
#ifndef SAMSA_BROKER_COORDTHREAD_H
#define SAMSA_BROKER_COORDTHREAD_H

#include <pthread.h>
#include <stdbool.h>

/* If *started, set *stop under lock, signal cond, join thread and clear
 * *started; otherwise do nothing.  The thread must read *stop under lock
 * and wait on cond. */
void samsa_coordthread_stop(pthread_t thread, bool *started,
                            pthread_mutex_t *lock, pthread_cond_t *cond,
                            bool *stop);

#endif
