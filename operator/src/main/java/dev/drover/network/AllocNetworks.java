package dev.drover.network;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocations' networks: {@link #setUp} makes one ({@code bridge}: a namespace, its loopback up, the bridge's
 * chain on {@code eth0}; {@code none}: a namespace with its loopback up; {@code host}: nothing), {@link #check} tells
 * whether one restored after an agent restart is still whole, {@link #tearDown} undoes one.
 *
 * <p>Safe for concurrent use: calls for different allocations run side by side (the plugins lock what they share);
 * calls for one allocation take turns. Namespaces are in {@code <dataDir>/netns}, host-local's leases in
 * {@code <dataDir>/cni/networks}, so both are the agent's own.
 */
public final class AllocNetworks {

    private static final Logger LOG = LoggerFactory.getLogger(AllocNetworks.class);

    /** An allocation id used as it is for a container id: letters, digits, {@code -}, {@code _}, {@code .}. */
    private static final Pattern PLAIN_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

    private static final int STRIPES = 256;

    /**
     * Bridge set-ups run one at a time on the node. Their plugins' iptables calls contend rather than overlap: 200
     * set up 32 at a time took 114 s, one at a time 47.5 s, each 0.24 s (docs/BENCHMARKS.md, Networks). Teardowns,
     * which gained from running together, are not bounded.
     */
    static final int BRIDGE_SETUPS_AT_ONCE = 1;

    private final NetNs namespaces;
    private final CniPlugins plugins;
    private final BridgeSettings settings;
    private final Path ipamDir;
    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    private final Semaphore bridgeSetups = new Semaphore(BRIDGE_SETUPS_AT_ONCE, true);

    /** Networks whose namespaces and leases are under {@code dataDir}, attached by {@code plugins}. */
    public AllocNetworks(Path dataDir, CniPlugins plugins, BridgeSettings settings) throws IOException {
        this.namespaces = NetNs.in(dataDir.resolve("netns"));
        this.plugins = plugins;
        this.settings = settings;
        this.ipamDir = dataDir.toAbsolutePath().normalize().resolve("cni").resolve("networks");
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock();
        }
    }

    /**
     * The CNI container id, and namespace name, of the allocation {@code allocId}: the id itself when it is 1 to 64
     * letters, digits, {@code -}, {@code _} and {@code .} (a Kubernetes UID is), else {@code h-} and 40 hex digits of
     * its SHA-256.
     */
    public static String containerId(String allocId) {
        if (PLAIN_ID.matcher(allocId).matches()) {
            return allocId;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(allocId.getBytes(StandardCharsets.UTF_8));
            return "h-" + HexFormat.of().formatHex(digest).substring(0, 40);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /**
     * Sets up the network of the allocation {@code allocId} in {@code mode}, its {@code ports} mapped (bridge only).
     * What a crashed earlier try left for this allocation is torn down first. A failure tears down what was made and
     * throws: a {@link CniException} names the plugin and what it said.
     */
    public AttachedNetwork setUp(String allocId, NetworkMode mode, List<PortMapping> ports) throws IOException {
        if (mode == NetworkMode.HOST) {
            return AttachedNetwork.HOST;
        }
        String id = containerId(allocId);
        ReentrantLock lock = lock(id);
        lock.lock();
        boolean permit = false;
        try {
            if (mode == NetworkMode.BRIDGE) {
                bridgeSetups.acquire();
                permit = true;
            }
            Path netns = namespaces.path(id);
            List<ObjectNode> chain = mode == NetworkMode.BRIDGE
                    ? NetworkConfigs.bridge(settings, ipamDir, List.copyOf(ports))
                    : List.of();
            if (namespaces.exists(netns) || Files.exists(netns)) {
                List<Attachment> stale =
                        new ArrayList<>(List.of(new Attachment("lo", List.of(NetworkConfigs.loopback()), null)));
                if (!chain.isEmpty()) {
                    stale.add(new Attachment("eth0", chain, null));
                }
                List<String> left = undo(new AttachedNetwork(mode, id, netns.toString(), null, stale));
                LOG.info(
                        "allocation {}: tore down what an earlier setup left ({})",
                        id,
                        left.isEmpty() ? "cleanly" : left);
            }
            namespaces.create(id);
            List<Attachment> made = new ArrayList<>();
            try {
                made.add(add(id, netns, "lo", List.of(NetworkConfigs.loopback()), made));
                if (!chain.isEmpty()) {
                    made.add(add(id, netns, "eth0", chain, made));
                }
                String ip = mode == NetworkMode.BRIDGE ? ipv4(made.getLast().result()) : null;
                return new AttachedNetwork(mode, id, netns.toString(), ip, made);
            } catch (IOException | RuntimeException e) {
                List<String> left = undo(new AttachedNetwork(mode, id, netns.toString(), null, made));
                for (String problem : left) {
                    e.addSuppressed(new IOException(problem));
                }
                throw e;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting to set up the network of " + id, e);
        } finally {
            if (permit) {
                bridgeSetups.release();
            }
            lock.unlock();
        }
    }

    /**
     * Checks that {@code attached} (restored from the store) is whole: its namespace is there, and each plugin's CHECK
     * passes. Throws saying what is wrong.
     */
    public void check(AttachedNetwork attached) throws IOException {
        if (attached.mode() == NetworkMode.HOST) {
            return;
        }
        Path netns = netnsOf(attached);
        ReentrantLock lock = lock(attached.containerId());
        lock.lock();
        try {
            if (!namespaces.exists(netns)) {
                throw new IOException("the network namespace " + netns + " of " + attached.containerId() + " is gone"
                        + " (a node reboot drops them)");
            }
            for (Attachment a : attached.attachments()) {
                for (ObjectNode plugin : a.plugins()) {
                    try {
                        plugins.invoke(
                                CniCommand.CHECK,
                                attached.containerId(),
                                netns,
                                a.ifName(),
                                NetworkConfigs.withPrevResult(plugin, a.result()));
                    } catch (CniException e) {
                        if (!ipv6CheckOfNoIpv6(e, a.result())) {
                            throw e;
                        }
                    }
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Undoes {@code attached}: each plugin's DEL, in reverse order, then the namespace removed. Best effort: every
     * step is tried even when one fails; the failures are logged and answered (empty: all undone). A second teardown
     * is harmless, and one whose namespace is gone still releases the lease and the rules.
     */
    public List<String> tearDown(AttachedNetwork attached) {
        if (attached.mode() == NetworkMode.HOST) {
            return List.of();
        }
        ReentrantLock lock = lock(attached.containerId());
        lock.lock();
        try {
            return undo(attached);
        } finally {
            lock.unlock();
        }
    }

    /** Runs ADD for each of {@code chain} on {@code ifName}; a failure is kept in {@code made} for the undo. */
    private Attachment add(String id, Path netns, String ifName, List<ObjectNode> chain, List<Attachment> made)
            throws CniException {
        ObjectNode result = null;
        List<ObjectNode> run = new ArrayList<>();
        try {
            for (ObjectNode plugin : chain) {
                run.add(plugin);
                result = plugins.invoke(
                        CniCommand.ADD, id, netns, ifName, NetworkConfigs.withPrevResult(plugin, result));
            }
        } catch (CniException e) {
            made.add(new Attachment(ifName, run, result)); // DEL each that ran, the failed one too
            throw e;
        }
        return new Attachment(ifName, chain, result);
    }

    private List<String> undo(AttachedNetwork attached) {
        List<String> problems = new ArrayList<>();
        Path netns;
        try {
            netns = netnsOf(attached);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
            return problems;
        }
        String id = attached.containerId();
        boolean standIn = false;
        try {
            for (Attachment a : attached.attachments()) {
                if (a.result() != null && !a.ifName().equals("lo")) {
                    if (!namespaces.exists(netns)) {
                        namespaces.create(id); // for the stand-in; removed below
                    }
                    StandIn.ensure(netns, a.ifName(), a.result()).ifPresent(problems::add);
                    standIn = true;
                }
            }
        } catch (IOException e) {
            problems.add("cannot make a namespace for the stand-in interface: " + e.getMessage());
        }
        List<Attachment> attachments = attached.attachments().reversed();
        for (Attachment a : attachments) {
            for (ObjectNode plugin : a.plugins().reversed()) {
                try {
                    Path target = standIn || namespaces.exists(netns) ? netns : null;
                    plugins.invoke(
                            CniCommand.DEL, id, target, a.ifName(), NetworkConfigs.withPrevResult(plugin, a.result()));
                } catch (CniException e) {
                    if (!(standIn && rulesAlreadyGone(e))) {
                        problems.add(e.getMessage());
                    }
                } catch (IOException e) {
                    problems.add("cannot read the mount table: " + e.getMessage());
                }
            }
        }
        try {
            namespaces.remove(netns);
        } catch (IOException e) {
            problems.add("cannot remove the network namespace " + netns + ": " + e.getMessage());
        }
        for (String p : problems) {
            LOG.warn("allocation network {}: teardown: {}", id, p);
        }
        return problems;
    }

    /** The namespace file of {@code attached}: always the one its container id names here, never another path. */
    private Path netnsOf(AttachedNetwork attached) {
        String id = attached.containerId();
        if (id == null || !PLAIN_ID.matcher(id).matches() && !id.matches("h-[0-9a-f]{40}")) {
            throw new IllegalArgumentException("not a container id of an allocation network: " + UserText.quote(id));
        }
        Path netns = namespaces.path(id);
        if (attached.netns() != null && !attached.netns().equals(netns.toString())) {
            throw new IllegalArgumentException("the allocation network " + id + " names the namespace "
                    + UserText.quote(attached.netns()) + ", not " + netns);
        }
        return netns;
    }

    /**
     * portmap 1.1.1's CHECK, finding ip6tables usable, checks the IPv4 mappings' chain in the IPv6 table too, where
     * it never is, and fails "could not check ipv6 dnat"; its IPv4 check passed before that. For an allocation with no
     * IPv6 address that failure says nothing.
     */
    private static boolean ipv6CheckOfNoIpv6(CniException e, ObjectNode result) {
        if (!e.plugin().equals("portmap") || !e.getMessage().contains("could not check ipv6 dnat") || result == null) {
            return false;
        }
        for (JsonNode ip : result.path("ips")) {
            if (ip.path("address").asText("").contains(":")) {
                return false;
            }
        }
        return true;
    }

    /**
     * The bridge plugin's DEL, finding a stand-in {@code eth0}, releases the lease and then deletes the masquerade
     * rules it names; where they are gone already (a second teardown, or a reboot flushed them) iptables-nft says
     * "Chain '…' does not exist", which the plugin does not take for "nothing to delete". Nothing is left then.
     */
    private static boolean rulesAlreadyGone(CniException e) {
        return e.plugin().equals("bridge")
                && e.getMessage().contains("Chain 'CNI-")
                && e.getMessage().contains("does not exist");
    }

    /** The first IPv4 address of a CNI result, without its prefix. */
    private static String ipv4(ObjectNode result) throws CniException {
        for (JsonNode ip : result.path("ips")) {
            String a = ip.path("address").asText("");
            if (a.matches("\\d{1,3}(\\.\\d{1,3}){3}/\\d{1,2}")) {
                return a.substring(0, a.indexOf('/'));
            }
        }
        throw new CniException(
                "bridge",
                0,
                "the bridge chain's result has no IPv4 address: " + UserText.cutEscaped(result.toString(), 300));
    }

    private ReentrantLock lock(String id) {
        return locks[Math.floorMod(id.hashCode(), STRIPES)];
    }
}
