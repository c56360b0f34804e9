package dev.drover.httpapi;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.Subresource;
import dev.drover.api.Signals;
import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import dev.drover.state.AllocId;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a request to the agent's API asks for, read from its raw target (path and query) before anything else is
 * looked at: which allocation, which of its subresources ({@code log}, {@code stats}, {@code snapshot},
 * {@code signal}) and, for logs, which task, stream and lines; for a snapshot, the successor that claims the disk, if
 * any; for a signal, which task and signal.
 *
 * @param logs the logs asked for; null unless {@code subresource} is {@code log}
 * @param successor the allocation a snapshot is claimed for; null for a plain download
 * @param signal the signal to send; null unless {@code subresource} is {@code signal}
 * @param exec the command to run; null unless {@code subresource} is {@code exec}
 */
record ApiRequest(AllocId id, String subresource, Logs logs, Successor successor, Signal signal, Exec exec) {

    private static final Pattern UID = Pattern.compile("[A-Za-z0-9-]{1,128}");

    ApiRequest(AllocId id, String subresource, Logs logs) {
        this(id, subresource, logs, null, null, null);
    }

    /** The HTTP method the subresource is served for ({@link Subresource#method}). */
    String method() {
        return Subresource.of(subresource).method();
    }

    /** The verb its right is checked for ({@link Subresource#verb}). */
    String verb() {
        return Subresource.of(subresource).verb();
    }

    /**
     * {@code ?task=TASK&command=WORD&command=WORD...&stdin=true&stdout=true&stderr=true&tty=true}: a command to run in
     * one running task, as {@code pods/exec} names it (stdout and stderr default to true, stdin and tty to false).
     */
    record Exec(String task, dev.drover.driver.ExecRequest request, boolean stdout, boolean stderr) {

        static Exec of(java.util.List<Map.Entry<String, String>> query) throws BadRequest {
            String task = null;
            java.util.List<String> command = new java.util.ArrayList<>();
            Map<String, String> flags = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : query) {
                switch (e.getKey()) {
                    case "task" -> task = e.getValue();
                    case "command" -> {
                        if (command.size() >= dev.drover.driver.ExecRequest.MAX_WORDS) {
                            throw new BadRequest(
                                    "a command has at most " + dev.drover.driver.ExecRequest.MAX_WORDS + " words");
                        }
                        command.add(e.getValue());
                    }
                    case "stdin", "stdout", "stderr", "tty" -> flags.put(e.getKey(), e.getValue());
                    default -> {
                        // other parameters (such as container) mean nothing here
                    }
                }
            }
            if (task == null || task.isEmpty()) {
                throw new BadRequest("an exec names its task: task=TASK");
            }
            if (!Names.isLabel(task)) {
                throw new BadRequest(UserText.quote(task) + " is not a valid task name");
            }
            boolean stdin = flag(flags, "stdin", false);
            boolean tty = flag(flags, "tty", false);
            try {
                return new Exec(
                        task,
                        new dev.drover.driver.ExecRequest(command, stdin, tty),
                        flag(flags, "stdout", true),
                        flag(flags, "stderr", true) && !tty);
            } catch (IllegalArgumentException e) {
                throw new BadRequest(e.getMessage() + " (give it as command=PROGRAM&command=ARG...)");
            }
        }

