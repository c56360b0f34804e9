package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import org.junit.jupiter.api.Test;

class StoredLoadTest {

    @Test
    void aReadBegunBeforeTheRestoreGivesWhatTheStoreHolds() {
        StateDB db = StateStores.inMemory();
        AllocId web = new AllocId("default", "web");
        db.putAllocation(web, new Allocation());
        db.putTaskLocalState(web, "main", TaskLocalState.initial("mock"));

        StoredLoad load = StoredLoad.begin(db);

        assertThat(load.await()).isEqualTo(db.loadAll());
        assertThat(load.await().getFirst().tasks()).containsOnlyKeys("main");
        db.close();
    }

    @Test
    void aStoreThatCannotBeReadFailsTheRestoreWithItsOwnError() {
        StateDB db = StateStores.inMemory();
        db.close();

        StoredLoad load = StoredLoad.begin(db);

        assertThatThrownBy(load::await)
                .as("not wrapped: the agent's start reports what the store said")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
