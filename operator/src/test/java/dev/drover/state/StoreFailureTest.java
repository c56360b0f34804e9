package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A store that cannot write (a full disk) loses nothing: what failed is written again once it can. */
class StoreFailureTest {

    static final AllocId WEB = new AllocId("default", "web");

    final FailingKvStore kv = FailingKvStore.inMemory();
    final StateDB db = kv.stateDB(Duration.ofMillis(10));
    final List<AllocId> stored = new CopyOnWriteArrayList<>();

    StoreFailureTest() {
        db.onStored(stored::add);
    }

    @AfterEach
    void close() {
        db.close();
    }

    static Allocation spec(int version) {
        Allocation spec = new Allocation();
        spec.setSpec(new AllocationSpec());
        spec.getSpec().setNodeName("node-" + version);
        return spec;
    }

    @Test
    void aWriteTheStoreFailsIsWrittenAgainOnceItCan() {
        kv.fail();

        assertThatThrownBy(() -> db.putAllocation(WEB, spec(1)))
                .isInstanceOf(StateStoreException.class)
                .hasMessageContaining("SQLITE_FULL");
        assertThat(db.unstored(WEB)).hasValueSatisfying(why -> assertThat(why).contains("SQLITE_FULL"));
        assertThat(db.stats().unstored()).isEqualTo(1);

        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> stored.contains(WEB));
        assertThat(db.getAllocation(WEB)).contains(spec(1));
        assertThat(db.unstored(WEB)).isEmpty();
        assertThat(db.stats().failures()).isGreaterThanOrEqualTo(1);
        assertThat(db.stats().unstored()).isZero();
    }

    @Test
    void aRetryWritesEachWaitingValueOnceWhenTheStoreFailsAtOnce() throws Exception {
        kv.fail(); // fails each write as it is submitted, so a failed retry keeps its value again at once
        int waiting = 50;
        for (int i = 0; i < waiting; i++) {
            AllocId id = new AllocId("default", "web-" + i);
            assertThatThrownBy(() -> db.putAllocation(id, spec(1))).isInstanceOf(StateStoreException.class);
        }
        long before = kv.failed();
        Thread.sleep(1_000); // a rate over time: retries back off from 10 ms to 200 ms, so about ten in a second
        assertThat(kv.failed() - before)
                .as("writes tried again in a second (a retry that met its own failures" + " again spun without end)")
                .isLessThanOrEqualTo(waiting * 15L);
        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> db.stats().unstored() == 0);
    }

    @Test
    void aNewerValueReplacesOneWaitingSoTheRetryNeverWritesAnOlderOne() {
        kv.fail();
        assertThatThrownBy(() -> db.putAllocation(WEB, spec(1))).isInstanceOf(StateStoreException.class);
        assertThatThrownBy(() -> db.putAllocation(WEB, spec(2))).isInstanceOf(StateStoreException.class);

        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> stored.contains(WEB));
        assertThat(db.getAllocation(WEB)).contains(spec(2));

        kv.fail();
        assertThatThrownBy(() -> db.putAllocation(WEB, spec(3))).isInstanceOf(StateStoreException.class);
        kv.recover();
        db.putAllocation(WEB, spec(4));
        assertThat(db.stats().unstored())
                .as("spec 3 is dropped: spec 4 replaced it")
                .isZero();
        assertThat(db.getAllocation(WEB)).contains(spec(4));
    }

    @Test
    void aDeleteTheStoreFailsIsAppliedLater() {
        db.putAllocation(WEB, spec(1));
        db.putTaskLocalState(WEB, "main", TaskLocalState.initial("mock"));
        kv.fail();

        assertThatThrownBy(() -> db.deleteAllocation(WEB)).isInstanceOf(StateStoreException.class);
        assertThat(db.unstored(WEB)).isPresent();

        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> stored.contains(WEB));
        assertThat(db.loadAll()).isEmpty();
    }

    @Test
    void aPutAfterAFailedDeleteIsNeverUndoneByIt() {
        db.putAllocation(WEB, spec(1));
        kv.fail();
        assertThatThrownBy(() -> db.deleteAllocation(WEB)).isInstanceOf(StateStoreException.class);
        assertThatThrownBy(() -> db.putAllocation(WEB, spec(2)))
                .as("waits behind the deletion")
                .isInstanceOf(StateStoreException.class);

        kv.recover();
        await().atMost(Duration.ofSeconds(10)).until(() -> stored.contains(WEB));
        assertThat(db.getAllocation(WEB))
                .as("the deletion first, then the newer spec")
                .contains(spec(2));

        kv.fail();
        assertThatThrownBy(() -> db.deleteAllocation(WEB)).isInstanceOf(StateStoreException.class);
        kv.recover();
        db.putAllocation(WEB, spec(3)); // a new allocation of the same name, before the retry ran
        assertThat(db.stats().unstored())
                .as("the owed deletion was applied before the put")
                .isZero();
        assertThat(db.getAllocation(WEB)).contains(spec(3));
    }
}
