package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodeBooking;
import dev.drover.common.UserText;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code nodeSharing: resize}: what the agent admits is booked on its own Pod, as the requests of its
 * {@code reservation} container, resized in place ({@code pods/NAME/resize}) to the sum of the admitted shares, so
 * that kube-scheduler counts it and the kubelet arbitrates. A share is booked once the kubelet has accepted a resize
 * that includes it ({@link Resizer.Answer}); one the kubelet defers or finds infeasible is refused with its words.
 * Shares that wait are booked together: one resize for all of them; when the kubelet refuses such a batch, its first
 * half is tried alone, and so on, so that one refusal costs at most a few resizes. Given-back shares shrink the
 * reservation in the next resize. One thread does the resizes; callers of {@link #book} wait for their answer.
 */
public final class PodReservation implements NodeBooking, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodReservation.class);

    /** What the resize of a batch came to, for the metric. */
    public enum Outcome {
        ACCEPTED,
        DEFERRED,
        INFEASIBLE,
        FAILED
    }

    private record Waiting(CpuMemory share, CompletableFuture<Optional<Decision>> answer) {}

    private final Resizer pod;
    private final Resizer.Timing timing;
    private final Map<AllocId, CpuMemory> held = new HashMap<>();
    private final LinkedHashMap<AllocId, Waiting> waiting = new LinkedHashMap<>();
    private final Map<Outcome, AtomicLong> resizes = new HashMap<>();
    private final Thread worker;
    private CpuMemory booked;
    private CpuMemory asked;
    private int batchLimit = Integer.MAX_VALUE;
    private long retryAt;
    private boolean closed;
    /** Whether what ran before the agent started is known ({@link #restore}): until then nothing held is a guess. */
    private boolean restored;

    PodReservation(Resizer pod, Resizer.Timing timing) {
        this.pod = pod;
        this.timing = timing;
        this.booked = pod.allocated();
        this.asked = booked;
        this.retryAt = System.nanoTime();
        for (Outcome o : Outcome.values()) {
            resizes.put(o, new AtomicLong());
        }
        this.worker = Thread.ofVirtual().name("drover-reservation").unstarted(this::run);
    }

    /**
     * Finds the agent's Pod and its {@code reservation} container, and starts booking on it.
     *
     * @throws IllegalStateException in one sentence when the Pod or the container is not there
     */
    public static PodReservation start(KubernetesClient client, String namespace, String name, Resizer.Timing timing) {
        PodReservation r = new PodReservation(PodResize.find(client, namespace, name, timing), timing);
        LOG.info(
                "nodeSharing resize: booking admitted CPU and memory on container {} of Pod {}/{}, which holds {}"
                        + " millicores and {} MB now",
                PodResize.CONTAINER,
                namespace,
                name,
                r.booked.cpuMillis(),
                r.booked.memoryMB());
        r.begin();
        return r;
    }

    /** Starts the thread that resizes. */
    void begin() {
        worker.start();
    }

    @Override
    public Optional<Decision> book(AllocId id, CpuMemory share) throws InterruptedException {
        CompletableFuture<Optional<Decision>> answer;
        synchronized (this) {
            CpuMemory had = held.getOrDefault(id, CpuMemory.ZERO);
            if (share.cpuMillis() <= had.cpuMillis() && share.memoryMB() <= had.memoryMB()) {
                if (!share.equals(had)) {
                    put(id, share);
                    notifyAll(); // the next resize gives it back
                }
                return Optional.empty();
            }
            if (closed) {
                return Optional.of(failed("the agent is stopping"));
            }
            answer = new CompletableFuture<>();
            waiting.put(id, new Waiting(share, answer));
            notifyAll();
        }
        try {
            return answer.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            synchronized (this) {
                waiting.remove(id);
            }
            throw e;
        }
    }

    @Override
    public synchronized void release(AllocId id) {
        if (held.remove(id) != null) {
            notifyAll();
        }
    }

    @Override
    public synchronized void restore(Map<AllocId, CpuMemory> shares) {
        shares.forEach(this::put);
        restored = true;
        retryAt = System.nanoTime();
        notifyAll();
    }

    /** What the kubelet has accepted on the reservation container now. */
    public synchronized CpuMemory booked() {
        return booked;
    }

    /** How many shares wait for the kubelet's answer now. */
    synchronized int waiting() {
        return waiting.size();
    }

    /** The resizes asked for so far, by what they came to. */
    public Map<Outcome, Long> resizes() {
        Map<Outcome, Long> out = new LinkedHashMap<>();
        resizes.forEach((o, n) -> out.put(o, n.get()));
        return out;
    }

    private void put(AllocId id, CpuMemory share) {
        if (share.equals(CpuMemory.ZERO)) {
            held.remove(id);
        } else {
            held.put(id, share);
        }
    }

    private void run() {
        try {
            while (true) {
                List<Map.Entry<AllocId, Waiting>> batch;
                CpuMemory target;
                synchronized (this) {
                    while (!closed && !due()) {
                        long waitMillis = !restored || total().equals(booked)
                                ? 0 // until told
                                : Math.max(1, (retryAt - System.nanoTime()) / 1_000_000);
                        wait(waitMillis);
                    }
                    if (closed) {
                        refuseWaiting();
                        return;
                    }
                    batch = waiting.entrySet().stream().limit(batchLimit).toList();
                    Map<AllocId, CpuMemory> after = new HashMap<>(held);
                    batch.forEach(e -> after.put(e.getKey(), e.getValue().share()));
                    target = sum(after);
                }
                Resizer.Answer answer = pod.resize(target);
                resizes.get(outcome(answer)).incrementAndGet();
                LOG.info(
                        "nodeSharing resize: {} millicores and {} MB for {} waiting allocation(s): {}",
                        target.cpuMillis(),
                        target.memoryMB(),
                        batch.size(),
                        answer.accepted() ? "accepted" : answer.reason() + ", " + answer.message());
                settle(batch, target, answer);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whether a resize is due: shares wait, or the last one asked is not what is held (a refused one is taken back at
     * once), or what the kubelet accepted is not what is held and it is time to try again.
     */
    private boolean due() {
        if (!restored) {
            return !waiting.isEmpty(); // the reservation found holds the restored allocations: not given back before
        }
        CpuMemory total = total();
        return !waiting.isEmpty()
                || !total.equals(asked)
                || (!total.equals(booked) && System.nanoTime() - retryAt >= 0);
    }

    private synchronized void settle(List<Map.Entry<AllocId, Waiting>> batch, CpuMemory target, Resizer.Answer a) {
        asked = target;
        if (a.accepted()) {
            booked = target;
            batchLimit = Integer.MAX_VALUE;
            for (Map.Entry<AllocId, Waiting> e : batch) {
                if (waiting.remove(e.getKey(), e.getValue())) {
                    put(e.getKey(), e.getValue().share());
                    e.getValue().answer().complete(Optional.empty());
                }
            }
            return;
        }
        if (batch.size() > 1 && a.refusedByKubelet()) {
            batchLimit = Math.max(1, batch.size() / 2); // the first half alone, the rest after
            return;
        }
        batchLimit = Integer.MAX_VALUE;
        for (Map.Entry<AllocId, Waiting> e : batch) {
            if (waiting.remove(e.getKey(), e.getValue())) {
                e.getValue().answer().complete(Optional.of(refusal(e.getValue().share(), a)));
            }
        }
        if (batch.isEmpty()) {
            LOG.warn(
                    "nodeSharing resize: the reservation of {} millicores and {} MB the running allocations hold was"
                            + " not booked ({}); tried again in {}",
                    target.cpuMillis(),
                    target.memoryMB(),
                    a.message(),
                    timing.retry());
        }
        retryAt = System.nanoTime() + timing.retry().toNanos(); // the next resize sets it back to what is held
    }

    /**
     * Why a share the kubelet did not accept is refused: {@code OutOfmemory} where its words name memory, else
     * {@code OutOfcpu}; a resize that failed is {@code ResizeFailed}.
     */
    private Decision refusal(CpuMemory share, Resizer.Answer a) {
        if (!a.refusedByKubelet()) {
            return failed(a.message());
        }
        String reason = a.message().contains("memory") && !a.message().contains(": cpu")
                ? NodeAdmission.OUT_OF_MEMORY
                : NodeAdmission.OUT_OF_CPU;
        return new Decision(
                false,
                reason,
                "The kubelet did not accept this allocation's requests (" + share.cpuMillis() + " millicores of CPU, "
                        + share.memoryMB() + " MB of memory) on the agent's Pod " + pod.name() + ": " + a.reason()
                        + ", " + UserText.cutEscaped(a.message(), 300),
                Map.of());
    }

    /** Every share still waiting is refused: the agent is stopping. Called holding the lock. */
    private void refuseWaiting() {
        waiting.values().forEach(w -> w.answer().complete(Optional.of(failed("the agent is stopping"))));
        waiting.clear();
    }

    private Decision failed(String why) {
        return new Decision(
                false,
                Resizer.RESIZE_FAILED,
                "The agent could not book this allocation's requests on its Pod " + pod.name() + ": "
                        + UserText.cutEscaped(why, 300),
                Map.of());
    }

    private static Outcome outcome(Resizer.Answer a) {
        if (a.accepted()) {
            return Outcome.ACCEPTED;
        }
        return switch (a.reason()) {
            case Resizer.DEFERRED -> Outcome.DEFERRED;
            case Resizer.INFEASIBLE -> Outcome.INFEASIBLE;
            default -> Outcome.FAILED;
        };
    }

    private CpuMemory total() {
        return sum(held);
    }

    private static CpuMemory sum(Map<AllocId, CpuMemory> shares) {
        CpuMemory s = CpuMemory.ZERO;
        for (CpuMemory c : shares.values()) {
            s = s.plus(c);
        }
        return s;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        worker.interrupt();
        try {
            worker.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            refuseWaiting();
        }
    }
}
