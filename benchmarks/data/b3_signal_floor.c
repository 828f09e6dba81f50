/* B3's floor: what delivering SIGPROF at a rate costs this machine with nothing sampled.
 * A fixed CPU-bound loop runs with and without a per-thread CLOCK_MONOTONIC timer (as the
 * sampler arms them) whose handler only counts. Prints the loop's CPU seconds and the
 * signals taken: the ratio to the timer-less run is the least any signal-driven sampler can
 * add at that rate here (timer interrupt, signal frame with the FPU state, sigreturn; in a
 * virtual machine each timer interrupt is also an exit to the hypervisor).
 *
 *   cc -O2 b3_signal_floor.c -o floor && ./floor HZ ITERATIONS
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long ticks;

static void on_signal(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)si, (void)uc;
  ticks++;
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Touches 64 KiB of stack as it goes, as an interpreter touches its working set. */
static unsigned long work(unsigned long n) {
  unsigned long x = 1;
  static char buf[65536];
  for (unsigned long i = 0; i < n; i++) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    buf[(x >> 40) & 65535] += (char)x;
  }
  return x + (unsigned long)buf[x & 65535];
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s HZ ITERATIONS\n", argv[0]);
    return 2;
  }
  const long hz = atol(argv[1]);
  const unsigned long n = strtoul(argv[2], NULL, 10);
  if (hz > 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) return 1;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_interval.tv_nsec = its.it_value.tv_nsec = 1000000000L / hz;
    if (timer_settime(timer, 0, &its, NULL) != 0) return 1;
  }
  const double c0 = cpu_seconds();
  const unsigned long r = work(n);
  const double c1 = cpu_seconds();
  printf("%.6f %lu %lu\n", c1 - c0, ticks, r & 1);
  return 0;
}
