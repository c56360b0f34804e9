package dev.drover.state;

class InMemoryStateDBTest extends StateDBContractTest {

    @Override
    StateDB openStore() {
        return StateStores.inMemory();
    }
}
