#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* nodump [-d] [READONLY]: with -d makes itself non-dumpable, as ssh-agent
   and gpg-agent do; then creates a file, a directory, .vscode/tasks.json,
   a file through its working directory, renames one, and with READONLY
   tries a file there. Each step prints "NAME: ok" or its error. */

static void say(const char *what, int res) {
	printf("%s: %s\n", what, res < 0 ? strerror(errno) : "ok");
}

static int create(const char *path, const char *text) {
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
	int i = 1;
	if (i < argc && !strcmp(argv[i], "-d")) {
		prctl(PR_SET_DUMPABLE, 0);
		i++;
	}
	printf("dumpable: %d\n", prctl(PR_GET_DUMPABLE));
	say("file", create("file", "ok\n"));
	say("dir", mkdir("dir", 0755));
	say("vscode", mkdir(".vscode", 0755));
	say("tasks", create(".vscode/tasks.json", "planted\n"));
	say("cwd", chdir("dir") < 0 ? -1 : create("../viacwd", "ok\n"));
	say("rename", chdir("..") < 0 ? -1 : rename("file", "renamed"));
	if (i < argc) {
		char p[4096];
		snprintf(p, sizeof p, "%s/x", argv[i]);
		say("readonly", create(p, "x\n"));
	}
	fflush(stdout);
	return 0;
}