        private static boolean flag(Map<String, String> flags, String name, boolean otherwise) throws BadRequest {
            String v = flags.get(name);
            if (v == null) {
                return otherwise;
            }
            return switch (v) {
                case "true", "1", "" -> true;
                case "false", "0" -> false;
                default -> throw new BadRequest(name + " is true or false, not " + UserText.quote(v));
            };
        }
    }

    /** {@code ?task=TASK&signal=NAME}: a signal for one running task; the name as {@link Signals} knows it. */
    record Signal(String task, String signal) {

        static Signal of(Map<String, String> query) throws BadRequest {
            String task = query.get("task");
            if (task == null || task.isEmpty()) {
                throw new BadRequest("a signal names its task: task=TASK");
            }
            if (!Names.isLabel(task)) {
                throw new BadRequest(UserText.quote(task) + " is not a valid task name");
            }
            String signal = query.get("signal");
            if (signal == null || signal.isEmpty()) {
                throw new BadRequest("a signal names the signal: signal=NAME, such as SIGUSR1 or HUP");
            }
            if (!Signals.isKnown(signal)) {
                throw new BadRequest("unknown signal " + UserText.quote(signal)
                        + ": name a POSIX signal, such as SIGHUP, SIGUSR1, SIGUSR2, SIGTERM or SIGINT");
            }
            return new Signal(task, Signals.canonical(signal));
        }
    }

    /** {@code ?successor=NAME&uid=UID}: the allocation, of the same namespace, that takes the disk. */
    record Successor(String name, String uid) {

        static Successor of(Map<String, String> query) throws BadRequest {
            String name = query.get("successor");
            String uid = query.get("uid");
            if (name == null) {
                if (uid != null) {
                    throw new BadRequest("uid names the successor's uid: it needs successor=NAME");
                }
                return null;
            }
            if (!Names.isSubdomain(name)) {
                throw new BadRequest("successor \"" + name + "\" is not a valid allocation name");
            }
            if (uid == null || !UID.matcher(uid).matches()) {
                throw new BadRequest("a successor needs its uid: uid=UID (letters, digits and -, 128 at most)");
            }
            return new Successor(name, uid);
        }
    }

    /** A request target the API cannot read; its message says what is wrong with it. */
    static final class BadRequest extends Exception {
        BadRequest(String message) {
            super(message, null, false, false);
        }
    }

    /** What a logs request asks for: {@code tail} lines (-1: all) of a stream, then what follows when asked. */
    record Logs(String task, String stream, int tail, boolean follow) {

        static Logs of(String task, Map<String, String> query) throws BadRequest {
            String stream = query.getOrDefault("stream", "stdout");
            if (!stream.equals("stdout") && !stream.equals("stderr")) {
                throw new BadRequest("stream must be stdout or stderr, not \"" + stream + "\"");
            }
            String tail = query.getOrDefault("tail", "-1");
            if (!tail.matches("-?[0-9]{1,9}")) {
                throw new BadRequest("tail must be a whole number of lines, not \"" + tail + "\"");
            }
            return new Logs(
                    task, stream, Integer.parseInt(tail), Boolean.parseBoolean(query.getOrDefault("follow", "false")));
        }
    }

    /** Whether the API serves this path, whatever it names. */
    static boolean served(String rawPath) {
        return AgentProtocol.AGENT_ROUTE.matcher(rawPath).matches();
    }

    /**
     * Reads the target of a path the API {@link #served serves}; one that names an allocation, task or query it
     * cannot read is a {@link BadRequest}.
     */
    static ApiRequest parse(String rawPath, String rawQuery) throws BadRequest {
        Matcher m = AgentProtocol.AGENT_ROUTE.matcher(rawPath);
        if (!m.matches()) {
            throw new BadRequest("no such API path " + rawPath + "; " + AgentProtocol.AGENT_ROUTES);
        }
        String namespace = decode(m.group(1), false);
        String name = decode(m.group(2), false);
        if (!Names.isLabel(namespace) || !Names.isSubdomain(name)) {
            throw new BadRequest("\"" + namespace + "/" + name + "\" is not a valid allocation name");
        }
        AllocId id = new AllocId(namespace, name);
        if (m.group(6) != null) {
            return new ApiRequest(id, "signal", null, null, Signal.of(query(rawQuery)), null);
        }
        if (m.group(7) != null) {
            return new ApiRequest(id, "exec", null, null, null, Exec.of(pairs(rawQuery)));
        }
        if (m.group(3) == null) {
            return m.group(4) != null
                    ? new ApiRequest(id, "stats", null)
                    : new ApiRequest(id, "snapshot", null, Successor.of(query(rawQuery)), null, null);
        }
        String task = decode(m.group(3), false);
        if (!Names.isLabel(task)) {
            throw new BadRequest("\"" + task + "\" is not a valid task name");
        }
        return new ApiRequest(id, "log", Logs.of(task, query(rawQuery)));
    }

    /**
     * Percent-decodes a raw path segment or query part as UTF-8 ({@code +} is a space in the query only); a
     * malformed escape or bytes that are not UTF-8 are the caller's error. (The JDK's server refuses most malformed
     * escapes before a handler sees them; this does not count on it.)
     */
    private static String decode(String raw, boolean query) throws BadRequest {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                int hi = i + 2 < raw.length() ? hexDigit(raw.charAt(i + 1)) : -1;
                int lo = hi >= 0 ? hexDigit(raw.charAt(i + 2)) : -1;
                if (hi < 0 || lo < 0) {
                    throw new BadRequest("malformed % escape \"" + raw.substring(i, Math.min(raw.length(), i + 3))
                            + "\" in \"" + raw + "\": a % is followed by two hex digits (write % itself as %25)");
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c == '+' && query) {
                bytes.write(' ');
            } else {
                bytes.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new BadRequest("\"" + raw + "\" does not decode to UTF-8 text");
        }
    }

    /** 0 to 15 for an ASCII hex digit, else -1. */
    private static int hexDigit(char c) {
        return HexFormat.isHexDigit(c) ? HexFormat.fromHexDigit(c) : -1;
    }

    private static Map<String, String> query(String raw) throws BadRequest {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : pairs(raw)) {
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /** The query's parameters in order, a repeated one each time. */
    private static java.util.List<Map.Entry<String, String>> pairs(String raw) throws BadRequest {
        java.util.List<Map.Entry<String, String>> out = new java.util.ArrayList<>();
        if (raw != null && !raw.isEmpty()) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                out.add(Map.entry(
                        decode(eq < 0 ? pair : pair.substring(0, eq), true),
                        eq < 0 ? "" : decode(pair.substring(eq + 1), true)));
            }
        }
        return out;
    }
}
