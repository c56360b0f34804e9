package dev.drover.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class WorkerTest {

    /** Far longer than any test: a close that waited for it would fail the test's own bound. */
    private static final Duration FOREVER = Duration.ofHours(1);

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final Logger log = (Logger) LoggerFactory.getLogger(Worker.class);
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final List<Worker> started = new ArrayList<>();

    @BeforeEach
    void listen() {
        lines.start();
        log.addAppender(lines);
    }

    @AfterEach
    void stopEverything() {
        log.detachAppender(lines);
        Worker.closeAll(started);
    }

    private Worker virtual(String name, Worker.Turn turn) {
        Worker w = Worker.startVirtual(name, turn);
        started.add(w);
        return w;
    }

    @Test
    void closeStopsATurnThatSleeps() {
        CountDownLatch sleeping = new CountDownLatch(1);
        Worker w = virtual("sleeper", self -> {
            sleeping.countDown();
            Thread.sleep(FOREVER);
        });
        await().until(() -> sleeping.getCount() == 0);

        assertThat(Worker.closeAll(List.of(w), BOUND))
                .as("the thread ended within the bound")
                .isTrue();
        assertThat(w.alive()).isFalse();
        assertThat(w.closed()).isTrue();
        assertThat(lines.list).as("a closed worker stops quietly").isEmpty();
    }

    @Test
    void closeStopsATurnWaitingOnAQueueOrACondition() throws Exception {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        ReentrantLock lock = new ReentrantLock();
        Condition never = lock.newCondition();
        Semaphore waiting = new Semaphore(0);
        Worker taker = virtual("taker", self -> {
            waiting.release();
            queue.take();
        });
        Worker awaiter = Worker.startPlatform("awaiter", self -> {
            lock.lock();
            try {
                waiting.release();
                never.await();
            } finally {
                lock.unlock();
            }
        });
        started.add(awaiter);
        waiting.acquire(2);

        assertThat(Worker.closeAll(List.of(taker, awaiter), BOUND)).isTrue();
        assertThat(taker.alive()).isFalse();
        assertThat(awaiter.alive()).isFalse();
    }

    @Test
    void turnsRepeatUntilClosedAndNoneStartsOnceClosed() throws Exception {
        AtomicInteger turns = new AtomicInteger();
        AtomicBoolean startedClosed = new AtomicBoolean();
        Semaphore turned = new Semaphore(0);
        // The turn swallows the interrupt: only the closed flag can end the loop.
        Worker w = virtual("counter", self -> {
            startedClosed.compareAndSet(false, self.closed());
            turns.incrementAndGet();
            turned.release();
            try {
                Thread.sleep(1);
            } catch (InterruptedException ignored) {
                // returns normally
            }
        });
        turned.acquire(3);

        assertThat(Worker.closeAll(List.of(w), BOUND)).isTrue();
        assertThat(w.alive()).isFalse();
        assertThat(turns.get()).isGreaterThanOrEqualTo(3);
        assertThat(startedClosed).as("no turn starts after close").isFalse();
        assertThat(lines.list).isEmpty();
    }

    @Test
    void closingTwiceIsHarmless() {
        AtomicInteger turns = new AtomicInteger();
        Worker w = virtual("twice", self -> {
            turns.incrementAndGet();
            Thread.sleep(FOREVER);
        });
        await().until(() -> turns.get() == 1);

        w.close();
        w.close();
        assertThat(Worker.closeAll(List.of(w), Duration.ZERO))
                .as("already ended: nothing to wait for")
                .isTrue();
        assertThat(turns).hasValue(1);
        assertThat(lines.list).isEmpty();
    }

    @Test
    void aTurnClosingItsOwnWorkerEndsItAfterThatTurnWithoutWaitingForItself() {
        AtomicInteger turns = new AtomicInteger();
        AtomicReference<Boolean> interruptedAfterClose = new AtomicReference<>();
        Worker w = virtual("self-closer", self -> {
            if (turns.incrementAndGet() == 3) {
                self.close(); // would wait for itself for the whole bound if it joined
                interruptedAfterClose.set(Thread.currentThread().isInterrupted());
            }
        });

        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
        assertThat(turns).as("the turn that closed it was the last").hasValue(3);
        assertThat(interruptedAfterClose.get())
                .as("the rest of its own turn is not interrupted")
                .isFalse();
        assertThat(w.closed()).isTrue();
        assertThat(lines.list).isEmpty();
    }

    @Test
    void aFailingTurnIsLoggedWithTheWorkersNameAndLeavesNoThread() {
        AtomicInteger turns = new AtomicInteger();
        Worker w = virtual("drover-failing", self -> {
            turns.incrementAndGet();
            throw new IllegalStateException("the turn broke");
        });

        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
        assertThat(turns).as("a failed turn is not run again").hasValue(1);
        assertThat(lines.list).singleElement().satisfies(line -> {
            assertThat(line.getLevel()).isEqualTo(Level.ERROR);
            assertThat(line.getFormattedMessage()).contains("drover-failing");
            assertThat(line.getThrowableProxy().getMessage()).isEqualTo("the turn broke");
        });
        assertThat(Worker.closeAll(List.of(w), Duration.ZERO))
                .as("closing it afterwards finds it ended")
                .isTrue();
    }

    @Test
    void anErrorInATurnIsLoggedToo() {
        Worker w = virtual("drover-erring", self -> {
            throw new AssertionError("an error, not an exception");
        });

        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
        assertThat(lines.list)
                .singleElement()
                .satisfies(line ->
                        assertThat(line.getThrowableProxy().getMessage()).isEqualTo("an error, not an exception"));
    }

    @Test
    void anInterruptFromElsewhereStopsItWithAWarning() {
        AtomicReference<Thread> thread = new AtomicReference<>();
        Worker w = virtual("drover-interrupted", self -> {
            thread.set(Thread.currentThread());
            Thread.sleep(FOREVER);
        });
        await().until(() -> thread.get() != null);

        thread.get().interrupt();
        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
        assertThat(w.closed()).isFalse();
        assertThat(lines.list).singleElement().satisfies(line -> {
            assertThat(line.getLevel()).isEqualTo(Level.WARN);
            assertThat(line.getFormattedMessage()).contains("drover-interrupted", "without being closed");
        });
    }

    @Test
    void theThreadCarriesTheNameAndKindAsked() throws Exception {
        LinkedBlockingQueue<Thread> seen = new LinkedBlockingQueue<>();
        Worker v = virtual("drover-v", self -> {
            seen.add(Thread.currentThread());
            Thread.sleep(FOREVER);
        });
        Thread vt = seen.take();
        Worker p = Worker.startPlatform("drover-p", self -> {
            seen.add(Thread.currentThread());
            Thread.sleep(FOREVER);
        });
        started.add(p);
        Thread pt = seen.take();

        assertThat(vt.getName()).isEqualTo("drover-v");
        assertThat(vt.isVirtual()).isTrue();
        assertThat(pt.getName()).isEqualTo("drover-p");
        assertThat(pt.isVirtual()).isFalse();
        assertThat(pt.isDaemon()).as("a platform worker never keeps the JVM up").isTrue();
        assertThat(v.alive()).isTrue();
        assertThat(p.alive()).isTrue();
    }

    @Test
    void aTurnThatIgnoresTheInterruptIsLeftAfterTheBoundAndSaidSo() {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(1);
        Worker w = virtual("drover-stubborn", self -> {
            stuck.countDown();
            while (release.getCount() > 0) {
                try {
                    release.await();
                } catch (InterruptedException ignored) {
                    // a turn that will not stop
                }
            }
        });
        await().until(() -> stuck.getCount() == 0);

        assertThat(Worker.closeAll(List.of(w), Duration.ofMillis(100))).isFalse();
        assertThat(w.alive()).isTrue();
        assertThat(lines.list)
                .singleElement()
                .satisfies(line -> assertThat(line.getFormattedMessage()).contains("drover-stubborn", "did not stop"));

        release.countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
        assertThat(lines.list).as("closed meanwhile: no second line").hasSize(1);
    }

    @Test
    void closeAllInterruptsEveryWorkerBeforeWaitingForAny() throws Exception {
        CountDownLatch secondInterrupted = new CountDownLatch(1);
        Semaphore sleeping = new Semaphore(0);
        // The first stops only once the second was interrupted: a close that waited for it first would hang.
        Worker first = virtual("first", self -> {
            sleeping.release();
            try {
                Thread.sleep(FOREVER);
            } catch (InterruptedException e) {
                while (secondInterrupted.getCount() > 0) {
                    try {
                        secondInterrupted.await();
                    } catch (InterruptedException again) {
                        // keep waiting for the second
                    }
                }
                throw e;
            }
        });
        Worker second = virtual("second", self -> {
            sleeping.release();
            try {
                Thread.sleep(FOREVER);
            } finally {
                secondInterrupted.countDown();
            }
        });
        sleeping.acquire(2);

        assertThat(Worker.closeAll(List.of(first, second), BOUND)).isTrue();
        assertThat(first.alive()).isFalse();
        assertThat(second.alive()).isFalse();
    }

    @Test
    void closeGivesUpWaitingWhenTheCallerIsInterruptedAndKeepsItsInterrupt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(1);
        Worker w = virtual("drover-slow", self -> {
            stuck.countDown();
            while (release.getCount() > 0) {
                try {
                    release.await();
                } catch (InterruptedException ignored) {
                    // slow to stop
                }
            }
        });
        stuck.await();

        AtomicReference<Boolean> ended = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread closer = Thread.ofVirtual().start(() -> {
            Thread.currentThread().interrupt();
            ended.set(Worker.closeAll(List.of(w), FOREVER));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        assertThat(closer.join(BOUND))
                .as("the interrupted caller did not wait an hour")
                .isTrue();
        assertThat(ended.get()).isFalse();
        assertThat(stillInterrupted.get()).isTrue();

        release.countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> !w.alive());
    }
}
