package dev.drover.api.validation;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckHeader;
import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.Names;
import dev.drover.api.v1alpha1.Port;
import dev.drover.api.v1alpha1.Task;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The rules of a task's health checks and {@code checkRestart}, as the CRD's schema and CEL rules state them. A
 * check's path and headers become an HTTP request the agent writes, so they are held to characters that cannot end
 * the request line or a header.
 */
final class CheckRules {

    private CheckRules() {}

    static void validate(String path, Task task, List<Violation> out) {
        List<Check> checks = task.getChecks();
        if (task.getCheckRestart() != null) {
            checkRestart(path + ".checkRestart", task.getCheckRestart(), out);
            if (checks == null) {
                out.add(new Violation(path + ".checkRestart", "needs checks: it restarts the task when they fail"));
            }
        }
        if (checks == null) {
            return;
        }
        if (checks.size() > Task.MAX_CHECKS) {
            out.add(new Violation(
                    path + ".checks", "has " + checks.size() + " checks; at most " + Task.MAX_CHECKS + " are allowed"));
            return;
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < checks.size(); i++) {
            String at = path + ".checks[" + i + "]";
            Check c = checks.get(i);
            if (c == null) {
                out.add(new Violation(at, "is empty; a check needs at least a name and a type"));
                continue;
            }
            if (!Names.isLabel(c.getName())) {
                out.add(new Violation(
                        at + ".name",
                        quote(c.getName()) + " is not a check name (lower-case letters, digits and '-', starting and"
                                + " ending with a letter or digit, at most 63 characters)"));
            } else if (!names.add(c.getName())) {
                out.add(new Violation(
                        at + ".name", quote(c.getName()) + " is used by another check; check names must be unique"));
            }
            check(at, c, out);
        }
    }

    /** A number 1 to 65535, or a port name (whether the allocation has it is checked beside its network). */
    private static void port(String at, IntOrString port, List<Violation> out) {
        if (port == null) {
            return;
        }
        if (port.getIntVal() != null) {
            if (port.getIntVal() < 1 || port.getIntVal() > 65535) {
                out.add(new Violation(at, port.getIntVal() + " is not a port; give 1 to 65535 or a port's name"));
            }
        } else if (!Port.isName(port.getStrVal())) {
            out.add(new Violation(
                    at,
                    quote(port.getStrVal()) + " is neither a port number nor a port name (lower-case letters,"
                            + " digits and '-', at most " + Port.MAX_NAME + ")"));
        }
    }

    private static void check(String at, Check c, List<Violation> out) {
        CheckType type = c.getType();
        if (type == null) {
            out.add(new Violation(at + ".type", "is required (http, tcp or exec)"));
        } else if (type == CheckType.EXEC) {
            if (c.getCommand() == null) {
                out.add(new Violation(at + ".command", "is required for an exec check"));
            }
            if (c.getPort() != null) {
                out.add(new Violation(at + ".port", "is not used by an exec check; leave it out"));
            }
        } else {
            if (c.getPort() == null) {
                out.add(new Violation(at + ".port", "is required for an http or tcp check (1 to 65535)"));
            }
            if (c.getCommand() != null || c.getArgs() != null) {
                out.add(new Violation(
                        at + (c.getCommand() != null ? ".command" : ".args"), "is for exec checks only; leave it out"));
            }
        }
        if (type != null && type != CheckType.HTTP) {
            for (var field :
                    new Object[][] {{"path", c.getPath()}, {"method", c.getMethod()}, {"headers", c.getHeaders()}}) {
                if (field[1] != null) {
                    out.add(new Violation(at + "." + field[0], "is for http checks only; leave it out"));
                }
            }
        }
        port(at + ".port", c.getPort(), out);
        if (c.getPath() != null
                && (c.getPath().length() > Check.MAX_PATH || !c.getPath().matches(Check.PATH_PATTERN))) {
            out.add(new Violation(
                    at + ".path",
                    quote(c.getPath()) + " is not a request path (starting with '/', no spaces or control characters,"
                            + " at most " + Check.MAX_PATH + " characters)"));
        }
        if (c.getMethod() != null && !c.getMethod().matches(Check.METHOD_PATTERN)) {
            out.add(new Violation(
                    at + ".method",
                    quote(c.getMethod()) + " is not a method a check may use (GET, HEAD, POST, PUT, DELETE, OPTIONS,"
                            + " PATCH)"));
        }
        headers(at + ".headers", c.getHeaders(), out);
        exec(at, c, out);
        timing(at, c, out);
    }

