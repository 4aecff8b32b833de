#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* bindsock [-p|-m] NAME...: binds a unix socket (a socketpair's with -p;
   mknod(S_IFSOCK) with -m) to each NAME (@NAME: abstract) and says what
   happened; -i binds TCP on 127.0.0.1, -n route netlink; -race N flips a
   name in memory from another thread while binding it N times. */

static struct sockaddr_un raced = {.sun_family = AF_UNIX, .sun_path = "aaaa.sock"};
static volatile int stop;
static void *flip(void *x) {
	for (int i = 0; !stop; i ^= 1)
		memcpy(raced.sun_path, i ? ".mcp.json" : "aaaa.sock", 9);
	return x;
}

static int race(int n) {
	pthread_t t;
	pthread_create(&t, 0, flip, 0);
	for (; n > 0; n--) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return 2;
		bind(fd, (struct sockaddr *)&raced, offsetof(struct sockaddr_un, sun_path) + 10);
		close(fd);
		unlink("aaaa.sock");
	}
	stop = 1;
	pthread_join(t, 0);
	return 0;
}

static void one(const char *name, int how) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	if (name[0] == '@') {
		strncpy(a.sun_path + 1, name + 1, sizeof a.sun_path - 2);
		len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name + 1);
	} else {
		strncpy(a.sun_path, name, sizeof a.sun_path - 1);
		len = offsetof(struct sockaddr_un, sun_path) + strlen(a.sun_path) + 1;
	}
	if (how == 'm') {
		if (mknod(name, S_IFSOCK | 0644, 0))
			printf("%s: %s\n", name, strerror(errno));
		else
			printf("%s: made\n", name);
		return;
	}
	int fd, sv[2];
	if (how == 'p') {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
			printf("socketpair: %s\n", strerror(errno));
			return;
		}
		fd = sv[0];
	} else if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) {
		printf("socket: %s\n", strerror(errno));
		return;
	}
	if (bind(fd, (struct sockaddr *)&a, len)) {
		printf("%s: %s\n", name, strerror(errno));
		return;
	}
	struct sockaddr_un got = {0};
	socklen_t gl = sizeof got;
	getsockname(fd, (struct sockaddr *)&got, &gl);
	if (got.sun_path[0] == 0)
		got.sun_path[0] = '@';
	printf("%s: bound as %s", name, got.sun_path);
	if (how != 'p' && got.sun_path[0] != '@' && listen(fd, 1) == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		printf(connect(c, (struct sockaddr *)&got, gl) ? ", no connect\n" : ", connected\n");
	} else {
		printf("\n");
	}
}

int main(int argc, char **argv) {
	int how = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "-m")) {
			how = argv[i][1];
		} else if (!strcmp(argv[i], "-race") && i + 1 < argc) {
			return race(atoi(argv[++i]));
		} else if (!strcmp(argv[i], "-i")) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
			socklen_t l = sizeof in;
			if (bind(fd, (struct sockaddr *)&in, sizeof in) || getsockname(fd, (struct sockaddr *)&in, &l))
				printf("inet: %s\n", strerror(errno));
			else
				printf("inet: bound, port %s\n", in.sin_port ? "chosen" : "none");
		} else if (!strcmp(argv[i], "-n")) {
			int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
			struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
			socklen_t l = sizeof nl;
			if (bind(fd, (struct sockaddr *)&nl, sizeof nl) || getsockname(fd, (struct sockaddr *)&nl, &l))
				printf("netlink: %s\n", strerror(errno));
			else
				printf("netlink: bound, %s\n", nl.nl_pid == (unsigned)getpid() ? "own pid" : "other pid");
		} else {
			one(argv[i], how);
		}
	}
	return 0;
}
