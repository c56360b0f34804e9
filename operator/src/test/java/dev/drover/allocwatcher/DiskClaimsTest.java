package dev.drover.allocwatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The claim file beside a disk: one successor wins, and nothing a task left there is followed or believed. */
class DiskClaimsTest {

    @TempDir
    Path data;

    Path web1;
    final Claimant web2 = new Claimant("web-2", "5d1e0c4b-8a7f-4f6e-9d2c-1b3a4c5d6e7f");

    @BeforeEach
    void disk() throws IOException {
        web1 = Files.createDirectories(data.resolve("allocs/default/web-1"));
    }

    @Test
    void theFirstClaimantWinsAndKeepsItAcrossARestart() throws Exception {
        DiskClaims.claim(web1, web2);
        DiskClaims.claim(web1, web2); // again, as after an agent restart: still its own
        Path file = web1.resolve(".disk-claim");
        assertThat(file).hasContent("web-2/5d1e0c4b-8a7f-4f6e-9d2c-1b3a4c5d6e7f");
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        try (var files = Files.list(web1)) {
            assertThat(files).as("no temporary file is left").containsExactly(file);
        }

        assertThatThrownBy(() -> DiskClaims.claim(web1, new Claimant("web-3", "uid-3")))
                .isInstanceOf(DiskClaimedException.class)
                .hasMessage("allocation web-2 claimed the disk of web-1 first, and a disk goes to one successor only");
        assertThatThrownBy(() -> DiskClaims.claim(web1, new Claimant("web-2", "another-uid")))
                .as("a new allocation with the winner's name is another successor")
                .isInstanceOf(DiskClaimedException.class);
        assertThat(DiskClaims.holder(web1)).contains(web2);
    }

    @Test
    void ofSuccessorsRacingForADiskExactlyOneWins() throws Exception {
        int racers = 8;
        CountDownLatch go = new CountDownLatch(1);
        List<String> winners = new CopyOnWriteArrayList<>();
        List<String> losers = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < racers; i++) {
            String name = "next-" + i;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    go.await();
                    DiskClaims.claim(web1, new Claimant(name, "uid-" + name));
                    winners.add(name);
                } catch (DiskClaimedException e) {
                    losers.add(e.holder());
                } catch (Exception e) {
                    losers.add("failed: " + e);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(winners).hasSize(1);
        assertThat(losers).hasSize(racers - 1).containsOnly(winners.getFirst());
    }

    @Test
    void aLinkPlantedAsTheClaimIsRefusedAndNeverFollowed() throws Exception {
        Path elsewhere = Files.writeString(data.resolve("elsewhere"), "web-9/uid-9");
        Files.createSymbolicLink(web1.resolve(".disk-claim"), elsewhere);
        assertThatThrownBy(() -> DiskClaims.claim(web1, web2))
                .isNotInstanceOf(DiskClaimedException.class)
                .hasMessageContaining("is not a regular file (a link)");
        assertThat(elsewhere).as("not written through the link").hasContent("web-9/uid-9");

        Files.delete(web1.resolve(".disk-claim"));
        Files.createSymbolicLink(web1.resolve(".disk-claim"), data.resolve("dangling"));
        assertThatThrownBy(() -> DiskClaims.claim(web1, web2)).hasMessageContaining("(a link)");
        assertThat(data.resolve("dangling"))
                .as("nothing is created where a dangling link points")
                .doesNotExist();
    }

    @Test
    void aFifoIsRefusedWithoutOpeningIt() throws Exception {
        Process mkfifo =
                new ProcessBuilder("mkfifo", web1.resolve(".disk-claim").toString()).start();
        assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        long start = System.nanoTime();
        assertThatThrownBy(() -> DiskClaims.claim(web1, web2))
                .hasMessageContaining("is not a regular file (a special file)");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("opening a FIFO for reading would block until a writer comes")
                .isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aDirectoryAnOversizedFileOrGarbageIsRefused() throws Exception {
        Files.createDirectory(web1.resolve(".disk-claim"));
        assertThatThrownBy(() -> DiskClaims.holder(web1)).hasMessageContaining("(a directory)");
        Files.delete(web1.resolve(".disk-claim"));

        Files.writeString(web1.resolve(".disk-claim"), "web-2/" + "a".repeat(600));
        assertThatThrownBy(() -> DiskClaims.claim(web1, web2))
                .isNotInstanceOf(DiskClaimedException.class)
                .hasMessageContaining("holds 606 bytes, more than a claim (512 at most)");

        for (String garbage : List.of(
                "", "WEB-2/uid", "web-2/uid/extra", "../web-2/uid", "web-2/uid\nweb-3/uid", "web-2/\u001b[31mred")) {
            Files.writeString(web1.resolve(".disk-claim"), garbage);
            assertThatThrownBy(() -> DiskClaims.claim(web1, web2))
                    .as("%s", garbage)
                    .isNotInstanceOf(DiskClaimedException.class)
                    .hasMessageContaining("holds no claim")
                    .hasMessageNotContaining("\u001b");
        }
    }

    @Test
    void aDiskThatIsGoneCannotBeClaimed() {
        assertThatThrownBy(() -> DiskClaims.claim(data.resolve("allocs/default/never-was"), web2))
                .isNotInstanceOf(DiskClaimedException.class)
                .hasMessageContaining("the disk of never-was is gone");
    }
}
