package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodeBooking;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Admissions with a booking ({@code nodeSharing: resize}): what is booked, when, and what a refusal leaves. */
class AdmissionsBookingTest {

    /** Books what it is told, refusing any share above {@code most} millicores, and records every call. */
    static final class Booking implements NodeBooking {
        final List<String> calls = new ArrayList<>();
        long most = Long.MAX_VALUE;

        @Override
        public Optional<Decision> book(AllocId id, CpuMemory share) {
            calls.add("book " + id.name() + " " + share.cpuMillis());
            return share.cpuMillis() > most
                    ? Optional.of(new Decision(false, "OutOfcpu", "the kubelet said no", Map.of()))
                    : Optional.empty();
        }

        @Override
        public void release(AllocId id) {
            calls.add("release " + id.name());
        }

        @Override
        public void restore(Map<AllocId, CpuMemory> shares) {
            calls.add("restore " + shares.size());
        }
    }

    private final NodeAdmission node = new NodeAdmission(new CpuMemory(4000, 4096));
    private final Booking booking = new Booking();
    private final Admissions admissions = new Admissions(node, null, () -> {});

    {
        admissions.bookWith(booking);
    }

    private static Allocation asking(int cpuMillis) {
        return Serialization.unmarshal(
                "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: a, namespace: team}\n"
                        + "spec:\n  nodeName: n\n  tasks: [{name: web, driver: mock, resources: {cpuMillis: "
                        + cpuMillis + "}}]\n",
                Allocation.class);
    }

    private static final AllocId A = new AllocId("team", "a");

    @Test
    void aNewAllocationIsAdmittedOnlyOnceBookedAndARefusalLeavesNothingTaken() throws Exception {
        booking.most = 500;

        Decision refused = admissions.takeOn(A, asking(1000)).decision();

        assertThat(refused.admitted()).isFalse();
        assertThat(refused.message()).isEqualTo("the kubelet said no");
        assertThat(node.holds(A)).isFalse();
        assertThat(node.refusals()).containsEntry("OutOfcpu", 1L);
        assertThat(admissions.takeOn(A, asking(400)).decision().admitted()).isTrue();
        assertThat(node.share(A)).isEqualTo(new CpuMemory(400, 0));
    }

    @Test
    void aGrowingUpdateIsBookedBeforeItIsAdmittedAndARefusalKeepsTheShareItHad() throws Exception {
        admissions.takeOn(A, asking(400));
        booking.most = 600;

        assertThat(admissions.resize(A, asking(1000)).admitted()).isFalse();
        assertThat(node.share(A)).isEqualTo(new CpuMemory(400, 0));

        assertThat(admissions.resize(A, asking(600)).admitted()).isTrue();
        assertThat(node.share(A)).isEqualTo(new CpuMemory(600, 0));
        assertThat(booking.calls).containsExactly("book a 400", "book a 1000", "book a 600", "book a 600");
    }

    @Test
    void anUpdateOfAnAllocationThatIsOverBooksNothing() throws Exception {
        admissions.takeOn(A, asking(400));
        admissions.release(A);
        booking.calls.clear();

        assertThat(admissions.resize(A, asking(800)).admitted()).isTrue();

        assertThat(booking.calls)
                .as("its share was given back; nothing to book for it again")
                .isEmpty();
        assertThat(node.holds(A)).isFalse();
    }
}
