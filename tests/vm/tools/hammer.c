/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-hammer: drives a scx_loehle control socket harder than its CLI
 * can, for the soak (scripts/soak.d/guest.sh) and the socket-abuse VM cases
 * (tests/vm/cases/observability.sh). A process spawn per request takes a
 * few hundred ms under TCG; this keeps connections open instead.
 *
 *   loehle-hammer SOCKET switch SECONDS INTERVAL_MS [COUNT]
 *       one connection; a `set` every INTERVAL_MS (0: each as soon as the
 *       previous one is answered), cycling policy, SCHED_IDLE mode and
 *       scope, SMT mode, slice (up to the longest, 1 s), claim retries and
 *       sample rate; with COUNT > 0, stops
 *       after COUNT sets and fails if SECONDS ran out first (0: no limit)
 *   loehle-hammer SOCKET requests SECONDS [PAUSE_MS]
 *       one connection; stats, get and a malformed line in turn, each sent
 *       PAUSE_MS (default 0) after the previous reply came
 *   loehle-hammer SOCKET clients SECONDS N REQUESTS
 *       N connections at once, each sending REQUESTS `get`s one at a time
 *       (a connection the server turns away counts as refused)
 *   loehle-hammer SOCKET connect-drop SECONDS N
 *       N connections, each sending half a request and closing
 *   loehle-hammer SOCKET no-read SECONDS N
 *       N `stats` requests sent without reading a reply, then SECONDS of
 *       silence with the connection open
 *
 * SECONDS bounds the run (switch and requests run that long). Prints one
 * line, "sent S ok K errors E refused R unanswered U", where errors are
 * error replies to well-formed requests (and accepted malformed lines),
 * refused are connections turned away with a reason, and unanswered are
 * requests without a reply when the connection ended. Exit 0 when errors
 * and unanswered are 0, no connection of switch or requests was refused or
 * ended early, no-read's connection was dropped, and (no-read,
 * connect-drop) a fresh connection's `get` is answered afterwards; 1
 * otherwise, 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define REPLY_TIMEOUT_MS 10000

struct conn {
	int fd;
	char *buf;	/* bytes of the reply line read so far */
	size_t len, cap;
	long owed;	/* requests sent, not yet answered */
	long left;	/* requests still to send */
	int refused;
};

static long sent, ok, errors, refused, unanswered;
static const char *sock_path;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int dial(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_line(struct conn *c, const char *line)
{
	size_t n = strlen(line), done = 0;

	while (done < n) {
		ssize_t w = write(c->fd, line + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += w;
	}
	sent++;
	c->owed++;
	return 0;
}

/*
 * Reads what is there; for each complete reply line calls judge(). Returns
 * 0, or -1 once the server closed the connection.
 */
static int read_replies(struct conn *c, void (*judge)(struct conn *, const char *))
{
	char chunk[65536];
	ssize_t r = read(c->fd, chunk, sizeof(chunk));
	char *nl;

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return -1;
	if (c->len + r + 1 > c->cap) {
		c->cap = (c->len + r + 1) * 2;
		c->buf = realloc(c->buf, c->cap);
		if (!c->buf) {
			perror("loehle-hammer: realloc");
			exit(1);
		}
	}
	memcpy(c->buf + c->len, chunk, r);
	c->len += r;
	c->buf[c->len] = 0;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t line_len = nl - c->buf + 1;

		*nl = 0;
		c->owed--;
		judge(c, c->buf);
		memmove(c->buf, c->buf + line_len, c->len - line_len);
		c->len -= line_len;
	}
	return 0;
}

/* Waits for one reply at most REPLY_TIMEOUT_MS. */
static int await_reply(struct conn *c, void (*judge)(struct conn *, const char *))
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	while (c->owed > 0) {
		if (poll(&p, 1, REPLY_TIMEOUT_MS) <= 0)
			return -1;
		if (read_replies(c, judge) < 0)
			return -1;
	}
	return 0;
}

static int reply_ok(const char *line)
{
	return strstr(line, "\"ok\":true") != NULL;
}

static void judge_well_formed(struct conn *c, const char *line)
{
	(void)c;
	if (reply_ok(line)) {
		ok++;
	} else if (strstr(line, "too many") || strstr(line, "closed")) {
		refused++;
		c->refused = 1;
	} else {
		errors++;
		fprintf(stderr, "loehle-hammer: error reply: %.200s\n", line);
	}
}

static void judge_malformed(struct conn *c, const char *line)
{
	(void)c;
	if (strstr(line, "\"ok\":false")) {
		ok++;
	} else {
		errors++;
		fprintf(stderr, "loehle-hammer: malformed line answered: %.200s\n", line);
	}
}

