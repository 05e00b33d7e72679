/*
 * broker/coordthread.c - stopping a coordinator's worker thread.
 */
#include "broker/coordthread.h"

void
samsa_coordthread_stop(pthread_t thread, bool *started,
                       pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop)
{
    if (!*started) {
        return;
    }
    pthread_mutex_lock(lock);
    *stop = true;
    pthread_cond_signal(cond);
    pthread_mutex_unlock(lock);
    pthread_join(thread, NULL);
    *started = false;
}
