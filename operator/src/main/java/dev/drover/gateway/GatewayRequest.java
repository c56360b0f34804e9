package dev.drover.gateway;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.agentapi.Refusal;
import dev.drover.agentapi.Subresource;
import dev.drover.api.Signals;
import dev.drover.api.v1alpha1.Names;
import java.net.URLDecoder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;

/**
 * A request for an allocation's subresource, read from its raw path and query: {@code
 * /apis/agent.drover.dev/v1alpha1/namespaces/NS/allocations/NAME/{log,stats,snapshot,signal}}, and for {@code log} the
 * parameters {@code task} (absent: the allocation's only task), {@code stream} ({@code stdout} | {@code stderr}),
 * {@code tail} (lines from the end; -1 or absent: all) and {@code follow}; for {@code signal} (a POST) the parameters
 * {@code task} and {@code signal} (a name such as {@code SIGUSR1} or {@code HUP}), both required.
 */
record GatewayRequest(String namespace, String name, String subresource, Optional<String> task, String query) {

    private static final int MAX_QUERY = 4096;
    private static final int MAX_PARAMETERS = 16;

    /** The HTTP method the subresource is served for ({@link Subresource#method}). */
    String method() {
        return Subresource.of(subresource).method();
    }

    /** The RBAC verb the gateway checks ({@link Subresource#verb}). */
    String verb() {
        return Subresource.of(subresource).verb();
    }

    /** The longest exec query: a command of many words is longer than any other query. */
    static final int MAX_EXEC_QUERY = 16 * 1024;

    /** Whether the path names an allocation's subresource (of any name). */
    static boolean matches(String rawPath) {
        return AgentProtocol.GATEWAY_ROUTE.matcher(rawPath).matches();
    }

    static GatewayRequest parse(String rawPath, String rawQuery) throws Refusal {
        Matcher m = AgentProtocol.GATEWAY_ROUTE.matcher(rawPath);
        if (!m.matches()) {
            throw new Refusal(
                    404,
                    "no such path; " + AgentProtocol.GATEWAY_PREFIX
                            + "/namespaces/NS/allocations/NAME/{log,stats,snapshot,signal,exec}");
        }
        String namespace = m.group(1);
        String name = m.group(2);
        String subresource = m.group(3);
        if (!Names.isLabel(namespace) || !Names.isSubdomain(name)) {
            throw new Refusal(
                    400,
                    "\"" + GatewayStatus.cut(namespace) + "/" + GatewayStatus.cut(name)
                            + "\" is not a valid allocation name");
        }
        if (Subresource.named(subresource).isEmpty()) {
            throw new Refusal(
                    404,
                    "allocations have no subresource \"" + GatewayStatus.cut(subresource) + "\"; there are "
                            + String.join(", ", Subresource.NAMES));
        }
        if (subresource.equals("exec")) {
            return exec(namespace, name, rawQuery);
        }
        Map<String, String> query = query(rawQuery);
        if (subresource.equals("signal")) {
            return signal(namespace, name, query);
        }
        if (!subresource.equals("log")) {
            return new GatewayRequest(namespace, name, subresource, Optional.empty(), "");
        }
        Optional<String> task = Optional.ofNullable(query.get("task"));
        if (task.isPresent() && !Names.isLabel(task.get())) {
            throw new Refusal(400, "task: \"" + GatewayStatus.cut(task.get()) + "\" is not a valid task name");
        }
        String stream = query.getOrDefault("stream", "stdout");
        if (!stream.equals("stdout") && !stream.equals("stderr")) {
            throw new Refusal(400, "stream must be stdout or stderr, not \"" + GatewayStatus.cut(stream) + "\"");
        }
        String tail = query.getOrDefault("tail", "-1");
        if (!tail.matches("-1|[0-9]{1,9}")) {
            throw new Refusal(
                    400, "tail must be a number of lines (or -1 for all), not \"" + GatewayStatus.cut(tail) + "\"");
        }
        String follow = query.getOrDefault("follow", "false");
        if (!follow.equals("true") && !follow.equals("false")) {
            throw new Refusal(400, "follow must be true or false, not \"" + GatewayStatus.cut(follow) + "\"");
        }
        return new GatewayRequest(
                namespace, name, subresource, task, "?stream=" + stream + "&tail=" + tail + "&follow=" + follow);
    }

