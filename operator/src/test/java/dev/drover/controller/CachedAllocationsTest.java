package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.FieldsV1;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the informer's cache keeps of an allocation. */
class CachedAllocationsTest {

    private static Allocation applied(Map<String, String> annotations) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web")
                .withNamespace("team")
                .withGeneration(2L)
                .withAnnotations(annotations)
                .withFinalizers(List.of(AllocationReconciler.FINALIZER))
                .withManagedFields(new ManagedFieldsEntryBuilder()
                        .withManager("kubectl-client-side-apply")
                        .withOperation("Update")
                        .withFieldsType("FieldsV1")
                        .withFieldsV1(new FieldsV1())
                        .build())
                .build());
        return a;
    }

    private static AllocationStatus status(ClientStatus clientStatus) {
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(clientStatus);
        return s;
    }

    @Test
    void managedFieldsAndKubectlsLastAppliedCopyAreNotKeptWhatTheAgentReadsIs() {
        CachedAllocations cache = new CachedAllocations((id, status) -> status);
        Allocation a = applied(Map.of(
                CachedAllocations.LAST_APPLIED,
                "{\"apiVersion\":\"drover.dev/v1alpha1\"}",
                "drover.dev/restartedAt",
                "2026-11-28T05:00:00Z"));
        cache.put(cache.getKey(a), a);

        Allocation cached = cache.get("team/web");
        assertThat(cached.getMetadata().getManagedFields()).isNullOrEmpty();
        assertThat(cached.getMetadata().getAnnotations())
                .containsExactly(Map.entry("drover.dev/restartedAt", "2026-11-28T05:00:00Z"));
        assertThat(cached.getMetadata().getFinalizers()).containsExactly(AllocationReconciler.FINALIZER);
        assertThat(cached.getMetadata().getGeneration()).isEqualTo(2L);
        assertThat(cache.size()).isEqualTo(1);
        assertThat(cache.keySet()).containsExactly("team/web");

        assertThat(cache.remove("team/web")).isSameAs(cached);
        assertThat(cache.get("team/web")).isNull();
    }

    @Test
    void aStatusEqualToOneTheAgentHoldsIsKeptAsThatOneInstance() {
        AllocationStatus held = status(ClientStatus.Running);
        CachedAllocations cache = new CachedAllocations(
                (id, observed) -> id.equals(new AllocId("team", "web")) && observed.equals(held) ? held : observed);

        Allocation echo = applied(Map.of());
        echo.setStatus(status(ClientStatus.Running)); // as the watch read it back
        cache.put(cache.getKey(echo), echo);
        assertThat(cache.get("team/web").getStatus()).isSameAs(held);

        Allocation edited = applied(Map.of());
        AllocationStatus failed = status(ClientStatus.Failed);
        edited.setStatus(failed);
        cache.put(cache.getKey(edited), edited);
        assertThat(cache.get("team/web").getStatus()).isSameAs(failed);
    }

    /** An API server that does not check names: the watch goes on, the allocation is cached as it came. */
    @Test
    void anAllocationWithANameNoAllocationCanHaveIsCachedWithItsOwnStatus() {
        CachedAllocations cache = new CachedAllocations((id, observed) -> {
            throw new AssertionError("no id for " + id);
        });
        Allocation odd = applied(Map.of());
        odd.getMetadata().setName("Not_A_Name");
        AllocationStatus own = status(ClientStatus.Running);
        odd.setStatus(own);
        cache.put(cache.getKey(odd), odd);
        assertThat(cache.get(cache.getKey(odd)).getStatus()).isSameAs(own);
    }

    @Test
    void anAllocationWithOnlyTheLastAppliedAnnotationHasNoneLeft() {
        Allocation a = applied(Map.of(CachedAllocations.LAST_APPLIED, "{}"));
        assertThat(CachedAllocations.pruned(a).getMetadata().getAnnotations()).isNullOrEmpty();
    }
}
