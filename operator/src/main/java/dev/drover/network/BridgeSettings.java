package dev.drover.network;

import dev.drover.common.UserText;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The node's bridge for {@code bridge} allocations: its name, and the IPv4 subnet whose addresses the allocations
 * lease. The default subnet, {@code 172.26.64.0/20}, is Nomad's: clear of the common Pod CIDRs (10.244/16, 10.42/16,
 * 192.168/16), the usual Service CIDR (10.96/12) and Docker's 172.17/16; a node whose networks overlap it names
 * another.
 */
public record BridgeSettings(String bridge, String subnet) {

    /** A Linux interface name: at most 15 characters, none of them {@code /}, space or {@code :}. */
    private static final Pattern BRIDGE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,14}");

    private static final Pattern CIDR = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})/(\\d{1,2})");

    /** Declared after the patterns its construction uses. */
    public static final BridgeSettings DEFAULT = new BridgeSettings("drover0", "172.26.64.0/20");

    public BridgeSettings {
        if (bridge == null || !BRIDGE.matcher(bridge).matches()) {
            throw new IllegalArgumentException("the bridge name " + UserText.quote(bridge) + " is no interface name"
                    + " (1 to 15 letters, digits, '_', '.', '-')");
        }
        Matcher m = subnet == null ? null : CIDR.matcher(subnet);
        if (m == null
                || !m.matches()
                || !octets(m)
                || Integer.parseInt(m.group(5)) < 8
                || Integer.parseInt(m.group(5)) > 28) {
            throw new IllegalArgumentException("the bridge subnet " + UserText.quote(subnet) + " is no IPv4 network"
                    + " of /8 to /28, such as 172.26.64.0/20");
        }
    }

    private static boolean octets(Matcher m) {
        for (int i = 1; i <= 4; i++) {
            if (Integer.parseInt(m.group(i)) > 255) {
                return false;
            }
        }
        return true;
    }
}
