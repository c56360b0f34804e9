package dev.drover.agent;

import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Fingerprint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What changed between two fingerprints of one plugin, instance by instance, as {@code drover-agent devices --watch}
 * prints it: an instance that appeared or went, one whose health changed, one whose group or place changed, and the
 * plugin losing or finding its devices.
 */
final class FingerprintChanges {

    enum Kind {
        /** An instance that was not there before. */
        ADDED,
        /** An instance that is gone. */
        REMOVED,
        /** An instance whose health or health description changed. */
        HEALTH,
        /** An instance now in another group (model, attributes) or at another place (PCI bus, GPU slot). */
        CHANGED,
        /** The plugin's reason for seeing no devices appeared, changed or went ({@code detail} empty: it went). */
        AVAILABILITY;

        /** The name JSON output gives it. */
        String json() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One change.
     *
     * @param group    the instance's group ({@code vendor/type/model}), now or, for a removed one, before; empty for
     *                 {@link Kind#AVAILABILITY}
     * @param instance the instance now, or, for a removed one, before; null for {@link Kind#AVAILABILITY}
     * @param detail   what changed, for a person: the health before for {@link Kind#HEALTH}, the unavailable reason for
     *                 {@link Kind#AVAILABILITY}
     */
    record Change(Kind kind, String group, DeviceInstance instance, String detail) {}

    private FingerprintChanges() {}

    private record Placed(DeviceGroup group, DeviceInstance instance) {}

    /** Every change from {@code before} to {@code now}, in the order of their instances in {@code now}, then removals. */
    static List<Change> between(Fingerprint before, Fingerprint now) {
        List<Change> out = new ArrayList<>();
        if (!before.unavailableReason().equals(now.unavailableReason())) {
            out.add(new Change(
                    Kind.AVAILABILITY, "", null, now.unavailableReason().orElse("")));
        }
        Map<String, Placed> was = index(before);
        Map<String, Placed> is = index(now);
        for (Placed p : is.values()) {
            Placed old = was.get(p.instance().id());
            DeviceInstance i = p.instance();
            if (old == null) {
                out.add(new Change(Kind.ADDED, p.group().id(), i, ""));
                continue;
            }
            DeviceInstance o = old.instance();
            if (o.healthy() != i.healthy() || !o.healthDescription().equals(i.healthDescription())) {
                out.add(new Change(Kind.HEALTH, p.group().id(), i, health(o)));
            }
            if (!sameGroup(old.group(), p.group())
                    || !o.pciBusId().equals(i.pciBusId())
                    || !o.gpu().equals(i.gpu())) {
                out.add(new Change(
                        Kind.CHANGED, p.group().id(), i, "was in " + old.group().id()));
            }
        }
        for (Placed p : was.values()) {
            if (!is.containsKey(p.instance().id())) {
                out.add(new Change(Kind.REMOVED, p.group().id(), p.instance(), ""));
            }
        }
        return out;
    }

    /** {@code healthy}, or {@code unhealthy: DESCRIPTION}: how an instance's health reads. */
    static String health(DeviceInstance i) {
        String state = i.healthy() ? "healthy" : "unhealthy";
        return i.healthDescription().isEmpty() ? state : state + ": " + i.healthDescription();
    }

    private static boolean sameGroup(DeviceGroup a, DeviceGroup b) {
        return a.id().equals(b.id()) && a.attributes().equals(b.attributes());
    }

    private static Map<String, Placed> index(Fingerprint fp) {
        Map<String, Placed> out = new LinkedHashMap<>();
        for (DeviceGroup g : fp.groups()) {
            for (DeviceInstance i : g.instances()) {
                out.putIfAbsent(Objects.requireNonNull(i.id()), new Placed(g, i));
            }
        }
        return out;
    }
}
