/*
 * drover-monitor: the parent of one Drover process task, and the recorder of how it ended.
 *
 * Usage: drover-monitor EXIT_FILE PROGRAM [ARG...]
 *
 * Forks; the child starts a session of its own (the agent signals the task's process group), restores
 * the signal dispositions and mask a new program expects, and execs PROGRAM (an absolute path: no PATH
 * search, and no environment of the task is ever read here). The monitor waits for it and writes EXIT_FILE
 * atomically (EXIT_FILE.tmp, fsync, rename, fsync of the directory), exactly one line:
 *
 *   exit N             the task called exit(N)
 *   signal N           a signal numbered N ended it
 *   signal N core      ... and it dumped core
 *
 * The monitor ignores SIGINT, SIGTERM and SIGHUP: they are meant for the task, never for what records its end.
 * Exit status: 0 when the file was written, 1 when it was not, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *what, const char *detail) {
    dprintf(2, "drover-monitor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

static int write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

static int record(const char *file, int status) {
    char line[64], tmp[4096], dir[4096];
    int len;
    if (WIFSIGNALED(status)) {
        len = snprintf(line, sizeof line, "signal %d%s\n", WTERMSIG(status), WCOREDUMP(status) ? " core" : "");
    } else {
        len = snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(status));
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp", file) >= (int) sizeof tmp) return -1;
    /* O_NOFOLLOW and O_EXCL after an unlink: a link planted at the tmp name is never written through. */
    if (unlink(tmp) < 0 && errno != ENOENT) return -1;
    int fd;
    do fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    if (write_all(fd, line, (size_t) len) < 0 || fsync(fd) < 0) {
        close(fd);
        return -1;
    }
    if (close(fd) < 0 || rename(tmp, file) < 0) return -1;
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* best effort: the rename is what makes the file whole */
        close(dfd);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3 || argv[2][0] != '/') {
        say("usage: drover-monitor EXIT_FILE /ABSOLUTE/PROGRAM [ARG...]", NULL);
        return 2;
    }
    struct sigaction ignore = {.sa_handler = SIG_IGN}, dfl = {.sa_handler = SIG_DFL};
    sigset_t none;
    sigemptyset(&none);
    sigaction(SIGCHLD, &dfl, NULL); /* an ignored SIGCHLD would reap the task before waitpid sees it */
    sigaction(SIGINT, &ignore, NULL);
    sigaction(SIGTERM, &ignore, NULL);
    sigaction(SIGHUP, &ignore, NULL);
    sigaction(SIGPIPE, &ignore, NULL);
    sigprocmask(SIG_SETMASK, &none, NULL);

    pid_t child = fork();
    if (child < 0) {
        say("cannot fork", strerror(errno));
        return 1;
    }
    if (child == 0) {
        /* An ignored disposition survives exec: give the task the defaults a new program expects. */
        for (int sig = 1; sig < NSIG; sig++) {
            if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
        }
        if (setsid() < 0) {
            say("cannot start a session", strerror(errno));
            _exit(126);
        }
        execv(argv[2], argv + 2);
        say("cannot run the task", strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    int status;
    pid_t got;
    do got = waitpid(child, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        say("cannot wait for the task", strerror(errno));
        return 1;
    }
    if (record(argv[1], status) < 0) {
        say("cannot record the task's exit status", strerror(errno));
        return 1;
    }
    return 0;
}
