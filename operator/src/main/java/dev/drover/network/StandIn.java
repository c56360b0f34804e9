package dev.drover.network;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A stand-in for an allocation's {@code eth0} that is gone, made before the bridge plugin's DEL. That DEL (1.1.1)
 * reads the addresses whose masquerade rules it removes from the interface itself, not from {@code prevResult}: with
 * the interface gone (its namespace lost to a reboot or removed by hand, or the veth deleted) it releases the lease
 * but leaves the allocation's {@code CNI-…} chain and its POSTROUTING rule behind, and that leftover then fails the
 * next DEL of the same container id. So an {@code eth0} with the ADD result's addresses (a veth whose
 * peer stays beside it: the veth module is there wherever the bridge plugin works, a dummy one may not be) is put where the veth
 * was, for DEL to find and delete. Runs {@code ip} in the allocation's namespace.
 */
final class StandIn {

    /** The stand-in's other end, in the same namespace: deleting the stand-in deletes it. */
    private static final String PEER = "standin-peer";

    private static final Duration LIMIT = Duration.ofSeconds(30);
    private static final Pattern ADDRESS = Pattern.compile("[0-9a-fA-F.:]{2,45}/\\d{1,3}");

    private StandIn() {}

    /**
     * Puts a stand-in {@code ifName} carrying {@code result}'s addresses in the namespace {@code netns}, unless an
     * interface of that name is there; what went wrong, if anything.
     */
    static Optional<String> ensure(Path netns, String ifName, ObjectNode result) {
        List<String> addresses = new ArrayList<>();
        for (JsonNode ip : result.path("ips")) {
            String a = ip.path("address").asText("");
            if (ADDRESS.matcher(a).matches()) {
                addresses.add(a);
            }
        }
        if (addresses.isEmpty()) {
            return Optional.empty();
        }
        try {
            BoundedProcess.Outcome made = ip(netns, "link", "add", ifName, "type", "veth", "peer", "name", PEER);
            if (made.exit() != 0) {
                return made.stderr().contains("File exists")
                        ? Optional.empty() // it is there: DEL finds the real one
                        : Optional.of("cannot make a stand-in " + ifName + ": "
                                + UserText.cutEscaped(made.stderr().strip(), 300));
            }
            for (String a : addresses) {
                BoundedProcess.Outcome o = ip(netns, "addr", "add", a, "dev", ifName);
                if (o.exit() != 0) {
                    return Optional.of("cannot give the stand-in " + ifName + " the address " + a + ": "
                            + UserText.cutEscaped(o.stderr().strip(), 300));
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("cannot run ip for a stand-in " + ifName + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while making a stand-in " + ifName);
        }
    }

    private static BoundedProcess.Outcome ip(Path netns, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("nsenter", "--net=" + netns, "--", "ip"));
        argv.addAll(List.of(args));
        return BoundedProcess.run(argv, Map.of("PATH", CniPlugins.path()), new byte[0], LIMIT, 64 * 1024);
    }
}