    private static GatewayRequest signal(String namespace, String name, Map<String, String> query) throws Refusal {
        String task = query.get("task");
        if (task == null || !Names.isLabel(task)) {
            throw new Refusal(
                    400,
                    task == null
                            ? "a signal names its task: ?task=TASK&signal=NAME"
                            : "task: \"" + GatewayStatus.cut(task) + "\" is not a valid task name");
        }
        String signal = query.get("signal");
        if (signal == null || !Signals.isKnown(signal)) {
            throw new Refusal(
                    400,
                    signal == null
                            ? "a signal names the signal: ?task=TASK&signal=NAME, such as SIGUSR1 or HUP"
                            : "unknown signal \"" + GatewayStatus.cut(signal)
                                    + "\": name a POSIX signal, such as SIGHUP, SIGUSR1, SIGUSR2, SIGTERM or SIGINT");
        }
        String canonical = Signals.canonical(signal);
        return new GatewayRequest(
                namespace, name, "signal", Optional.of(task), "?task=" + task + "&signal=" + canonical);
    }

    /**
     * {@code ?task=TASK&command=WORD...&stdin=&stdout=&stderr=&tty=}, as {@code pods/exec} names them (the
     * agent reads the command's words and flags again): the task is checked here, the query is passed on as the
     * caller wrote it, less what is not the exec's.
     */
    private static GatewayRequest exec(String namespace, String name, String raw) throws Refusal {
        if (raw == null || raw.isEmpty()) {
            throw new Refusal(400, "an exec names its task and command: ?task=TASK&command=PROGRAM&command=ARG...");
        }
        if (raw.length() > MAX_EXEC_QUERY) {
            throw new Refusal(400, "the query is longer than " + MAX_EXEC_QUERY + " characters");
        }
        String task = null;
        StringBuilder kept = new StringBuilder();
        int words = 0;
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value;
            try {
                value = URLDecoder.decode(
                        eq < 0 ? "" : pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new Refusal(400, "malformed % escape in the query \"" + GatewayStatus.cut(pair) + "\"");
            }
            switch (key) {
                case "task" -> task = task != null ? task : value;
                case "command", "stdin", "stdout", "stderr", "tty" -> {
                    if (key.equals("command") && ++words > dev.drover.driver.ExecRequest.MAX_WORDS) {
                        throw new Refusal(
                                400, "a command has at most " + dev.drover.driver.ExecRequest.MAX_WORDS + " words");
                    }
                    kept.append('&').append(key).append('=').append(AgentProtocol.encode(value));
                }
                default -> {
                    // container and the like mean nothing here
                }
            }
        }
        if (task == null || !Names.isLabel(task)) {
            throw new Refusal(
                    400,
                    task == null
                            ? "an exec names its task: ?task=TASK&command=PROGRAM"
                            : "task: \"" + GatewayStatus.cut(task) + "\" is not a valid task name");
        }
        if (words == 0) {
            throw new Refusal(400, "an exec names its command: ?task=TASK&command=PROGRAM&command=ARG...");
        }
        return new GatewayRequest(namespace, name, "exec", Optional.of(task), "?task=" + task + kept);
    }

    /** Reads the query; repeated parameters keep their first value, as Kubernetes does. */
    private static Map<String, String> query(String raw) throws Refusal {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        if (raw.length() > MAX_QUERY) {
            throw new Refusal(400, "the query is longer than " + MAX_QUERY + " characters");
        }
        String[] pairs = raw.split("&");
        if (pairs.length > MAX_PARAMETERS) {
            throw new Refusal(400, "more than " + MAX_PARAMETERS + " query parameters");
        }
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            try {
                out.putIfAbsent(
                        URLDecoder.decode(
                                eq < 0 ? pair : pair.substring(0, eq), java.nio.charset.StandardCharsets.UTF_8),
                        eq < 0
                                ? ""
                                : URLDecoder.decode(pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw new Refusal(400, "malformed % escape in the query \"" + GatewayStatus.cut(pair) + "\"");
            }
        }
        return out;
    }
}
