package dev.drover.network;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Runs CNI plugins ({@code <cniBinDir>/<type>}) as the CNI spec has a runtime run them: the {@code CNI_*} variables
 * (and {@code PATH}, where the plugins find {@code iptables}) as the whole environment, the plugin's config on stdin,
 * its result or its error as JSON on stdout. A plugin's output is hostile input: at most {@link #MAX_OUTPUT} bytes of
 * each stream are kept, a run past its time limit is killed, and what a message quotes of it is escaped and cut.
 * Safe for concurrent use: each call is a process of its own (the plugins lock what they share: host-local its lease
 * directory, iptables its table).
 */
public final class CniPlugins {

    /** The most bytes of a plugin's stdout, and of its stderr, that are read. */
    public static final int MAX_OUTPUT = 1024 * 1024;
    /** How long a plugin may run before it is killed. */
    public static final Duration DEFAULT_LIMIT = Duration.ofSeconds(60);

    /** A plugin type: a plain file name, never a path. */
    private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    /** CNI_CONTAINERID: letters, digits, {@code -}, {@code _} and {@code .}, starting with a letter or digit. */
    private static final Pattern CONTAINER_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

    private static final Pattern IF_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
    private static final int MESSAGE_LIMIT = 600;
    private static final String SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    static final ObjectMapper JSON = new ObjectMapper();

    private final Path binDir;
    private final PluginLauncher launcher;
    private final Duration limit;

    public CniPlugins(Path binDir, PluginLauncher launcher, Duration limit) {
        this.binDir = binDir.toAbsolutePath().normalize();
        this.launcher = launcher;
        this.limit = limit;
    }

    /** Plugins in {@code binDir}, run directly, each for at most {@link #DEFAULT_LIMIT}. */
    public CniPlugins(Path binDir) {
        this(binDir, PluginLauncher.DIRECT, DEFAULT_LIMIT);
    }

    public Path binDir() {
        return binDir;
    }

    /**
     * Where the plugin {@code type} is, refused when it is no plain name or no executable file is there; the message
     * says which plugin, where it was looked for, and what to do.
     */
    public Path plugin(String type) throws CniException {
        if (type == null || !TYPE.matcher(type).matches()) {
            throw new CniException(
                    String.valueOf(type), 0, "not a CNI plugin type (a plain file name): " + UserText.quote(type));
        }
        Path p = binDir.resolve(type);
        if (!Files.isRegularFile(p) || !Files.isExecutable(p)) {
            throw new CniException(
                    type,
                    0,
                    "the CNI plugin " + type + " is not in " + binDir
                            + (Files.isDirectory(binDir) ? "" : " (no such" + " directory)")
                            + " (set cniBinDir to the directory of the CNI reference plugins;"
                            + " Debian's package containernetworking-plugins installs them in /usr/lib/cni,"
                            + " Kubernetes nodes have them in /opt/cni/bin)");
        }
        return p;
    }

    /**
     * Runs the plugin {@code config.type} for {@code command} on the interface {@code ifName} of the namespace
     * {@code netns} (null: none, which DEL allows), its stdin {@code config}. Answers its result: for ADD the CNI
     * result object; for CHECK and DEL whatever object it wrote, usually none (an empty object).
     */
    public ObjectNode invoke(CniCommand command, String containerId, Path netns, String ifName, ObjectNode config)
            throws CniException {
        String type = config.path("type").asText(null);
        Path plugin = plugin(type);
        if (!CONTAINER_ID.matcher(containerId).matches()
                || !IF_NAME.matcher(ifName).matches()) {
            throw new IllegalArgumentException("not a CNI container id and interface: " + UserText.quote(containerId)
                    + ", " + UserText.quote(ifName));
        }
        Map<String, String> env = new TreeMap<>();
        env.put("CNI_COMMAND", command.name());
        env.put("CNI_CONTAINERID", containerId);
        env.put("CNI_NETNS", netns == null ? "" : netns.toString());
        env.put("CNI_IFNAME", ifName);
        env.put("CNI_PATH", binDir.toString());
        env.put("PATH", path());
        BoundedProcess.Outcome o;
        try {
            byte[] stdin = JSON.writeValueAsBytes(config);
            o = BoundedProcess.run(launcher.command(plugin), env, stdin, limit, MAX_OUTPUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CniException(type, "interrupted while the CNI plugin " + type + " ran " + command, e);
        } catch (IOException e) {
            throw new CniException(type, "cannot run the CNI plugin " + plugin + ": " + e.getMessage(), e);
        }
        return answer(type, command, o);
    }

    /** The result in {@code o}, or the exception that says why there is none. */
    static ObjectNode answer(String type, CniCommand command, BoundedProcess.Outcome o) throws CniException {
        String what = "the CNI plugin " + type + " failed " + command + ": ";
        if (o.timedOut()) {
            throw new CniException(type, 0, what + "it ran past its time limit and was killed" + stderr(o));
        }
        if (o.stdoutCut()) {
            throw new CniException(type, 0, what + "it wrote more than " + MAX_OUTPUT + " bytes" + stderr(o));
        }
        JsonNode out = parse(o.stdout());
        if (o.exit() != 0) {
            if (out != null && out.isObject() && out.hasNonNull("msg")) {
                String msg = out.path("msg").asText("");
                String details = out.path("details").asText("");
                throw new CniException(
                        type,
                        out.path("code").asInt(0),
                        UserText.cutEscaped(
                                what + msg + (details.isBlank() ? "" : " (" + details + ")") + " [code "
                                        + out.path("code").asInt(0) + "]",
                                MESSAGE_LIMIT));
            }
            String said =
                    !o.stdout().isBlank() ? o.stdout().strip() : o.stderr().strip();
            throw new CniException(
                    type,
                    0,
                    UserText.cutEscaped(
                            what + "exit status " + o.exit() + (said.isEmpty() ? ", no output" : ": " + said),
                            MESSAGE_LIMIT));
        }
        if (out instanceof ObjectNode result) {
            return result;
        }
        if (command == CniCommand.ADD || !o.stdout().isBlank()) {
            throw new CniException(
                    type,
                    0,
                    UserText.cutEscaped(
                            what + "its answer is no JSON object: "
                                    + (o.stdout().isBlank()
                                            ? "(nothing)"
                                            : o.stdout().strip()),
                            MESSAGE_LIMIT));
        }
        return JSON.createObjectNode();
    }

    private static JsonNode parse(String stdout) {
        if (stdout.isBlank()) {
            return null;
        }
        try {
            return JSON.readTree(stdout);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String stderr(BoundedProcess.Outcome o) {
        String err = o.stderr().strip();
        return err.isEmpty() ? "" : "; its stderr: " + UserText.cutEscaped(err, 300);
    }

    /**
     * The {@code PATH} plugins (and the commands run for namespaces) get: the agent's own, then the system's
     * directories it lacks, so {@code iptables} in {@code /usr/sbin} is found even where the agent's {@code PATH}
     * leaves sbin out.
     */
    static String path() {
        Set<String> dirs = new LinkedHashSet<>();
        String own = System.getenv("PATH");
        if (own != null) {
            for (String d : own.split(":")) {
                if (d.startsWith("/")) {
                    dirs.add(d);
                }
            }
        }
        dirs.addAll(List.of(SYSTEM_PATH.split(":")));
        return String.join(":", dirs);
    }
}
