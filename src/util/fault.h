/*
 * util/fault.h - named fault points for crash tests.
 *
 * SAMSA_FAULT("log.append.after_write") marks a step at which a crash
 * must lose nothing acknowledged.  In the samsa-server-faults binary (built
 * with SAMSA_FAULT_POINTS; see CMakeLists.txt) the environment variable
 *   SAMSA_FAULT=<name>[:<n>]
 * makes the n-th pass (default 1) through the point named <name> kill the
 * process with SIGKILL, as kill -9 would, after one line on stderr.  In
 * every other build the macro is nothing: samsa-server carries no fault
 * code.  docs/RELIABILITY.md lists the points.
 *
 * SAMSA_TEST_HOOK("SAMSA_TEST_...", dflt) is the same idea for a test's
 * knob (hold the start, keep transactions prepared, slow the handlers): in
 * samsa-server-faults it reads that environment variable as an integer
 * (dflt when unset or not a number); in every other build it is the
 * constant dflt, so a production binary cannot be slowed or wedged from
 * its environment.
 *
 * Threads: any; the pass count is atomic.
 */
#ifndef SAMSA_UTIL_FAULT_H
#define SAMSA_UTIL_FAULT_H

#ifdef SAMSA_FAULT_POINTS
void samsa_fault_point(const char *name);
long samsa_fault_hook(const char *env_name, long dflt);
#define SAMSA_FAULT(name) samsa_fault_point(name)
#define SAMSA_TEST_HOOK(env_name, dflt) samsa_fault_hook(env_name, dflt)
#else
#define SAMSA_FAULT(name) ((void) 0)
#define SAMSA_TEST_HOOK(env_name, dflt) ((void) (env_name), (long) (dflt))
#endif

#endif /* SAMSA_UTIL_FAULT_H */
