package dev.drover.devices.cdi;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.drover.common.UserText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a CDI spec file (JSON, or YAML when its name ends in {@code .yaml} or {@code .yml}) and checks it as hostile
 * input: a regular file, never a symbolic link, of at most {@link #MAX_FILE_BYTES}; bounded counts of devices and
 * edits; names, paths, modes and mount options checked; edits Drover cannot apply ({@code additionalGids},
 * {@code intelRdt}) refused rather than skipped, since a container given half its device would fail in ways hard to
 * trace. Anything wrong refuses the whole file, naming the field and the value.
 */
public final class CdiSpecParser {

    public static final int MAX_FILE_BYTES = 1 << 20;
    static final int MAX_DEVICES = 1024;
    static final int MAX_EDITS = 256;
    static final int MAX_HOOKS = 32;
    static final int MAX_ARGS = 64;
    static final int MAX_STRING = 4096;

    /** Bind mount options a spec may ask for; anything else (a propagation to the host, a filesystem's) is refused. */
    static final Set<String> MOUNT_OPTIONS =
            Set.of("bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec", "private", "rprivate", "slave", "rslave");

    static final Set<String> HOOK_NAMES =
            Set.of("prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop");

    private static final Set<String> EDIT_KEYS = Set.of("env", "deviceNodes", "mounts", "hooks");
    private static final Pattern VERSION = Pattern.compile("[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,255}");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private CdiSpecParser() {}

    /** Whether {@code file}'s name makes it a spec file: {@code .json}, {@code .yaml} or {@code .yml}. */
    public static boolean isSpecFile(Path file) {
        String name = file.getFileName().toString();
        return !name.startsWith(".") && (name.endsWith(".json") || name.endsWith(".yaml") || name.endsWith(".yml"));
    }

    /** Reads {@code file}, which must be a regular file (a symbolic link is refused) of at most 1 MiB. */
    public static CdiSpec parse(Path file) throws CdiException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new CdiException("CDI spec " + file + " cannot be read: " + e.getMessage());
        }
        if (attrs.isSymbolicLink()) {
            throw new CdiException("CDI spec " + file + " is a symbolic link: only regular files are read");
        }
        if (!attrs.isRegularFile()) {
            throw new CdiException("CDI spec " + file + " is not a regular file");
        }
        if (attrs.size() > MAX_FILE_BYTES) {
            throw new CdiException("CDI spec " + file + " is " + attrs.size() + " bytes, more than the "
                    + MAX_FILE_BYTES + " allowed");
        }
        byte[] bytes;
        // O_NOFOLLOW: the file cannot be swapped for a link between the look and the read
        try (SeekableByteChannel ch =
                        Files.newByteChannel(file, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
                InputStream in = Channels.newInputStream(ch)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                if (out.size() > MAX_FILE_BYTES) {
                    throw new CdiException("CDI spec " + file + " grew past " + MAX_FILE_BYTES + " bytes while read");
                }
            }
            bytes = out.toByteArray();
        } catch (IOException e) {
            throw new CdiException("CDI spec " + file + " cannot be read: " + e.getMessage());
        }
        String name = file.getFileName().toString();
        return parse(
                new String(bytes, StandardCharsets.UTF_8),
                file.toString(),
                name.endsWith(".yaml") || name.endsWith(".yml"));
    }

    /** Reads a spec's text; {@code source} names it in messages. */
    public static CdiSpec parse(String text, String source, boolean yaml) throws CdiException {
        if (text.length() > MAX_FILE_BYTES) {
            throw new CdiException("CDI spec " + source + " is longer than " + MAX_FILE_BYTES + " bytes");
        }
        JsonNode root;
        try {
            root = (yaml ? YAML : JSON).readTree(text);
        } catch (JacksonException e) {
            throw new CdiException("CDI spec " + source + " is not valid " + (yaml ? "YAML" : "JSON") + ": "
                    + UserText.cutEscaped(e.getOriginalMessage(), 300));
        }
        Fields f = new Fields(source);
        if (root == null || !root.isObject()) {
            throw f.fail("the file", "must be an object with cdiVersion, kind and devices");
        }
        String version = f.text(root, "cdiVersion", true);
        if (!VERSION.matcher(version).matches()) {
            throw f.fail("cdiVersion", UserText.quote(version) + " is not a version (0.6.0)");
        }
        String kind = f.text(root, "kind", true);
        if (!CdiNames.isKind(kind)) {
            throw f.fail("kind", UserText.quote(kind) + " is not vendor/class (nvidia.com/gpu)");
        }
        JsonNode devices = root.get("devices");
        if (devices == null || !devices.isArray() || devices.isEmpty()) {
            throw f.fail("devices", "must be a list of at least one device");
        }
        if (devices.size() > MAX_DEVICES) {
            throw f.fail("devices", devices.size() + " devices, more than the " + MAX_DEVICES + " allowed");
        }
        Map<String, ContainerEdits> byName = new LinkedHashMap<>();
        for (int i = 0; i < devices.size(); i++) {
            String at = "devices[" + i + "]";
            JsonNode d = devices.get(i);
            if (!d.isObject()) {
                throw f.fail(at, "must be an object with name and containerEdits");
            }
            String name = f.text(d, at + ".name", "name", true);
            if (!CdiNames.isDeviceName(name)) {
                throw f.fail(
                        at + ".name",
                        UserText.quote(name) + " is not a CDI device name (letters, digits, _ . : -; at most 128)");
            }
            if (byName.containsKey(name)) {
                throw f.fail(at + ".name", UserText.quote(name) + " appears more than once");
            }
            JsonNode edits = d.get("containerEdits");
            if (edits == null || !edits.isObject()) {
                throw f.fail(at + ".containerEdits", "is required");
            }
            byName.put(name, edits(f, edits, at + ".containerEdits"));
        }
        JsonNode top = root.get("containerEdits");
        ContainerEdits common = top == null || top.isNull() ? ContainerEdits.NONE : edits(f, top, "containerEdits");
        return new CdiSpec(source, version, kind, byName, common);
    }

    private static ContainerEdits edits(Fields f, JsonNode node, String at) throws CdiException {
        if (!node.isObject()) {
            throw f.fail(at, "must be an object");
        }
        for (var e : node.properties()) {
            if (!EDIT_KEYS.contains(e.getKey())) {
                throw f.fail(
                        at + "." + UserText.bare(e.getKey()),
                        "is not an edit Drover applies (env, deviceNodes, mounts, hooks): the spec is refused rather"
                                + " than applied in part");
            }
        }
        List<String> env = new ArrayList<>();
        for (JsonNode e : f.list(node, at, "env", MAX_EDITS)) {
            env.add(env(f, e, at + ".env[" + env.size() + "]"));
        }
        List<CdiDeviceNode> nodes = new ArrayList<>();
        for (JsonNode d : f.list(node, at, "deviceNodes", MAX_EDITS)) {
            nodes.add(deviceNode(f, d, at + ".deviceNodes[" + nodes.size() + "]"));
        }
        List<CdiMount> mounts = new ArrayList<>();
        for (JsonNode m : f.list(node, at, "mounts", MAX_EDITS)) {
            mounts.add(mount(f, m, at + ".mounts[" + mounts.size() + "]"));
        }
        List<CdiHook> hooks = new ArrayList<>();
        for (JsonNode h : f.list(node, at, "hooks", MAX_HOOKS)) {
            hooks.add(hook(f, h, at + ".hooks[" + hooks.size() + "]"));
        }
        return new ContainerEdits(env, nodes, mounts, hooks);
    }

    private static String env(Fields f, JsonNode e, String at) throws CdiException {
        String kv = f.string(e, at);
        int eq = kv.indexOf('=');
        if (eq < 1 || !ENV_NAME.matcher(kv.substring(0, eq)).matches()) {
            throw f.fail(at, UserText.quote(kv) + " is not NAME=value");
        }
        return kv;
    }

    private static CdiDeviceNode deviceNode(Fields f, JsonNode d, String at) throws CdiException {
        if (!d.isObject()) {
            throw f.fail(at, "must be an object with a path");
        }
        String path = f.path(d, at, "path", true);
        if (!path.startsWith("/dev/")) {
            throw f.fail(at + ".path", UserText.quote(path) + " is not under /dev/");
        }
        String hostPath = f.path(d, at, "hostPath", false);
        String type = f.text(d, at + ".type", "type", false);
        Character t = null;
        if (type != null) {
            if (!Set.of("c", "b", "u").contains(type)) {
                throw f.fail(at + ".type", UserText.quote(type) + " is not c, u (character) or b (block)");
            }
            t = type.equals("b") ? 'b' : 'c';
        }
        Long major = f.number(d, at, "major", 0xfffffffL);
        Long minor = f.number(d, at, "minor", 0xfffffffL);
        Long mode = f.number(d, at, "fileMode", 07777);
        String permissions = f.text(d, at + ".permissions", "permissions", false);
        if (permissions != null) {
            String sorted = (permissions.contains("r") ? "r" : "")
                    + (permissions.contains("w") ? "w" : "")
                    + (permissions.contains("m") ? "m" : "");
            if (sorted.isEmpty() || sorted.length() != permissions.length()) {
                throw f.fail(at + ".permissions", UserText.quote(permissions) + " is not made of r, w and m");
            }
            permissions = sorted;
        }
        Long uid = f.number(d, at, "uid", 0xffffffffL);
        Long gid = f.number(d, at, "gid", 0xffffffffL);
        return new CdiDeviceNode(
                path, hostPath, t, major, minor, mode == null ? null : mode.intValue(), permissions, uid, gid);
    }

    private static CdiMount mount(Fields f, JsonNode m, String at) throws CdiException {
        if (!m.isObject()) {
            throw f.fail(at, "must be an object with hostPath and containerPath");
        }
        String hostPath = f.path(m, at, "hostPath", true);
        String containerPath = f.path(m, at, "containerPath", true);
        if (containerPath.equals("/")
                || List.of("/proc", "/sys").stream()
                        .anyMatch(p -> containerPath.equals(p) || containerPath.startsWith(p + "/"))) {
            throw f.fail(at + ".containerPath", UserText.quote(containerPath) + " would cover the root, /proc or /sys");
        }
        String type = f.text(m, at + ".type", "type", false);
        if (type != null && !type.equals("bind")) {
            throw f.fail(at + ".type", UserText.quote(type) + " is not bind, the only mount Drover applies");
        }
        List<String> options = new ArrayList<>();
        for (JsonNode o : f.list(m, at, "options", 32)) {
            String opt = f.string(o, at + ".options[" + options.size() + "]");
            if (!MOUNT_OPTIONS.contains(opt)) {
                throw f.fail(
                        at + ".options",
                        UserText.quote(opt) + " is not an option Drover applies ("
                                + String.join(
                                        ", ", MOUNT_OPTIONS.stream().sorted().toList()) + ")");
            }
            options.add(opt);
        }
        return new CdiMount(hostPath, containerPath, options);
    }

    private static CdiHook hook(Fields f, JsonNode h, String at) throws CdiException {
        if (!h.isObject()) {
            throw f.fail(at, "must be an object with hookName and path");
        }
        String name = f.text(h, at + ".hookName", "hookName", true);
        if (!HOOK_NAMES.contains(name)) {
            throw f.fail(at + ".hookName", UserText.quote(name) + " is not an OCI hook point");
        }
        String path = f.path(h, at, "path", true);
        List<String> args = new ArrayList<>();
        for (JsonNode a : f.list(h, at, "args", MAX_ARGS)) {
            args.add(f.string(a, at + ".args[" + args.size() + "]"));
        }
        List<String> env = new ArrayList<>();
        for (JsonNode e : f.list(h, at, "env", MAX_ARGS)) {
            env.add(env(f, e, at + ".env[" + env.size() + "]"));
        }
        Long timeout = f.number(h, at, "timeout", 3600);
        return new CdiHook(name, path, args, env, timeout == null ? null : timeout.intValue());
    }

    /** Reads fields of one file, naming the file and the field in what it refuses. */
    private record Fields(String source) {

        CdiException fail(String at, String why) {
            return new CdiException("CDI spec " + source + ": " + at + " " + why);
        }

        String text(JsonNode parent, String key, boolean required) throws CdiException {
            return text(parent, key, key, required);
        }

        String text(JsonNode parent, String at, String key, boolean required) throws CdiException {
            JsonNode n = parent.get(key);
            if (n == null || n.isNull()) {
                if (required) {
                    throw fail(at, "is required");
                }
                return null;
            }
            return string(n, at);
        }

        String string(JsonNode n, String at) throws CdiException {
            if (!n.isTextual()) {
                throw fail(at, "must be a string, not " + UserText.cut(n.toString(), UserText.LIMIT));
            }
            String s = n.asText();
            if (s.length() > MAX_STRING) {
                throw fail(at, "is " + s.length() + " characters, more than the " + MAX_STRING + " allowed");
            }
            if (s.indexOf('\0') >= 0) {
                throw fail(at, "holds a NUL character");
            }
            return s;
        }

        /** An absolute, clean path: no empty, {@code .} or {@code ..} segment, no trailing slash. */
        String path(JsonNode parent, String at, String key, boolean required) throws CdiException {
            String p = text(parent, at + "." + key, key, required);
            if (p == null) {
                return null;
            }
            if (!p.startsWith("/")) {
                throw fail(at + "." + key, UserText.quote(p) + " is not an absolute path");
            }
            if (!p.equals("/")) {
                for (String seg : p.substring(1).split("/", -1)) {
                    if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                        throw fail(at + "." + key, UserText.quote(p) + " is not a clean path (no //, . or ..)");
                    }
                }
            }
            return p;
        }

        Long number(JsonNode parent, String at, String key, long max) throws CdiException {
            JsonNode n = parent.get(key);
            if (n == null || n.isNull()) {
                return null;
            }
            if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 0 || n.asLong() > max) {
                throw fail(
                        at + "." + key,
                        UserText.cut(n.toString(), UserText.LIMIT) + " is not a number from 0 to " + max);
            }
            return n.asLong();
        }

        List<JsonNode> list(JsonNode parent, String at, String key, int max) throws CdiException {
            JsonNode n = parent.get(key);
            if (n == null || n.isNull()) {
                return List.of();
            }
            if (!n.isArray()) {
                throw fail(at + "." + key, "must be a list");
            }
            if (n.size() > max) {
                throw fail(at + "." + key, "has " + n.size() + " entries, more than the " + max + " allowed");
            }
            List<JsonNode> out = new ArrayList<>();
            n.forEach(out::add);
            return out;
        }
    }
}
