/* B3's floors: what delivering SIGPROF at a rate costs this machine with nothing sampled.
 * A fixed CPU-bound loop runs with and without a per-thread CLOCK_MONOTONIC timer (as the
 * sampler arms them) whose handler only counts. Prints the process's CPU seconds over the loop
 * and the signals taken: the ratio to the timer-less run is the least any signal-driven sampler
 * can add at that rate here (timer interrupt, signal frame with the FPU state, sigreturn; in a
 * virtual machine each timer interrupt is also an exit to the hypervisor).
 * With a third argument `thread`, no signal: another thread wakes at the rate as the thread
 * method's reader does (clock_nanosleep to an absolute time, 1 ns of timer slack, the loop
 * thread's CPU clock read at each wake-up) and does nothing else; the count is its wake-ups,
 * the CPU is the process's (the loop's and the waker's): the least a reader thread costs.
 *
 *   cc -O2 -pthread b3_signal_floor.c -o floor && ./floor HZ ITERATIONS [thread]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long ticks;
static volatile int done;
static long waker_hz;
static pid_t loop_tid;

static void on_signal(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)si, (void)uc;
  ticks++;
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned long long clock_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void* waker(void* arg) {
  (void)arg;
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const clockid_t loop_clock = (clockid_t)((~(unsigned)loop_tid << 3) | 6);
  const unsigned long long period = 1000000000ull / (unsigned long long)waker_hz;
  unsigned long long next = clock_ns(CLOCK_MONOTONIC);
  while (!done) {
    clock_ns(loop_clock);
    next += period;
    struct timespec until = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    ticks++;
  }
  return NULL;
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
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "thread") == 0)) {
    fprintf(stderr, "usage: %s HZ ITERATIONS [thread]\n", argv[0]);
    return 2;
  }
  const long hz = atol(argv[1]);
  const unsigned long n = strtoul(argv[2], NULL, 10);
  pthread_t thread;
  if (hz > 0 && argc == 4) {
    waker_hz = hz;
    loop_tid = (pid_t)syscall(SYS_gettid);
    if (pthread_create(&thread, NULL, waker, NULL) != 0) return 1;
  } else if (hz > 0) {
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
  if (hz > 0 && argc == 4) {
    done = 1;
    pthread_join(thread, NULL);
  }
  printf("%.6f %lu %lu\n", c1 - c0, ticks, r & 1);
  return 0;
}
