package dev.drover.deviceplugin.fake;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Group;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Instance;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The CDI spec the fake plugin writes for its devices, so that a container task reserving a fake GPU is given a real
 * device node, end to end, on a host without one. Kind {@value #KIND}; each instance whose ID is a valid CDI device
 * name is a device of that name, its node {@code /dev/fake-<type><n>} (the {@code n}th managed instance of its
 * group's type, from 0) made from {@value #HOST_NODE}, and its variable {@code FAKE_<TYPE>_<n>} set to its ID; the
 * spec's own edits set {@code DROVER_FAKE_CDI=1} in every container given one of its devices.
 */
final class FakeCdiSpec {

    static final String KIND = "fake.drover.dev/device";
    /** The spec's file in the configured directory. */
    static final String FILE = "drover-fake.json";
    /** The host's device file each fake device node is made from: every host has it, reading it hurts nothing. */
    static final String HOST_NODE = "/dev/null";

    private static final Pattern DEVICE_NAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.:-]{0,126}[A-Za-z0-9])?");
    private static final ObjectMapper JSON = new ObjectMapper();

    private FakeCdiSpec() {}

    /**
     * The CDI names of the instances the spec describes, by instance ID, for {@code file} less {@code unmanaged}.
     */
    static Map<String, String> names(FakeDeviceFile file, Set<String> unmanaged) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Group g : file.groups()) {
            for (Instance i : g.instances()) {
                if (!unmanaged.contains(i.id()) && DEVICE_NAME.matcher(i.id()).matches()) {
                    out.put(i.id(), KIND + "=" + i.id());
                }
            }
        }
        return out;
    }

    /** Writes the spec into {@code dir}, replacing the one there at once (a reader never sees half of it). */
    static void write(Path dir, FakeDeviceFile file, Set<String> unmanaged) throws DevicePluginException {
        ObjectNode spec = JsonNodeFactory.instance.objectNode();
        spec.put("cdiVersion", "0.6.0").put("kind", KIND);
        spec.putObject("containerEdits").putArray("env").add("DROVER_FAKE_CDI=1");
        ArrayNode devices = spec.putArray("devices");
        Map<String, Integer> perType = new HashMap<>();
        Map<String, String> named = names(file, unmanaged);
        for (Group g : file.groups()) {
            String type = g.type().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
            for (Instance i : g.instances()) {
                if (!named.containsKey(i.id())) {
                    continue;
                }
                int n = perType.merge(type, 1, Integer::sum) - 1;
                ObjectNode edits = devices.addObject().put("name", i.id()).putObject("containerEdits");
                edits.putArray("env").add("FAKE_" + type.toUpperCase(Locale.ROOT) + "_" + n + "=" + i.id());
                edits.putArray("deviceNodes")
                        .addObject()
                        .put("path", "/dev/fake-" + type + n)
                        .put("hostPath", HOST_NODE)
                        .put("permissions", "rw");
            }
        }
        try {
            Files.createDirectories(dir);
            Path tmp = dir.resolve("." + FILE + ".tmp");
            Files.writeString(
                    tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(spec), StandardCharsets.UTF_8);
            Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new DevicePluginException(
                    "device plugin fake: cannot write its CDI spec into " + dir + ": " + e.getMessage());
        }
    }
}
