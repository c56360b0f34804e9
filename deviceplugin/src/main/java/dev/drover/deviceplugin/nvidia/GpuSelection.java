package dev.drover.deviceplugin.nvidia;

import dev.drover.common.ConfigReader;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which NVIDIA GPUs a plugin manages, from its {@code devices} and {@code excludeDevices} settings: each entry
 * a GPU's index (as {@code nvidia-smi} numbers them) or a UUID ({@code GPU-...}, or {@code MIG-...} for one
 * MIG device). A GPU named by index or UUID brings its MIG devices with it. Without {@code devices} every GPU
 * is managed; {@code excludeDevices} then takes some away. A GPU not managed is neither counted on the Node nor
 * reserved, so that another device plugin (Kubernetes') can hand it out.
 *
 * @param include the entries of {@code devices}; empty when every GPU is managed
 * @param exclude the entries of {@code excludeDevices}
 */
public record GpuSelection(Optional<Set<String>> include, Set<String> exclude) {

    public static final String DEVICES = "devices";
    public static final String EXCLUDE = "excludeDevices";
    public static final GpuSelection ALL = new GpuSelection(Optional.empty(), Set.of());

    static final int MAX_ENTRIES = 1024;
    static final int MAX_INDEX = 1023;
    private static final Pattern INDEX = Pattern.compile("[0-9]{1,4}");
    private static final Pattern UUID = Pattern.compile("(GPU|MIG)-[A-Za-z0-9][A-Za-z0-9/_.:-]{0,123}");

    public GpuSelection {
        include = include.map(Set::copyOf);
        exclude = Set.copyOf(exclude);
    }

    /** One offered device as a selection sees it: its UUID, its GPU's index, and its GPU's UUID for a MIG device. */
    public record Candidate(String uuid, OptionalInt index, Optional<String> parentUuid) {

        public static Candidate whole(String uuid, int index) {
            return new Candidate(uuid, OptionalInt.of(index), Optional.empty());
        }
    }

    /** Reads both settings; problems (a value that is neither an index nor a UUID) go to {@code config}. */
    public static GpuSelection read(ConfigReader config) {
        List<String> devices = config.words(DEVICES);
        List<String> excluded = config.words(EXCLUDE);
        Optional<Set<String>> include = Optional.empty();
        if (devices != null) {
            if (devices.isEmpty()) {
                config.problem("config." + DEVICES + ": empty; leave it out to manage every GPU, or name"
                        + " at least one (an index such as 0, or a UUID such as GPU-8a3c...)");
            }
            include = Optional.of(entries(config, DEVICES, devices));
        }
        Set<String> exclude = excluded == null ? Set.of() : entries(config, EXCLUDE, excluded);
        return new GpuSelection(include, exclude);
    }

    private static Set<String> entries(ConfigReader config, String key, List<String> values) {
        if (values.size() > MAX_ENTRIES) {
            config.problem("config." + key + ": " + values.size() + " entries; at most " + MAX_ENTRIES);
            return Set.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < values.size(); i++) {
            String v = values.get(i).strip();
            boolean index = INDEX.matcher(v).matches() && Integer.parseInt(v) <= MAX_INDEX;
            if (index) {
                out.add(String.valueOf(Integer.parseInt(v))); // 007 is 7
            } else if (UUID.matcher(v).matches()) {
                out.add(v);
            } else {
                config.problem("config." + key + "[" + i + "]: " + UserText.quote(v) + " is neither a GPU index (0 to "
                        + MAX_INDEX + ", as nvidia-smi numbers them) nor a UUID (GPU-... or MIG-..., as nvidia-smi -L"
                        + " shows them)");
            }
        }
        return out;
    }

    public boolean managesAll() {
        return include.isEmpty() && exclude.isEmpty();
    }

    public boolean manages(Candidate c) {
        return include.map(names -> matches(names, c)).orElse(true) && !matches(exclude, c);
    }

    /** Entries that name none of {@code seen}: a typo, or a GPU gone from this host; worth a warning. */
    public List<String> unmatched(List<Candidate> seen) {
        List<String> out = new ArrayList<>();
        for (String entry : include.orElse(Set.of())) {
            if (seen.stream().noneMatch(c -> matches(Set.of(entry), c))) out.add(DEVICES + ": " + entry);
        }
        for (String entry : exclude) {
            if (seen.stream().noneMatch(c -> matches(Set.of(entry), c))) out.add(EXCLUDE + ": " + entry);
        }
        return out;
    }

    private static boolean matches(Set<String> names, Candidate c) {
        return names.contains(c.uuid())
                || c.parentUuid().map(names::contains).orElse(false)
                || (c.index().isPresent()
                        && names.contains(String.valueOf(c.index().getAsInt())));
    }
}
