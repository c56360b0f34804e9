package dev.drover.podresources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodResourcesClientTest {

    @TempDir
    Path dir;

    FakePodResources kubelet;
    PodResourcesClient client;

    @BeforeEach
    void start() throws Exception {
        kubelet = FakePodResources.start(dir.resolve("kubelet.sock"));
        client = new PodResourcesClient(kubelet.socket(), Duration.ofSeconds(5));
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        kubelet.close();
    }

    @Test
    void listsThePodsThatHoldDevicesWithTheirDeviceIds() throws Exception {
        kubelet.hold(List.of(
                new FakePodResources.Held("ml", "trainer-0", "main", "nvidia.com/gpu", List.of("GPU-aaa", "GPU-bbb")),
                new FakePodResources.Held("ml", "trainer-0", "side", "nvidia.com/gpu", List.of("1")),
                new FakePodResources.Held("web", "infer", "main", "nvidia.com/mig-1g.10gb", List.of("MIG-ccc"))));

        assertThat(client.list())
                .containsExactly(
                        new PodDevices("ml", "trainer-0", "main", "nvidia.com/gpu", List.of("GPU-aaa", "GPU-bbb")),
                        new PodDevices("ml", "trainer-0", "side", "nvidia.com/gpu", List.of("1")),
                        new PodDevices("web", "infer", "main", "nvidia.com/mig-1g.10gb", List.of("MIG-ccc")));
        assertThat(kubelet.calls()).isEqualTo(1);
    }

    @Test
    void aNodeWhosePodsHoldNoDevicesListsNothing() throws Exception {
        assertThat(client.list()).isEmpty();
    }

    @Test
    void aGrpcErrorIsOneSentenceNamingItsStatus() {
        kubelet.failWith(7, "pod resources: access denied\nfor you");

        assertThatThrownBy(client::list)
                .isInstanceOf(PodResourcesException.class)
                .hasMessage(
                        "the kubelet's PodResources API at " + kubelet.socket()
                                + " answered gRPC status 7 (PERMISSION_DENIED): \"pod resources: access denied\\u000afor you\"");
    }

    @Test
    void anAnswerOverSixteenMebibytesIsRefused() {
        kubelet.answerRaw(new byte[PodResourcesClient.MAX_MESSAGE + 6]);

        assertThatThrownBy(client::list)
                .isInstanceOf(PodResourcesException.class)
                .hasMessageContaining("answered more than 16777216 bytes, which is refused");
    }

    @Test
    void aFrameAnnouncingMoreThanSixteenMebibytesIsRefused() {
        kubelet.answerRaw(new byte[] {0, 0x01, 0, 0, 1});

        assertThatThrownBy(client::list)
                .hasMessageContaining("its gRPC message of 16777217 bytes is over the 16777216 read");
    }

    @Test
    void garbageIsRefusedSayingWhatIsWrong() {
        kubelet.answerRaw(FakePodResources.framed(new byte[] {0x0b, 0x01})); // field 1, wire type 3 (a group)

        assertThatThrownBy(client::list)
                .isInstanceOf(PodResourcesException.class)
                .hasMessageContaining("answered what cannot be read: its protobuf has field 1 of wire type 3");
    }

    @Test
    void aLengthPastTheEndOfTheMessageIsRefused() {
        kubelet.answerRaw(FakePodResources.framed(new byte[] {0x0a, 0x7f, 0x01}));

        assertThatThrownBy(client::list).hasMessageContaining("has a field of 127 bytes where 1 are left");
    }

    @Test
    void moreThanTenThousandPodsAreRefused() throws Exception {
        List<FakePodResources.Held> many = new ArrayList<>();
        for (int i = 0; i <= ListResponse.MAX_PODS; i++) {
            many.add(new FakePodResources.Held("ns", "p" + i, "c", "nvidia.com/gpu", List.of("GPU-" + i)));
        }
        ByteArrayOutputStream fine = new ByteArrayOutputStream();
        fine.writeBytes(FakePodResources.encode(many.subList(0, ListResponse.MAX_PODS)));
        assertThat(ListResponse.decode(fine.toByteArray())).hasSize(ListResponse.MAX_PODS);

        kubelet.hold(many);
        assertThatThrownBy(client::list).hasMessageContaining("it lists more than 10000 Pods");
    }

    @Test
    void anAnswerWithoutItsTrailersIsAnError() {
        assertThatThrownBy(() -> PodResourcesClient.message(new byte[] {0, 0, 0}))
                .hasMessage("its gRPC frame has 3 bytes, less than its 5-byte prefix");
    }

    @Test
    void aKubeletThatDoesNotAnswerFailsAtTheDeadline() throws Exception {
        kubelet.stall();
        try (PodResourcesClient quick = new PodResourcesClient(kubelet.socket(), Duration.ofMillis(300))) {
            long start = System.nanoTime();
            assertThatThrownBy(quick::list).hasMessageEndingWith("did not answer within 300 ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    void aMissingSocketCannotBeReached() throws Exception {
        try (PodResourcesClient nowhere = new PodResourcesClient(dir.resolve("none.sock"), Duration.ofSeconds(1))) {
            assertThatThrownBy(nowhere::list)
                    .isInstanceOf(PodResourcesException.class)
                    .hasMessageStartingWith(
                            "the kubelet's PodResources API at " + dir.resolve("none.sock") + " cannot be reached");
        }
    }
}
