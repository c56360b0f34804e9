package dev.drover.api.validation;

import dev.drover.api.Signals;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.ChangeMode;
import dev.drover.api.v1alpha1.EnvVar;
import dev.drover.api.v1alpha1.EnvVarSource;
import dev.drover.api.v1alpha1.FileProjection;
import dev.drover.api.v1alpha1.KeySelector;
import dev.drover.api.v1alpha1.KeyToPath;
import dev.drover.api.v1alpha1.LocalObjectReference;
import dev.drover.api.v1alpha1.Names;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TokenProjection;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The rules of a task's credentials: variables read from Secrets and ConfigMaps, projected files, its token and what
 * it gets when they change. File paths are checked here as well as by the CRD's pattern, because they become names
 * the agent creates in the task's directory.
 */
final class CredentialRules {

    private CredentialRules() {}

    static void validate(String path, Task task, List<Violation> out) {
        List<EnvVar> env = task.getEnv();
        if (env != null) {
            for (int j = 0; j < env.size(); j++) {
                EnvVar e = env.get(j);
                if (e != null && e.getValueFrom() != null) {
                    valueFrom(path + ".env[" + j + "]", e, out);
                }
            }
        }
        token(path + ".serviceAccountToken", task.getServiceAccountToken(), out);
        files(path + ".files", task.getFiles(), out);
        onChange(path, task, out);
    }

    static void serviceAccountName(String name, List<Violation> out) {
        if (name != null && !Names.isSubdomain(name)) {
            out.add(new Violation(
                    "spec.serviceAccountName",
                    quote(name) + " is not a ServiceAccount name (lower-case letters, digits, '-' and '.')"));
        }
    }

    static void imagePullSecrets(List<LocalObjectReference> secrets, List<Violation> out) {
        if (secrets == null) {
            return;
        }
        String path = "spec.imagePullSecrets";
        if (secrets.size() > AllocationSpec.MAX_IMAGE_PULL_SECRETS) {
            out.add(new Violation(
                    path,
                    "has " + secrets.size() + " entries; at most " + AllocationSpec.MAX_IMAGE_PULL_SECRETS
                            + " are allowed"));
            return;
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < secrets.size(); i++) {
            LocalObjectReference r = secrets.get(i);
            String at = path + "[" + i + "]";
            if (r == null || r.getName() == null) {
                out.add(new Violation(at + ".name", "is required: the name of a Secret of the allocation's namespace"));
            } else if (!Names.isSubdomain(r.getName())) {
                out.add(new Violation(
                        at + ".name",
                        quote(r.getName()) + " is not a Secret name (lower-case letters, digits, '-'"
                                + " and '.', at most 253 characters)"));
            } else if (!names.add(r.getName())) {
                out.add(new Violation(at + ".name", quote(r.getName()) + " is named twice; name each Secret once"));
            }
        }
    }

    private static void valueFrom(String path, EnvVar e, List<Violation> out) {
        if (e.getValue() != null) {
            out.add(new Violation(path, "gives value and valueFrom; give one"));
        }
        EnvVarSource from = e.getValueFrom();
        if ((from.getSecretKeyRef() == null) == (from.getConfigMapKeyRef() == null)) {
            out.add(new Violation(path + ".valueFrom", "needs exactly one of secretKeyRef and configMapKeyRef"));
            return;
        }
        boolean secret = from.getSecretKeyRef() != null;
        KeySelector ref = secret ? from.getSecretKeyRef() : from.getConfigMapKeyRef();
        String at = path + ".valueFrom." + (secret ? "secretKeyRef" : "configMapKeyRef");
        objectName(at + ".name", ref.getName(), out);
        dataKey(at + ".key", ref.getKey(), out);
    }

    private static void token(String path, TokenProjection t, List<Violation> out) {
        if (t == null) {
            return;
        }
        if (t.getAudience() != null
                && (t.getAudience().isBlank() || t.getAudience().length() > 253)) {
            out.add(new Violation(path + ".audience", "must be 1 to 253 characters, not blank"));
        } else if (TokenProjection.AGENT_AUDIENCE.equals(t.getAudience())) {
            out.add(new Violation(
                    path + ".audience",
                    "drover.dev/agent is the audience of Drover's agents; a task's token may not be for it"));
        }
        Long s = t.getExpirationSeconds();
        if (s != null && (s < TokenProjection.MIN_EXPIRATION_SECONDS || s > TokenProjection.MAX_EXPIRATION_SECONDS)) {
            out.add(new Violation(
                    path + ".expirationSeconds",
                    s + " is out of range; give " + TokenProjection.MIN_EXPIRATION_SECONDS + " (10 minutes) to "
                            + TokenProjection.MAX_EXPIRATION_SECONDS + " (a day)"));
        }
    }

