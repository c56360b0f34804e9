package dev.drover.admission;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The CPU and memory that the Pods bound to a node hold, counted as kube-scheduler's NodeResourcesFit counts them
 * (the {@code PodRequests} helper of Kubernetes' {@code component-helpers}):
 *
 * <ul>
 *   <li>a Pod in phase {@code Succeeded} or {@code Failed} holds nothing;
 *   <li>a Pod holds the larger of what its containers run with (the sum of its containers' requests and its sidecars',
 *       the init containers with {@code restartPolicy: Always}) and what its init containers need while they start
 *       (for each, its own requests plus those of the sidecars started before it);
 *   <li>pod-level {@code spec.resources.requests}, where set for cpu or memory, take the place of that sum;
 *   <li>{@code spec.overhead} (the runtime class's) comes on top.
 * </ul>
 *
 * Only {@code requests} are read: the API server gives a container with limits but no requests requests equal to its
 * limits when the Pod is created, so a stored Pod has them. A resize in progress counts by the spec (the scheduler
 * also looks at the sizes the kubelet reports in the Pod's status), and resources other than cpu and memory are not
 * counted. A Pod without requests holds nothing (the scheduler's 100m/200MB defaults are for scoring, not for fit).
 * Each Pod's sum is kept exact and rounded up at the end: CPU to the millicore, memory to the byte. The caller picks
 * the Pods ({@code spec.nodeName} is not read). Pure: no I/O.
 */
public final class PodRequests {

    /**
     * What one Pod holds.
     *
     * @param pod         {@code namespace/name}
     * @param cpuMillis   thousandths of a core
     * @param memoryBytes bytes
     */
    public record Held(String pod, long cpuMillis, long memoryBytes) {}

    /**
     * What the Pods hold together.
     *
     * @param pods each Pod counted (finished ones are not), in the order given
     */
    public record Total(long cpuMillis, long memoryBytes, List<Held> pods) {

        public Total {
            pods = List.copyOf(pods);
        }

        /** The Pods counted. */
        public int count() {
            return pods.size();
        }

        /** The total in the node's units: memory rounded up to whole MB, since the Pods hold every byte of it. */
        public CpuMemory cpuMemory() {
            return new CpuMemory(cpuMillis, Math.ceilDiv(memoryBytes, 1L << 20));
        }
    }

    private static final String CPU = "cpu";
    private static final String MEMORY = "memory";

    /** An exact amount of CPU (cores) and memory (bytes) while a Pod's figures are added up. */
    private record Exact(BigDecimal cpu, BigDecimal memory) {

        static final Exact ZERO = new Exact(BigDecimal.ZERO, BigDecimal.ZERO);

        Exact plus(Exact o) {
            return new Exact(cpu.add(o.cpu), memory.add(o.memory));
        }

        Exact max(Exact o) {
            return new Exact(cpu.max(o.cpu), memory.max(o.memory));
        }
    }

    private PodRequests() {}

    /**
     * What {@code pods}, all bound to one node, hold together.
     *
     * @throws IllegalArgumentException naming the Pod, the container and the field of a request that is no quantity
     */
    public static Total of(List<Pod> pods) {
        long cpu = 0;
        long memory = 0;
        List<Held> held = new ArrayList<>();
        for (Pod pod : pods) {
            if (finished(pod)) {
                continue;
            }
            Held h = of(pod);
            try {
                cpu = Math.addExact(cpu, h.cpuMillis());
                memory = Math.addExact(memory, h.memoryBytes());
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException(
                        "The requests of the Pods bound to the node add up past " + Long.MAX_VALUE + " at Pod "
                                + h.pod() + ".",
                        e);
            }
            held.add(h);
        }
        return new Total(cpu, memory, held);
    }

    /**
     * What {@code pod} holds, whatever its phase.
     *
     * @throws IllegalArgumentException naming the Pod, the container and the field of a request that is no quantity
     */
    public static Held of(Pod pod) {
        String name = nameOf(pod);
        PodSpec spec = pod.getSpec();
        Exact sum = Exact.ZERO;
        if (spec != null) {
            sum = containers(name, spec);
            ResourceRequirements podLevel = spec.getResources();
            Map<String, Quantity> podRequests = podLevel == null ? null : podLevel.getRequests();
            if (podRequests != null) {
                String where = "spec.resources.requests";
                sum = new Exact(
                        podRequests.containsKey(CPU) ? amount(name, where, CPU, podRequests) : sum.cpu(),
                        podRequests.containsKey(MEMORY) ? amount(name, where, MEMORY, podRequests) : sum.memory());
            }
            sum = sum.plus(exact(name, "spec.overhead", spec.getOverhead()));
        }
        try {
            return new Held(name, KubeQuantity.millis(sum.cpu()), KubeQuantity.whole(sum.memory()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Pod " + name + "'s requests add up past " + Long.MAX_VALUE + " millicores or bytes.", e);
        }
    }

    /** The larger of what the containers and sidecars run with and what the init containers need while starting. */
    private static Exact containers(String pod, PodSpec spec) {
        Exact running = Exact.ZERO;
        for (Container c : listOf(spec.getContainers())) {
            running = running.plus(requests(pod, "container", c));
        }
        Exact sidecars = Exact.ZERO;
        Exact starting = Exact.ZERO;
        for (Container c : listOf(spec.getInitContainers())) {
            Exact own = requests(pod, "init container", c);
            if ("Always".equals(c.getRestartPolicy())) {
                running = running.plus(own);
                sidecars = sidecars.plus(own);
                starting = starting.max(sidecars);
            } else {
                starting = starting.max(own.plus(sidecars));
            }
        }
        return running.max(starting);
    }

    private static Exact requests(String pod, String kind, Container c) {
        ResourceRequirements r = c.getResources();
        return exact(pod, kind + " " + c.getName() + ": resources.requests", r == null ? null : r.getRequests());
    }

    private static Exact exact(String pod, String where, Map<String, Quantity> amounts) {
        if (amounts == null) {
            return Exact.ZERO;
        }
        return new Exact(
                amounts.containsKey(CPU) ? amount(pod, where, CPU, amounts) : BigDecimal.ZERO,
                amounts.containsKey(MEMORY) ? amount(pod, where, MEMORY, amounts) : BigDecimal.ZERO);
    }

    private static BigDecimal amount(String pod, String where, String resource, Map<String, Quantity> amounts) {
        Quantity q = amounts.get(resource);
        String text = q == null || q.getAmount() == null ? null : q.getAmount() + nullToEmpty(q.getFormat());
        try {
            return KubeQuantity.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Pod " + pod + ", " + where + "." + resource + " \"" + nullToEmpty(text) + "\" " + e.getMessage()
                            + ".",
                    e);
        }
    }

    private static boolean finished(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    private static String nameOf(Pod pod) {
        ObjectMeta m = pod.getMetadata();
        return m == null ? "?" : nullToEmpty(m.getNamespace()) + "/" + nullToEmpty(m.getName());
    }

    private static <T> List<T> listOf(List<T> list) {
        return list == null ? List.of() : list;
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
