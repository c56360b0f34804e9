package dev.drover.driver.host;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a command's process group with SIGKILL, one member at a time, and only while the group is still the
 * command's. A group's number is another's once all its processes are gone (and reaped): a {@code kill -G} after a
 * check could reach a stranger's group. So the group counts as the command's only while a process known to have
 * been in it (its leader, or a member seen earlier) is in it still, checked after its members were opened; a process
 * that left it (a {@code setsid}) vouches for it no more. Each member is named by a pidfd opened before it is checked
 * (PID, start time and group read at once), so the signal reaches that process and no later holder of its PID.
 */
final class GroupKill {

    private static final Logger LOG = LoggerFactory.getLogger(GroupKill.class);

    /** The processes of the host, as far as a kill needs them; {@link #HOST} is {@code /proc} and pidfds. */
    interface Table {
        /** The living processes in group {@code pgid}. */
        List<Procs.Identity> members(long pgid);

        /** The group {@code p} is in; empty once it is gone. */
        OptionalLong groupOf(Procs.Identity p);

        /** A handle naming {@code pid}'s process now for good; empty when there is none. */
        Optional<Member> open(long pid);
    }

    /** An opened process. */
    interface Member extends AutoCloseable {
        void kill();

        @Override
        void close();
    }

    static final Table HOST = new Pidfds();

    private final Table table;

    GroupKill(Table table) {
        this.table = table;
    }

    /**
     * SIGKILLs the members of {@code group} while one of {@code known} is in it, round after round (what a member
     * forked meanwhile), until it has none left, it is no longer the command's, or {@code wait} has passed.
     *
     * @return whether the group is empty (or no longer the command's) at the end
     */
    boolean kill(long group, Set<Procs.Identity> known, Duration wait) throws InterruptedException {
        Set<Procs.Identity> ours = new HashSet<>(known);
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            List<Procs.Identity> members = table.members(group);
            if (members.isEmpty()) {
                return true;
            }
            List<Member> opened = new ArrayList<>();
            List<Procs.Identity> checked = new ArrayList<>();
            try {
                for (Procs.Identity m : members) {
                    Optional<Member> h = table.open(m.pid());
                    if (h.isEmpty()) {
                        continue;
                    }
                    if (table.groupOf(m).orElse(-1) == group) {
                        opened.add(h.get());
                        checked.add(m);
                    } else {
                        h.get().close();
                    }
                }
                // checked last: those opened were in the group before this moment, when it was still the command's
                if (ours.stream().noneMatch(p -> table.groupOf(p).orElse(-1) == group)) {
                    LOG.debug("process group {} is no longer the command's: not signalled", group);
                    return true;
                }
                opened.forEach(Member::kill);
                ours.addAll(checked);
            } finally {
                opened.forEach(Member::close);
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
    }

    /** {@code /proc} and {@code pidfd_open}/{@code pidfd_send_signal} (Linux 5.3+; plain {@code kill} before). */
    private static final class Pidfds implements Table {

        private static final long SYS_PIDFD_SEND_SIGNAL = 424; // the same on x86-64 and arm64
        private static final long SYS_PIDFD_OPEN = 434;
        private static final int SIGKILL = 9;
        private static final Linker LINKER = Linker.nativeLinker();
        private static final MethodHandle SYSCALL = LINKER.downcallHandle(
                LINKER.defaultLookup().find("syscall").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        private static final MethodHandle KILL = LINKER.downcallHandle(
                LINKER.defaultLookup().find("kill").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        private static final MethodHandle CLOSE = LINKER.downcallHandle(
                LINKER.defaultLookup().find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));

        @Override
        public List<Procs.Identity> members(long pgid) {
            return Procs.groupMembers(pgid);
        }

        @Override
        public OptionalLong groupOf(Procs.Identity p) {
            return Procs.groupOf(p);
        }

        @Override
        public Optional<Member> open(long pid) {
            long fd;
            try {
                fd = (long) SYSCALL.invokeExact(SYS_PIDFD_OPEN, pid, 0L, 0L, 0L);
            } catch (Throwable t) {
                fd = -1;
            }
            if (fd >= 0) {
                int pidfd = (int) fd;
                return Optional.of(new Member() {
                    @Override
                    public void kill() {
                        try {
                            long ignored = (long)
                                    SYSCALL.invokeExact(SYS_PIDFD_SEND_SIGNAL, (long) pidfd, (long) SIGKILL, 0L, 0L);
                        } catch (Throwable t) {
                            LOG.warn("cannot signal process {}: {}", pid, t.toString());
                        }
                    }

                    @Override
                    public void close() {
                        try {
                            int ignored = (int) CLOSE.invokeExact(pidfd);
                        } catch (Throwable t) {
                            // close cannot fail in a way that leaves the descriptor open on Linux
                        }
                    }
                });
            }
            if (Procs.startTime(pid).isEmpty()) {
                return Optional.empty();
            }
            // No pidfds (a kernel before 5.3): the PID, checked just before, is what names the process.
            return Optional.of(new Member() {
                @Override
                public void kill() {
                    try {
                        int ignored = (int) KILL.invokeExact((int) pid, SIGKILL);
                    } catch (Throwable t) {
                        LOG.warn("cannot signal process {}: {}", pid, t.toString());
                    }
                }

                @Override
                public void close() {}
            });
        }
    }
}