    private static void files(String path, List<FileProjection> files, List<Violation> out) {
        if (files == null) {
            return;
        }
        if (files.size() > Task.MAX_FILES) {
            out.add(new Violation(
                    path, "has " + files.size() + " entries; at most " + Task.MAX_FILES + " are allowed"));
            return;
        }
        List<String> dirs = new ArrayList<>();
        for (int k = 0; k < files.size(); k++) {
            FileProjection f = files.get(k);
            String at = path + "[" + k + "]";
            if (f == null || (f.getSecret() == null) == (f.getConfigMap() == null)) {
                out.add(new Violation(at, "needs exactly one of secret and configMap"));
                continue;
            }
            objectName(at + (f.getSecret() != null ? ".secret" : ".configMap"), f.objectName(), out);
            if (f.getPath() != null
                    && (!relativePath(f.getPath()) || f.getPath().contains("/"))) {
                out.add(new Violation(
                        at + ".path",
                        quote(f.getPath()) + " is not a directory name (one plain name: no '/', not '.' or"
                                + " starting with '..', at most 253 characters)"));
                continue;
            }
            String dir = f.effectiveDirectory();
            if (dir.equals("secrets/token")) {
                out.add(new Violation(
                        at + ".path",
                        "secrets/token is the task's ServiceAccount token; give this Secret another path"));
            }
            for (String other : dirs) {
                if (other.equals(dir) || dir.startsWith(other + "/") || other.startsWith(dir + "/")) {
                    out.add(new Violation(
                            at + ".path", quote(dir) + " overlaps " + quote(other) + "; give each entry its own path"));
                }
            }
            dirs.add(dir);
            mode(at + ".mode", f.getMode(), out);
            items(at + ".items", f.getItems(), out);
        }
    }

    private static void items(String path, List<KeyToPath> items, List<Violation> out) {
        if (items == null) {
            return;
        }
        if (items.size() > FileProjection.MAX_ITEMS) {
            out.add(new Violation(
                    path, "has " + items.size() + " entries; at most " + FileProjection.MAX_ITEMS + " are allowed"));
            return;
        }
        Set<String> paths = new HashSet<>();
        for (int i = 0; i < items.size(); i++) {
            KeyToPath item = items.get(i);
            String at = path + "[" + i + "]";
            if (item == null) {
                out.add(new Violation(at, "is empty; give key and path"));
                continue;
            }
            dataKey(at + ".key", item.getKey(), out);
            if (item.getPath() == null || !relativePath(item.getPath())) {
                out.add(new Violation(at + ".path", badPath(item.getPath())));
            } else {
                for (String other : paths) {
                    if (other.equals(item.getPath())
                            || item.getPath().startsWith(other + "/")
                            || other.startsWith(item.getPath() + "/")) {
                        out.add(new Violation(
                                at + ".path",
                                quote(item.getPath()) + " overlaps " + quote(other) + "; each key needs its own file"));
                    }
                }
                paths.add(item.getPath());
            }
            mode(at + ".mode", item.getMode(), out);
        }
    }

    private static void onChange(String path, Task task, List<Violation> out) {
        boolean signal = task.effectiveOnChange() == ChangeMode.Signal;
        if (signal && task.getChangeSignal() == null) {
            out.add(new Violation(path + ".changeSignal", "is required with onChange: Signal (e.g. SIGHUP)"));
        } else if (!signal && task.getChangeSignal() != null) {
            out.add(new Violation(path + ".changeSignal", "is used only with onChange: Signal"));
        } else if (signal && !Signals.isKnown(task.getChangeSignal())) {
            out.add(new Violation(
                    path + ".changeSignal",
                    quote(task.getChangeSignal()) + " is not a signal name (e.g. SIGHUP, SIGUSR1)"));
        }
    }

    /** Whether {@code p} is a path the agent may create below a task's directory: relative, each name plain. */
    static boolean relativePath(String p) {
        return p != null && p.length() <= FileProjection.MAX_PATH && p.matches(FileProjection.PATH_PATTERN);
    }

    private static String badPath(String p) {
        return quote(p) + " is not a relative path of plain names ('/'-separated, none empty, '.' or starting"
                + " with '..', at most " + FileProjection.MAX_PATH + " characters)";
    }

    private static void objectName(String path, String name, List<Violation> out) {
        if (!Names.isSubdomain(name)) {
            out.add(new Violation(
                    path, quote(name) + " is not an object name (lower-case letters, digits, '-' and '.')"));
        }
    }

    private static void dataKey(String path, String key, List<Violation> out) {
        if (key == null || key.isEmpty() || key.length() > 253 || !key.matches(Names.DATA_KEY)) {
            out.add(new Violation(path, quote(key) + " is not a data key (letters, digits, '-', '_' and '.')"));
        }
    }

    private static void mode(String path, Integer mode, List<Violation> out) {
        if (mode != null && (mode < 0 || mode > 0777)) {
            out.add(new Violation(path, mode + " is not file mode bits; give 0 to 0777 (511)"));
        }
    }

    private static String quote(String s) {
        return UserText.quote(s);
    }
}
