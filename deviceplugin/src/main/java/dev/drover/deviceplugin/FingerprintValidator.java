package dev.drover.deviceplugin;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The rules every fingerprint must keep before a device manager uses it: no empty vendor, type, model or
 * instance ID, and no instance ID twice (across all groups, since reservations name instances by ID alone).
 * A fingerprint that breaks any rule is rejected whole: using the valid part would advertise a node that
 * changes shape depending on which entry was broken.
 */
public final class FingerprintValidator {

    private FingerprintValidator() {}

    /** Every broken rule, in order, each naming the group and field; empty when the fingerprint is valid. */
    public static List<String> problems(Fingerprint fingerprint) {
        List<String> problems = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Set<String> reported = new HashSet<>();
        List<DeviceGroup> groups = fingerprint.groups();
        for (int g = 0; g < groups.size(); g++) {
            DeviceGroup group = groups.get(g);
            String where = "groups[" + g + "]";
            if (group.vendor().isBlank()) problems.add(where + ".vendor is empty");
            if (group.type().isBlank()) problems.add(where + ".type is empty");
            if (group.model().isBlank()) problems.add(where + ".model is empty");
            List<DeviceInstance> instances = group.instances();
            for (int i = 0; i < instances.size(); i++) {
                String id = instances.get(i).id();
                if (id.isBlank()) {
                    problems.add(where + ".instances[" + i + "].id is empty");
                } else if (!seen.add(id) && reported.add(id)) {
                    problems.add("instance id " + id + " appears more than once");
                }
            }
        }
        return problems;
    }

    /** Returns the fingerprint when it is valid; otherwise throws with every problem in the message. */
    public static Fingerprint validate(String pluginName, Fingerprint fingerprint) throws InvalidFingerprintException {
        List<String> problems = problems(fingerprint);
        if (!problems.isEmpty()) {
            throw new InvalidFingerprintException(pluginName, problems);
        }
        return fingerprint;
    }
}