    private static void headers(String path, List<CheckHeader> headers, List<Violation> out) {
        if (headers == null) {
            return;
        }
        if (headers.size() > Check.MAX_HEADERS) {
            out.add(new Violation(
                    path, "has " + headers.size() + " headers; at most " + Check.MAX_HEADERS + " are allowed"));
            return;
        }
        for (int k = 0; k < headers.size(); k++) {
            CheckHeader h = headers.get(k);
            String at = path + "[" + k + "]";
            String name = h == null ? null : h.getName();
            if (name == null || name.length() > CheckHeader.MAX_NAME || !name.matches(CheckHeader.NAME_PATTERN)) {
                out.add(new Violation(
                        at + ".name", quote(name) + " is not a header name (letters, digits and !#$%&'*+-.^_`|~)"));
            } else if (CheckHeader.RESERVED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                out.add(new Violation(
                        at + ".name",
                        "the probe sets Connection, Content-Length, Transfer-Encoding, TE, Trailer, Upgrade, Expect and"
                                + " Keep-Alive itself; remove the header"));
            }
            String value = h == null ? null : h.getValue();
            if (value != null
                    && (value.length() > CheckHeader.MAX_VALUE || !value.matches(CheckHeader.VALUE_PATTERN))) {
                out.add(new Violation(
                        at + ".value",
                        "is not a header value (no control characters but tab, at most " + CheckHeader.MAX_VALUE
                                + " characters)"));
            }
        }
    }

    private static void exec(String at, Check c, List<Violation> out) {
        if (c.getCommand() != null
                && (c.getCommand().isEmpty() || c.getCommand().length() > Check.MAX_COMMAND)) {
            out.add(new Violation(at + ".command", "must have 1 to " + Check.MAX_COMMAND + " characters"));
        }
        List<String> args = c.getArgs();
        if (args == null) {
            return;
        }
        if (args.size() > Check.MAX_ARGS) {
            out.add(new Violation(
                    at + ".args", "has " + args.size() + " arguments; at most " + Check.MAX_ARGS + " are allowed"));
            return;
        }
        for (int k = 0; k < args.size(); k++) {
            if (args.get(k) == null || args.get(k).length() > Check.MAX_ARG) {
                out.add(new Violation(
                        at + ".args[" + k + "]", "must be a string of at most " + Check.MAX_ARG + " characters"));
            }
        }
    }

    private static void timing(String at, Check c, List<Violation> out) {
        Duration interval = duration(at + ".interval", c.getInterval(), out);
        Duration timeout = duration(at + ".timeout", c.getTimeout(), out);
        duration(at + ".initialDelay", c.getInitialDelay(), out);
        if (interval != null && interval.compareTo(Check.MIN_INTERVAL) < 0) {
            out.add(new Violation(at + ".interval", quote(c.getInterval()) + " is shorter than the minimum of 1s"));
        }
        if (timeout != null && timeout.isZero()) {
            out.add(new Violation(at + ".timeout", "must be more than 0s"));
        }
        if (timeout != null && timeout.compareTo(Check.MAX_TIMEOUT) > 0) {
            out.add(new Violation(
                    at + ".timeout",
                    quote(c.getTimeout()) + " is longer than the maximum of " + Check.MAX_TIMEOUT_TEXT
                            + "; a probe holds one of the node's probe slots until it ends"));
        }
        boolean malformed =
                (c.getInterval() != null && interval == null) || (c.getTimeout() != null && timeout == null);
        if (!malformed && c.effectiveTimeout().compareTo(c.effectiveInterval()) > 0) {
            out.add(new Violation(
                    at + ".timeout",
                    Durations.format(c.effectiveTimeout()) + " is longer than the interval "
                            + Durations.format(c.effectiveInterval()) + "; a probe must end before the next starts"));
        }
        threshold(at + ".successThreshold", c.getSuccessThreshold(), out);
        threshold(at + ".failureThreshold", c.getFailureThreshold(), out);
    }

    private static void threshold(String path, Integer value, List<Violation> out) {
        if (value != null && (value < 1 || value > Check.MAX_THRESHOLD)) {
            out.add(new Violation(path, value + " is out of range; give 1 to " + Check.MAX_THRESHOLD));
        }
    }

    private static void checkRestart(String path, CheckRestart r, List<Violation> out) {
        if (r.getLimit() != null && (r.getLimit() < 0 || r.getLimit() > CheckRestart.MAX_LIMIT)) {
            out.add(new Violation(
                    path + ".limit",
                    r.getLimit() + " is out of range; give 0 (never restart) to " + CheckRestart.MAX_LIMIT));
        }
        duration(path + ".grace", r.getGrace(), out);
    }

    private static Duration duration(String path, String value, List<Violation> out) {
        if (value == null) {
            return null;
        }
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            out.add(new Violation(path, e.getMessage()));
            return null;
        }
    }

    private static String quote(String s) {
        return UserText.quote(s);
    }
}
