/*
 * A network link with a fixed one-way delay, for the benchmark (docs/performance.md) on kernels
 * without the netem queueing discipline: two TUN devices joined through this process, which holds
 * every IP packet for the delay before handing it to the other side. The benchmark moves one device
 * into a network namespace of its own, where Redis and PostgreSQL run, so the application server
 * reaches them over a routed point-to-point link, with TCP and all, a fixed delay away.
 *
 *   delayline <device-a> <device-b> <one-way delay in microseconds>
 *
 * It creates both devices, prints "ready" once they exist, and runs until killed or until its
 * standard input ends; a line on standard input sets a new delay (microseconds). Packets keep
 * their order (the delay is the same for all); a packet arriving when 16384 are held in one
 * direction is dropped, as a full queue would drop it, and counted on standard error at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 16384
#define PACKET_MAX 2048

struct held {
    int64_t due_ns;
    int length;
    unsigned char bytes[PACKET_MAX];
};

/* One direction: packets read from one device, waiting to be written to the other. */
struct direction {
    int from;
    int to;
    struct held *slots;
    unsigned head; /* next to send */
    unsigned tail; /* next free */
    unsigned long dropped;
};

static volatile sig_atomic_t stopping;

static void stop(int signal) {
    (void) signal;
    stopping = 1;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

static int open_tun(const char *name) {
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        perror("open /dev/net/tun");
        exit(2);
    }
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &request) < 0) {
        perror("TUNSETIFF");
        exit(2);
    }
    return fd;
}

/* Reads every packet waiting on the direction's source device into its queue. */
static void take(struct direction *d, int64_t delay_ns) {
    for (;;) {
        struct held *slot = &d->slots[d->tail % SLOTS];
        unsigned char discard[PACKET_MAX];
        int full = d->tail - d->head == SLOTS;
        ssize_t n = read(d->from, full ? discard : slot->bytes, PACKET_MAX);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) {
                perror("read");
            }
            return;
        }
        if (full) {
            d->dropped++;
            continue;
        }
        slot->length = (int) n;
        slot->due_ns = now_ns() + delay_ns;
        d->tail++;
    }
}

/* Writes the packets that are due; returns when the next one is due (or -1: none held). */
static int64_t give(struct direction *d) {
    int64_t now = now_ns();
    while (d->head != d->tail) {
        struct held *slot = &d->slots[d->head % SLOTS];
        if (slot->due_ns > now) {
            return slot->due_ns;
        }
        if (write(d->to, slot->bytes, slot->length) < 0 && errno != EAGAIN && errno != EINTR && errno != EIO) {
            perror("write");
        }
        d->head++;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <device-a> <device-b> <one-way delay in microseconds>\n", argv[0]);
        return 2;
    }
    int64_t delay_ns = strtoll(argv[3], NULL, 10) * 1000;
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake up on time: the delays are fractions of a millisecond */
    signal(SIGTERM, stop);
    signal(SIGINT, stop);

    struct direction ab = {.from = open_tun(argv[1]), .to = -1};
    struct direction ba = {.from = open_tun(argv[2]), .to = ab.from};
    ab.to = ba.from;
    ab.slots = calloc(SLOTS, sizeof(struct held));
    ba.slots = calloc(SLOTS, sizeof(struct held));
    if (ab.slots == NULL || ba.slots == NULL) {
        perror("calloc");
        return 2;
    }
    printf("ready\n");
    fflush(stdout);

    struct pollfd fds[3] = {{.fd = ab.from, .events = POLLIN}, {.fd = ba.from, .events = POLLIN},
                            {.fd = STDIN_FILENO, .events = POLLIN}};
    char line[64];
    size_t line_length = 0;
    while (!stopping) {
        int64_t next_ab = give(&ab);
        int64_t next_ba = give(&ba);
        int64_t next = next_ab < 0 ? next_ba : next_ba < 0 ? next_ab : (next_ab < next_ba ? next_ab : next_ba);
        struct timespec timeout;
        struct timespec *wait = NULL;
        if (next >= 0) {
            int64_t left = next - now_ns();
            if (left < 0) {
                left = 0;
            }
            timeout.tv_sec = left / 1000000000;
            timeout.tv_nsec = left % 1000000000;
            wait = &timeout;
        }
        if (ppoll(fds, 3, wait, NULL) < 0 && errno != EINTR) {
            perror("ppoll");
            return 1;
        }
        if (fds[0].revents & POLLIN) {
            take(&ab, delay_ns);
        }
        if (fds[1].revents & POLLIN) {
            take(&ba, delay_ns);
        }
        if (fds[2].revents & (POLLIN | POLLHUP)) {
            char c;
            ssize_t n = read(STDIN_FILENO, &c, 1);
            if (n <= 0) {
                break; /* the benchmark is gone */
            }
            if (c == '\n') {
                line[line_length] = '\0';
                delay_ns = strtoll(line, NULL, 10) * 1000;
                line_length = 0;
                printf("delay %lld us\n", (long long) (delay_ns / 1000));
                fflush(stdout);
            } else if (line_length < sizeof line - 1) {
                line[line_length++] = c;
            }
        }
    }
    fprintf(stderr, "delayline: dropped %lu + %lu packets (queue full)\n", ab.dropped, ba.dropped);
    return 0;
}
