package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.testing.ExpectingApi;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The agent's finalizer: one small JSON patch to add it and one to remove it, each guarded by a test. */
class FinalizerTest {

    static final String PATH = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/web";

    static Allocation alloc(String... finalizers) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web")
                .withNamespace("default")
                .withFinalizers(finalizers)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-a");
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of());
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void addingIsOnePatchOfTwoOperationsWithNoReadBeforeIt() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            api.server().expect().patch().withPath(PATH).andReturn(200, "{}").always();
            Allocation a = alloc();
            a.getMetadata().setResourceVersion("41");

            assertThat(Finalizer.of(api.client()).add(a)).isTrue();

            List<RecordedRequest> requests = requests(api);
            assertThat(requests)
                    .extracting(r -> r.getMethod() + " " + r.getPath())
                    .containsExactly("PATCH " + PATH);
            assertThat(requests.getFirst().getHeader("Content-Type")).startsWith("application/json-patch+json");
            assertThat(requests.getFirst().getBody().readUtf8())
                    .isEqualTo(
                            "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"41\"},"
                                    + "{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\"drover.dev/finalizer\"]}]");
        }
    }

    @Test
    void anAllocationWithOtherFinalizersGetsOursAppendedOnlyIfTheListIsAsSeen() {
        assertThat(Finalizer.addPatch(alloc("example.com/keep")))
                .isEqualTo("[{\"op\":\"test\",\"path\":\"/metadata/finalizers\",\"value\":[\"example.com/keep\"]},"
                        + "{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"drover.dev/finalizer\"}]");
    }

    @Test
    void anAllocationThatHasItOrIsBeingDeletedGetsNoWrite() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            Allocation deleting = alloc();
            deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");

            assertThat(Finalizer.of(api.client()).add(alloc("example.com/keep", Finalizer.NAME)))
                    .isTrue();
            assertThat(Finalizer.of(api.client()).add(deleting)).isTrue();

            assertThat(requests(api)).as("no request at all").isEmpty();
        }
    }

    // fabric8's CRUD mock server never answers a JSON patch whose test fails: the refusals are expected here, as the
    // API server sends them (422)
    static final String TEST_FAILED = "{\"kind\":\"Status\",\"code\":422,\"message\":\"the test failed\"}";

    @Test
    void aSecondAddFromAStaleCopyDoesNotAddItTwice() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            api.server()
                    .expect()
                    .patch()
                    .withPath(PATH)
                    .andReturn(422, TEST_FAILED)
                    .once();
            api.server()
                    .expect()
                    .get()
                    .withPath(PATH)
                    .andReturn(200, alloc(Finalizer.NAME))
                    .once();
            Allocation stale = alloc();
            stale.getMetadata().setResourceVersion("41");

            assertThat(Finalizer.of(api.client()).add(stale)).isTrue();

            assertThat(requests(api))
                    .extracting(r -> r.getMethod() + " " + r.getPath())
                    .as("its test failed; the re-read has it: no second patch")
                    .containsExactly("PATCH " + PATH, "GET " + PATH);
        }
    }

    @Test
    void aFinalizerAnotherWriterAddedMeanwhileIsKept() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            api.server()
                    .expect()
                    .patch()
                    .withPath(PATH)
                    .andReturn(422, TEST_FAILED)
                    .once();
            api.server()
                    .expect()
                    .get()
                    .withPath(PATH)
                    .andReturn(200, alloc("example.com/keep"))
                    .once();
            api.server().expect().patch().withPath(PATH).andReturn(200, "{}").once();

            assertThat(Finalizer.of(api.client()).add(alloc())).isTrue();

            List<RecordedRequest> requests = requests(api);
            assertThat(requests)
                    .extracting(r -> r.getMethod() + " " + r.getPath())
                    .containsExactly("PATCH " + PATH, "GET " + PATH, "PATCH " + PATH);
            assertThat(requests.getLast().getBody().readUtf8())
                    .as("appended, tested against the list as read")
                    .isEqualTo(Finalizer.addPatch(alloc("example.com/keep")));
        }
    }

    @Test
    void removingTakesOursOnlyEvenWhenItMovedInTheList() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            api.server()
                    .expect()
                    .patch()
                    .withPath(PATH)
                    .andReturn(422, TEST_FAILED)
                    .once();
            api.server()
                    .expect()
                    .get()
                    .withPath(PATH)
                    .andReturn(200, alloc(Finalizer.NAME, "example.com/last"))
                    .once();
            api.server().expect().patch().withPath(PATH).andReturn(200, "{}").once();
            Allocation seen = alloc("example.com/first", Finalizer.NAME, "example.com/last");

            assertThat(Finalizer.of(api.client()).remove(seen)).isTrue();

            List<RecordedRequest> requests = requests(api);
            assertThat(requests.get(0).getBody().readUtf8())
                    .as("the entry at index 1 must still be ours")
                    .isEqualTo(
                            "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/1\",\"value\":\"drover.dev/finalizer\"},"
                                    + "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/1\"}]");
            assertThat(requests.get(1).getMethod()).isEqualTo("GET");
            assertThat(requests.get(2).getBody().readUtf8())
                    .as("from the re-read: ours is at 0 now")
                    .isEqualTo(
                            "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\",\"value\":\"drover.dev/finalizer\"},"
                                    + "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]");
        }
    }

    @Test
    void aRemovalRefusedTwiceIsLeftToTheNextReconcile() throws Exception {
        try (ExpectingApi api = new ExpectingApi()) {
            api.server()
                    .expect()
                    .patch()
                    .withPath(PATH)
                    .andReturn(422, TEST_FAILED)
                    .times(2);
            api.server()
                    .expect()
                    .get()
                    .withPath(PATH)
                    .andReturn(200, alloc(Finalizer.NAME))
                    .once();

            assertThat(Finalizer.of(api.client()).remove(alloc(Finalizer.NAME))).isFalse();

            assertThat(requests(api)).extracting(RecordedRequest::getMethod).containsExactly("PATCH", "GET", "PATCH");
        }
    }

    @Test
    void theAgentsPatchesApplyOnTheMockServer() throws Exception {
        try (MockApi api = new MockApi()) {
            KubernetesClient client = api.client();
            Allocation created = client.resource(alloc()).create();
            Finalizer finalizer = Finalizer.of(client);

            assertThat(finalizer.add(created)).isTrue();
            Allocation added = client.resource(created).get();
            assertThat(added.getMetadata().getFinalizers()).containsExactly(Finalizer.NAME);
            assertThat(finalizer.remove(added)).isTrue();
            assertThat(client.resource(created).get().getMetadata().getFinalizers())
                    .isEmpty();
            Allocation gone = alloc(Finalizer.NAME);
            gone.getMetadata().setName("gone");
            assertThat(finalizer.remove(gone)).as("gone (404): done").isTrue();
        }
    }

    private static List<RecordedRequest> requests(ExpectingApi api) throws InterruptedException {
        List<RecordedRequest> all = new ArrayList<>();
        for (RecordedRequest r; (r = api.server().takeRequest(100, TimeUnit.MILLISECONDS)) != null; ) {
            all.add(r);
        }
        return all;
    }
}
