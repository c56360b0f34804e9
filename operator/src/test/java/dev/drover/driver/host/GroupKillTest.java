package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link GroupKill} against a process table these tests make: who is signalled, who never is. */
class GroupKillTest {

    private static final long GROUP = 500;

    /** pid → (start, group, 1 when a zombie): a killed process is a zombie, in its group until it is reaped. */
    private final Map<Long, long[]> processes = new HashMap<>();

    private final List<Long> killed = new ArrayList<>();
    private final List<Long> opened = new ArrayList<>();

    private final GroupKill.Table table = new GroupKill.Table() {
        @Override
        public List<Procs.Identity> members(long pgid) {
            return processes.entrySet().stream()
                    .filter(e -> e.getValue()[1] == pgid && e.getValue()[2] == 0)
                    .map(e -> new Procs.Identity(e.getKey(), e.getValue()[0]))
                    .sorted(java.util.Comparator.comparingLong(Procs.Identity::pid))
                    .toList();
        }

        @Override
        public OptionalLong groupOf(Procs.Identity p) {
            long[] it = processes.get(p.pid());
            return it == null || it[0] != p.start() ? OptionalLong.empty() : OptionalLong.of(it[1]);
        }

        @Override
        public Optional<GroupKill.Member> open(long pid) {
            if (!processes.containsKey(pid) || processes.get(pid)[2] == 1) {
                return Optional.empty();
            }
            opened.add(pid);
            return Optional.of(new GroupKill.Member() {
                @Override
                public void kill() {
                    killed.add(pid);
                    processes.get(pid)[2] = 1;
                }

                @Override
                public void close() {
                    opened.remove(pid);
                }
            });
        }
    };

    private void process(long pid, long start, long group) {
        processes.put(pid, new long[] {start, group, 0});
    }

    private boolean kill(Procs.Identity... known) throws InterruptedException {
        return new GroupKill(table).kill(GROUP, Set.of(known), Duration.ofSeconds(1));
    }

    @Test
    void whileTheLeaderLivesEveryMemberIsKilledAndNoOneElse() throws Exception {
        process(GROUP, 10, GROUP);
        process(501, 11, GROUP);
        process(502, 12, GROUP);
        process(600, 5, 600);

        assertThat(kill(new Procs.Identity(GROUP, 10))).isTrue();

        assertThat(killed).containsExactlyInAnyOrder(GROUP, 501L, 502L);
        assertThat(opened).as("every pidfd closed").isEmpty();
    }

    @Test
    void aMemberSeenAtTheLeadersExitThatStillIsInTheGroupKeepsItTheCommands() throws Exception {
        process(501, 11, GROUP);
        process(502, 12, GROUP);

        assertThat(kill(new Procs.Identity(GROUP, 10), new Procs.Identity(501, 11)))
                .isTrue();

        assertThat(killed).containsExactlyInAnyOrder(501L, 502L);
    }

    @Test
    void aMemberThatLeftTheGroupNoLongerVouchesForItSoAStrangerReusingItsNumberIsNeverSignalled() throws Exception {
        process(501, 11, 501); // setsid: a group of its own now
        process(GROUP, 99, GROUP); // the group's number, a stranger's since
        process(700, 98, GROUP);

        assertThat(kill(new Procs.Identity(GROUP, 10), new Procs.Identity(501, 11)))
                .isTrue();

        assertThat(killed).isEmpty();
        assertThat(opened).isEmpty();
    }

    @Test
    void aMemberSeenEarlierWhosePidIsAnothersNowIsNeitherKilledNorProofOfTheGroup() throws Exception {
        process(501, 50, GROUP); // pid 501 reused by a stranger in a reused group 500

        assertThat(kill(new Procs.Identity(GROUP, 10), new Procs.Identity(501, 11)))
                .isTrue();

        assertThat(killed).isEmpty();
    }

    @Test
    void whatTheLeaderForkedInTheMeantimeIsKilledInTheNextRound() throws Exception {
        process(GROUP, 10, GROUP);
        GroupKill.Table forking = new GroupKill.Table() {
            private boolean forked;

            @Override
            public List<Procs.Identity> members(long pgid) {
                return table.members(pgid);
            }

            @Override
            public OptionalLong groupOf(Procs.Identity p) {
                return table.groupOf(p);
            }

            @Override
            public Optional<GroupKill.Member> open(long pid) {
                if (!forked) { // the leader forks between the listing and its kill
                    forked = true;
                    process(503, 13, GROUP);
                }
                return table.open(pid);
            }
        };

        // the leader's zombie holds the group's number until it is reaped: the group is still the command's
        boolean empty =
                new GroupKill(forking).kill(GROUP, Set.of(new Procs.Identity(GROUP, 10)), Duration.ofSeconds(1));

        assertThat(empty).isTrue();
        assertThat(killed).containsExactly(GROUP, 503L);
    }
}