static void finish(struct conn *c)
{
	if (c->fd >= 0) {
		if (!c->refused)
			unanswered += c->owed > 0 ? c->owed : 0;
		close(c->fd);
	}
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static int open_conn(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = dial();
	if (c->fd < 0) {
		fprintf(stderr, "loehle-hammer: cannot connect to %s: %s\n",
			sock_path, strerror(errno));
		return -1;
	}
	return 0;
}

static const char *const settings[] = {
	"{\"cmd\":\"set\",\"args\":{\"policy\":\"first\",\"sched_idle\":\"mainline\",\"smt\":\"off\",\"sched_idle_scope\":\"task\"}}\n",
	"{\"cmd\":\"set\",\"args\":{\"policy\":\"recency\",\"sched_idle\":\"idle-first\",\"slice_us\":1000}}\n",
	"{\"cmd\":\"set\",\"args\":{\"policy\":\"builtin\",\"sched_idle\":\"ignore\",\"sample_every\":1,\"sched_idle_scope\":\"cgroup\"}}\n",
	"{\"cmd\":\"set\",\"args\":{\"policy\":\"reservoir\",\"sched_idle\":\"wakee-aware\",\"smt\":\"idle-core\",\"sched_idle_scope\":\"hierarchy\"}}\n",
	"{\"cmd\":\"set\",\"args\":{\"slice_us\":20000,\"sample_every\":0,\"claim_retries\":0}}\n",
	/* The longest slice --slice-us accepts: idle work's bound must hold. */
	"{\"cmd\":\"set\",\"args\":{\"slice_us\":1000000,\"sched_idle\":\"mainline\"}}\n",
	"{\"cmd\":\"set\",\"args\":{\"slice_us\":5000,\"sample_every\":64,\"claim_retries\":1}}\n",
};

typedef void (*judge_fn)(struct conn *, const char *);

/*
 * One connection: lines[0], lines[1], ... in turn, each sent once the
 * previous one's reply came and judged by judges[i], pause_ms apart, for
 * `seconds`, or until `limit` lines were sent (0: no limit; reaching it is
 * then the goal, and running out of time first a failure).
 */
static int run_in_turn(double seconds, const char *const *lines,
		       const judge_fn *judges, int n, long pause_ms, long limit)
{
	struct timespec pause = { pause_ms / 1000, (pause_ms % 1000) * 1000000L };
	double end = now_s() + seconds;
	struct conn c;
	long i = 0;

	if (open_conn(&c) < 0)
		return -1;
	while (limit == 0 || i < limit) {
		int k;

		if (now_s() >= end) {
			if (limit == 0)
				break;
			fprintf(stderr, "loehle-hammer: time ran out after %ld of %ld requests\n",
				i, limit);
			finish(&c);
			return -1;
		}
		k = i++ % n;

		if (send_line(&c, lines[k]) < 0 || await_reply(&c, judges[k]) < 0) {
			fprintf(stderr, "loehle-hammer: the connection ended after %ld requests\n", i);
			finish(&c);
			return -1;
		}
		if (pause_ms > 0)
			nanosleep(&pause, NULL);
	}
	finish(&c);
	return 0;
}

static int run_switch(double seconds, long interval_ms, long count)
{
	enum { n = sizeof(settings) / sizeof(settings[0]) };
	judge_fn judges[n];

	for (int i = 0; i < n; i++)
		judges[i] = judge_well_formed;
	return run_in_turn(seconds, settings, judges, n, interval_ms, count);
}

static int run_requests(double seconds, long pause_ms)
{
	static const char *const lines[] = {
		"{\"cmd\":\"stats\"}\n", "{\"cmd\":\"get\"}\n", "{\"cmd\":\n",
	};
	static const judge_fn judges[] = {
		judge_well_formed, judge_well_formed, judge_malformed,
	};

	return run_in_turn(seconds, lines, judges, 3, pause_ms, 0);
}

static int run_clients(double seconds, int n, long requests)
{
	static struct conn conns[MAX_CLIENTS];
	struct pollfd polls[MAX_CLIENTS];
	double end = now_s() + seconds;
	int i, open = 0;

	for (i = 0; i < n; i++) {
		if (open_conn(&conns[i]) < 0)
			return -1;
		/* A turned-away client must not block; it reads its refusal. */
		fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
		conns[i].left = requests;
		open++;
	}
	while (open > 0 && now_s() < end) {
		for (i = 0; i < n; i++) {
			struct conn *c = &conns[i];

			if (c->fd >= 0 && c->owed == 0 && c->left > 0 && !c->refused) {
				if (send_line(c, "{\"cmd\":\"get\"}\n") < 0) {
					/* Closed on us: its refusal line may wait unread. */
					read_replies(c, judge_well_formed);
					if (!c->refused)
						unanswered++;
					c->refused = 1;
				} else {
					c->left--;
				}
			}
			if (c->fd >= 0 && ((c->left == 0 && c->owed == 0) || c->refused)) {
				finish(c);
				open--;
			}
			polls[i].fd = c->fd;	/* -1 once finished: poll skips it */
			polls[i].events = POLLIN;
			polls[i].revents = 0;
		}
		if (open == 0)
			break;
		if (poll(polls, n, REPLY_TIMEOUT_MS) <= 0) {
			fprintf(stderr, "loehle-hammer: no reply for %d ms\n", REPLY_TIMEOUT_MS);
			break;
		}
		for (i = 0; i < n; i++) {
			if (conns[i].fd < 0 || !(polls[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read_replies(&conns[i], judge_well_formed) < 0) {
				finish(&conns[i]);
				open--;
			}
		}
	}
	for (i = 0; i < n; i++)
		finish(&conns[i]);
	return 0;
}

/* After abuse: a fresh connection still gets its `get` answered. */
static int still_answers(void)
{
	struct conn c;

	long ok_before = ok;

	if (open_conn(&c) < 0)
		return -1;
	if (send_line(&c, "{\"cmd\":\"get\"}\n") < 0 ||
	    await_reply(&c, judge_well_formed) < 0 || ok != ok_before + 1) {
		finish(&c);
		fprintf(stderr, "loehle-hammer: no answer to a get after the abuse\n");
		return -1;
	}
	finish(&c);
	return 0;
}

/*
 * Does the server close a connection whose replies nobody reads? Reads
 * what is left until EOF or a reset, at most 10 s.
 */
static int dropped(struct conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	char chunk[65536];
	double end = now_s() + 10;

	while (now_s() < end) {
		ssize_t r;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		r = read(c->fd, chunk, sizeof(chunk));
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return 1;
	}
	return 0;
}

static int run_connect_drop(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		int fd = dial();

		if (fd < 0) {
			fprintf(stderr, "loehle-hammer: connect %d failed: %s\n", i, strerror(errno));
			return -1;
		}
		if (write(fd, "{\"cmd\":\"ge", 10) == 10)
			sent++;
		close(fd);
	}
	return still_answers();
}

static int run_no_read(double seconds, int n)
{
	struct conn c;
	struct timespec pause = { (time_t)seconds, 0 };
	int i;

	if (open_conn(&c) < 0)
		return -1;
	/* Never block on a full socket: a server that stops reading is fine. */
	fcntl(c.fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < n; i++)
		if (send_line(&c, "{\"cmd\":\"stats\"}\n") < 0)
			break;	/* the server dropped us: what it should do */
	nanosleep(&pause, NULL);
	c.refused = 1;	/* unread replies are the point here */
	if (!dropped(&c)) {
		fprintf(stderr, "loehle-hammer: the server kept a client that never reads\n");
		finish(&c);
		return -1;
	}
	finish(&c);
	return still_answers();
}

static long number(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end != 0 || v < lo || v > hi) {
		fprintf(stderr, "loehle-hammer: '%s' is not a number in %ld..%ld\n", s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *mode;
	double seconds;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: loehle-hammer SOCKET switch|requests|clients|connect-drop|no-read SECONDS [ARGS]\n");
		return 2;
	}
	/* A server that drops us makes writes fail; that is not a crash. */
	signal(SIGPIPE, SIG_IGN);
	sock_path = argv[1];
	mode = argv[2];
	seconds = number(argv[3], 1, 86400);
	if (!strcmp(mode, "switch") && (argc == 5 || argc == 6))
		rc = run_switch(seconds, number(argv[4], 0, 60000),
				argc == 6 ? number(argv[5], 0, 100000000) : 0);
	else if (!strcmp(mode, "requests") && (argc == 4 || argc == 5))
		rc = run_requests(seconds, argc == 5 ? number(argv[4], 0, 60000) : 0);
	else if (!strcmp(mode, "clients") && argc == 6)
		rc = run_clients(seconds, number(argv[4], 1, MAX_CLIENTS),
				 number(argv[5], 1, 100000000));
	else if (!strcmp(mode, "connect-drop") && argc == 5)
		rc = run_connect_drop(number(argv[4], 1, 1000000));
	else if (!strcmp(mode, "no-read") && argc == 5)
		rc = run_no_read(seconds, number(argv[4], 1, 1000000));
	else {
		fprintf(stderr, "loehle-hammer: bad arguments for mode '%s'\n", mode);
		return 2;
	}
	printf("sent %ld ok %ld errors %ld refused %ld unanswered %ld\n",
	       sent, ok, errors, refused, unanswered);
	/* Only the clients mode expects turned-away connections. */
	if (strcmp(mode, "clients") != 0 && strcmp(mode, "no-read") != 0 && refused > 0)
		rc = -1;
	return rc == 0 && errors == 0 && unanswered == 0 ? 0 : 1;
}
