package dev.drover.deviceplugin.fake;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.drover.common.Durations;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.Unit;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Fault;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Group;
import dev.drover.deviceplugin.fake.FakeDeviceFile.HealthWindow;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Instance;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads a fake device file (YAML, or JSON when the name ends in {@code .json}). Strict: a missing or
 * misspelt field is an error naming the file, the field path ({@code groups[0].instances[1].id}), the
 * value and what is expected.
 */
public final class FakeDeviceFileParser {

    private static final Pattern NUMBER_WITH_UNIT = Pattern.compile("(-?\\d+(?:\\.\\d+)?)\\s*([A-Za-z%]+)");
    private static final Set<String> STATS_FIELDS = Set.of(
            "gpuUtilPercent",
            "memUtilPercent",
            "memoryUsedMiB",
            "memoryTotalMiB",
            "temperatureC",
            "powerW",
            "eccErrorsCorrected",
            "eccErrorsUncorrected",
            "smClockMHz",
            "memoryClockMHz");

    private final String source;

    private FakeDeviceFileParser(String source) {
        this.source = source;
    }

    public static FakeDeviceFile parse(Path file) throws DevicePluginException {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new DevicePluginException(
                    "fake device file " + file + " cannot be read: " + e
                            + "; pass an existing file as --device-plugin fake:FILE",
                    e);
        }
        return parse(text, file.toString());
    }

    /** Parses {@code text}; {@code source} names it in errors and picks JSON when it ends in {@code .json}. */
    public static FakeDeviceFile parse(String text, String source) throws DevicePluginException {
        ObjectMapper mapper = source.endsWith(".json") ? new ObjectMapper() : new YAMLMapper();
        JsonNode root;
        try {
            root = mapper.readTree(text);
        } catch (JsonProcessingException e) {
            throw new DevicePluginException(
                    source + ": not valid " + (source.endsWith(".json") ? "JSON" : "YAML") + ": "
                            + e.getOriginalMessage(),
                    e);
        }
        return new FakeDeviceFileParser(source).file(root);
    }

    private FakeDeviceFile file(JsonNode root) throws DevicePluginException {
        if (root == null || !root.isObject()) {
            throw error("(top level)", root, "a mapping with 'groups' (and optionally 'faults')");
        }
        fields(root, "", Set.of("groups", "faults"));
        List<Group> groups = new ArrayList<>();
        JsonNode groupsNode = list(root, "", "groups", true);
        for (int i = 0; i < groupsNode.size(); i++) {
            groups.add(group(groupsNode.get(i), "groups[" + i + "]"));
        }
        checkUniqueIds(groups);
        List<Fault> faults = new ArrayList<>();
        JsonNode faultsNode = list(root, "", "faults", false);
        for (int i = 0; i < faultsNode.size(); i++) {
            faults.add(fault(faultsNode.get(i), "faults[" + i + "]"));
        }
        return new FakeDeviceFile(groups, faults);
    }

    private Group group(JsonNode node, String path) throws DevicePluginException {
        object(node, path);
        fields(node, path, Set.of("vendor", "type", "model", "attributes", "instances"));
        String vendor = requiredText(node, path, "vendor");
        String type = requiredText(node, path, "type");
        String model = requiredText(node, path, "model");
        Map<String, AttributeValue> attributes = new LinkedHashMap<>();
        JsonNode attrs = node.get("attributes");
        if (attrs != null && !attrs.isNull()) {
            object(attrs, path + ".attributes");
            for (Map.Entry<String, JsonNode> e : attrs.properties()) {
                attributes.put(e.getKey(), attribute(e.getValue(), path + ".attributes." + e.getKey()));
            }
        }
        JsonNode instancesNode = list(node, path, "instances", true);
        if (instancesNode.isEmpty()) {
            throw error(path + ".instances", null, "at least one instance");
        }
        List<Instance> instances = new ArrayList<>();
        for (int i = 0; i < instancesNode.size(); i++) {
            instances.add(instance(instancesNode.get(i), path + ".instances[" + i + "]"));
        }
        return new Group(vendor, type, model, attributes, instances);
    }

    private Instance instance(JsonNode node, String path) throws DevicePluginException {
        object(node, path);
        fields(
                node,
                path,
                Set.of(
                        "id",
                        "healthy",
                        "healthDescription",
                        "pciBusId",
                        "gpuIndex",
                        "migParent",
                        "gpuInstanceId",
                        "stats",
                        "unhealthy"));
        String id = requiredText(node, path, "id");
        boolean healthy = true;
        JsonNode h = node.get("healthy");
        if (h != null) {
            if (!h.isBoolean()) throw error(path + ".healthy", h, "true or false");
            healthy = h.booleanValue();
        }
        String description = optionalText(node, path, "healthDescription").orElse("");
        Optional<String> pci = optionalText(node, path, "pciBusId");
        Optional<DeviceInstance.GpuSlot> gpu = gpuSlot(node, path, id);
        Optional<InstanceStats> stats = Optional.empty();
        JsonNode s = node.get("stats");
        if (s != null && !s.isNull()) {
            stats = Optional.of(stats(s, path + ".stats", id));
        }
        List<HealthWindow> windows = new ArrayList<>();
        JsonNode w = list(node, path, "unhealthy", false);
        for (int i = 0; i < w.size(); i++) {
            String wp = path + ".unhealthy[" + i + "]";
            JsonNode win = w.get(i);
            object(win, wp);
            fields(win, wp, Set.of("from", "until", "reason"));
            Duration from = optionalDuration(win, wp, "from").orElse(Duration.ZERO);
            Optional<Duration> until = optionalDuration(win, wp, "until");
            if (until.isPresent() && until.get().compareTo(from) <= 0) {
                throw error(wp + ".until", win.get("until"), "a time after 'from' (" + win.get("from") + ")");
            }
            windows.add(new HealthWindow(
                    from, until, optionalText(win, wp, "reason").orElse("unhealthy (scripted)")));
        }
        return new Instance(id, healthy, description, pci, gpu, stats, windows);
    }

    /** gpuIndex, and for a MIG device migParent (its GPU's UUID) with gpuInstanceId; none of them: empty. */
    private Optional<DeviceInstance.GpuSlot> gpuSlot(JsonNode node, String path, String id)
            throws DevicePluginException {
        OptionalInt index = optionalSmallInt(node, path, "gpuIndex");
        Optional<String> parent = optionalText(node, path, "migParent");
        OptionalInt instance = optionalSmallInt(node, path, "gpuInstanceId");
        if (parent.isPresent() != instance.isPresent()) {
            String missing = parent.isPresent() ? "gpuInstanceId" : "migParent";
            throw error(
                    path + "." + missing,
                    null,
                    "given with " + (parent.isPresent() ? "migParent" : "gpuInstanceId")
                            + " (a MIG device names both)");
        }
        if (index.isEmpty()) {
            if (parent.isPresent()) throw error(path + ".gpuIndex", null, "given with migParent (its GPU's index)");
            return Optional.empty();
        }
        return Optional.of(new DeviceInstance.GpuSlot(index.getAsInt(), parent.orElse(id), instance));
    }

    private OptionalInt optionalSmallInt(JsonNode node, String path, String field) throws DevicePluginException {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) return OptionalInt.empty();
        if (!v.isIntegralNumber() || v.asLong() < 0 || v.asLong() > 1023) {
            throw error(path + "." + field, v, "a whole number from 0 to 1023");
        }
        return OptionalInt.of(v.intValue());
    }

    private InstanceStats stats(JsonNode node, String path, String id) throws DevicePluginException {
        object(node, path);
        fields(node, path, STATS_FIELDS);
        InstanceStats.Builder b = InstanceStats.builder(id, Instant.EPOCH);
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            JsonNode v = e.getValue();
            String field = path + "." + e.getKey();
            if (!v.isNumber() || v.asDouble() < 0) throw error(field, v, "a number, 0 or more");
            boolean whole = v.isIntegralNumber();
            switch (e.getKey()) {
                case "gpuUtilPercent" -> b.gpuUtilPercent(v.asDouble());
                case "memUtilPercent" -> b.memUtilPercent(v.asDouble());
                case "temperatureC" -> b.temperatureC(v.asDouble());
                case "powerW" -> b.powerW(v.asDouble());
                default -> {
                    if (!whole) throw error(field, v, "a whole number");
                    long n = v.asLong();
                    switch (e.getKey()) {
                        case "memoryUsedMiB" -> b.memoryUsedMiB(n);
                        case "memoryTotalMiB" -> b.memoryTotalMiB(n);
                        case "eccErrorsCorrected" -> b.eccErrorsCorrected(n);
                        case "eccErrorsUncorrected" -> b.eccErrorsUncorrected(n);
                        case "smClockMHz" -> b.smClockMHz(n);
                        default -> b.memoryClockMHz(n);
                    }
                }
            }
        }
        return b.build();
    }

    private Fault fault(JsonNode node, String path) throws DevicePluginException {
        object(node, path);
        fields(node, path, Set.of("fault", "call", "afterCalls", "from", "until", "duration", "output", "message"));
        FakeDeviceFile.Kind kind = choice(node, path, "fault", FakeDeviceFile.Kind.class, null);
        FakeDeviceFile.Call call =
                choice(node, path, "call", FakeDeviceFile.Call.class, FakeDeviceFile.Call.FINGERPRINT);
        int afterCalls = 0;
        JsonNode ac = node.get("afterCalls");
        if (ac != null) {
            if (!ac.canConvertToInt() || !ac.isIntegralNumber() || ac.intValue() < 0) {
                throw error(path + ".afterCalls", ac, "a whole number, 0 or more");
            }
            afterCalls = ac.intValue();
        }
        Duration from = optionalDuration(node, path, "from").orElse(Duration.ZERO);
        Optional<Duration> until = optionalDuration(node, path, "until");
        if (until.isPresent() && until.get().compareTo(from) <= 0) {
            throw error(path + ".until", node.get("until"), "a time after 'from'");
        }
        Optional<Duration> duration = optionalDuration(node, path, "duration");
        if (duration.isPresent() && kind != FakeDeviceFile.Kind.HANG) {
            throw error(path + ".duration", node.get("duration"), "no duration: only a hang lasts");
        }
        FakeDeviceFile.InvalidOutput output = choice(
                node, path, "output", FakeDeviceFile.InvalidOutput.class, FakeDeviceFile.InvalidOutput.DUPLICATE_IDS);
        if (kind == FakeDeviceFile.Kind.INVALID && call != FakeDeviceFile.Call.FINGERPRINT) {
            throw error(path + ".call", node.get("call"), "fingerprint: only a fingerprint can be invalid");
        }
        String message = optionalText(node, path, "message")
                .orElse("scripted " + kind.name().toLowerCase(Locale.ROOT));
        return new Fault(kind, call, afterCalls, from, until, duration, output, message);
    }

    private AttributeValue attribute(JsonNode v, String path) throws DevicePluginException {
        if (v.isBoolean()) return AttributeValue.bool(v.booleanValue());
        if (v.isIntegralNumber()) return AttributeValue.integer(v.longValue(), Unit.NONE);
        if (v.isNumber()) return AttributeValue.decimal(v.doubleValue(), Unit.NONE);
        if (!v.isTextual())
            throw error(path, v, "text, a number (optionally with a unit, e.g. '15360 MiB') or a boolean");
        String text = v.textValue().strip();
        Matcher m = NUMBER_WITH_UNIT.matcher(text);
        if (!m.matches()) return AttributeValue.text(text);
        Optional<Unit> unit = Unit.ofSymbol(m.group(2));
        if (unit.isEmpty()) {
            throw error(
                    path,
                    v,
                    "a known unit after the number: "
                            + Arrays.stream(Unit.values())
                                    .filter(u -> u != Unit.NONE)
                                    .map(Unit::symbol)
                                    .collect(Collectors.joining(", ")));
        }
        return m.group(1).contains(".")
                ? AttributeValue.decimal(Double.parseDouble(m.group(1)), unit.get())
                : AttributeValue.integer(Long.parseLong(m.group(1)), unit.get());
    }

    private void checkUniqueIds(List<Group> groups) throws DevicePluginException {
        Map<String, String> firstAt = new HashMap<>();
        for (int g = 0; g < groups.size(); g++) {
            List<Instance> instances = groups.get(g).instances();
            for (int i = 0; i < instances.size(); i++) {
                String at = "groups[" + g + "].instances[" + i + "].id";
                String previous = firstAt.putIfAbsent(instances.get(i).id(), at);
                if (previous != null) {
                    throw new DevicePluginException(
                            source + ": " + at + ": '" + instances.get(i).id() + "' is already used at " + previous
                                    + "; instance IDs must be unique on the host");
                }
            }
        }
    }

    private <E extends Enum<E>> E choice(JsonNode node, String path, String field, Class<E> type, E fallback)
            throws DevicePluginException {
        JsonNode v = node.get(field);
        String allowed = Arrays.stream(type.getEnumConstants())
                .map(FakeDeviceFileParser::spelling)
                .collect(Collectors.joining(", "));
        if (v == null || v.isNull()) {
            if (fallback == null) throw error(path + "." + field, null, "one of " + allowed);
            return fallback;
        }
        if (v.isTextual()) {
            for (E e : type.getEnumConstants()) {
                if (spelling(e).equals(v.textValue())) return e;
            }
        }
        throw error(path + "." + field, v, "one of " + allowed);
    }

    private static String spelling(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private Optional<Duration> optionalDuration(JsonNode node, String path, String field) throws DevicePluginException {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) return Optional.empty();
        if (v.isTextual()) {
            try {
                return Optional.of(Durations.parse(v.textValue()));
            } catch (IllegalArgumentException e) {
                throw new DevicePluginException(source + ": " + path + "." + field + ": " + e.getMessage());
            }
        }
        throw error(path + "." + field, v, "a duration with a unit, e.g. 500ms, 10s, 2m");
    }

    private String requiredText(JsonNode node, String path, String field) throws DevicePluginException {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) throw error(path + "." + field, null, "a non-empty string");
        if (!v.isTextual() || v.textValue().isBlank()) throw error(path + "." + field, v, "a non-empty string");
        return v.textValue();
    }

    private Optional<String> optionalText(JsonNode node, String path, String field) throws DevicePluginException {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) return Optional.empty();
        if (!v.isTextual()) throw error(path + "." + field, v, "a string");
        return Optional.of(v.textValue());
    }

    private JsonNode list(JsonNode node, String path, String field, boolean required) throws DevicePluginException {
        JsonNode v = node.get(field);
        String at = path.isEmpty() ? field : path + "." + field;
        if (v == null || v.isNull()) {
            if (required) throw error(at, null, "a list");
            return new ObjectMapper().createArrayNode();
        }
        if (!v.isArray()) throw error(at, v, "a list");
        return v;
    }

    private void object(JsonNode node, String path) throws DevicePluginException {
        if (node == null || !node.isObject()) throw error(path, node, "a mapping");
    }

    private void fields(JsonNode node, String path, Set<String> known) throws DevicePluginException {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!known.contains(name)) {
                throw new DevicePluginException(
                        source + ": " + (path.isEmpty() ? "" : path + ".") + name + ": unknown field; known here: "
                                + known.stream().sorted().collect(Collectors.joining(", ")));
            }
        }
    }

    private DevicePluginException error(String field, JsonNode value, String expected) {
        String got = value == null || value.isNull()
                ? "missing"
                : "'" + (value.isTextual() ? value.textValue() : value) + "'";
        return new DevicePluginException(source + ": " + field + " is " + got + "; expected " + expected);
    }
}
