package dev.drover.taskrunner.identity;

import dev.drover.api.v1alpha1.EnvVar;
import dev.drover.api.v1alpha1.FileProjection;
import dev.drover.api.v1alpha1.KeySelector;
import dev.drover.api.v1alpha1.KeyToPath;
import dev.drover.api.v1alpha1.Task;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.Credentials;
import dev.drover.credentials.ObjectRef;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads what a task refers to, each Secret and ConfigMap once, with the allocation's ServiceAccount token, and
 * resolves it as a Pod would: a missing object or key fails the task unless its reference is {@code optional}, in
 * which case the variable or file is left out; a refusal fails it whatever {@code optional} says.
 */
final class ObjectReads {

    /**
     * What the references came to.
     *
     * @param env   the values of the {@code valueFrom} variables, by index in {@code env}
     * @param files each projection's files by relative path, by its directory relative to the task's
     */
    record Resolved(Map<Integer, String> env, Map<String, Map<String, FileContent>> files) {}

    private final Credentials source;
    private final String namespace;
    private final String token;
    private final Map<ObjectRef, Optional<Map<String, byte[]>>> read = new HashMap<>();

    private ObjectReads(Credentials source, String namespace, String token) {
        this.source = source;
        this.namespace = namespace;
        this.token = token;
    }

    static Resolved resolve(Credentials source, String namespace, String token, Task task) throws CredentialException {
        return new ObjectReads(source, namespace, token).resolve(task);
    }

    private Resolved resolve(Task task) throws CredentialException {
        Map<Integer, String> env = new HashMap<>();
        List<EnvVar> vars = task.getEnv() == null ? List.of() : task.getEnv();
        for (int i = 0; i < vars.size(); i++) {
            EnvVar v = vars.get(i);
            if (v.getValueFrom() == null) {
                continue;
            }
            boolean secret = v.getValueFrom().getSecretKeyRef() != null;
            KeySelector ref = secret
                    ? v.getValueFrom().getSecretKeyRef()
                    : v.getValueFrom().getConfigMapKeyRef();
            ObjectRef object =
                    new ObjectRef(secret ? ObjectRef.Kind.Secret : ObjectRef.Kind.ConfigMap, namespace, ref.getName());
            String use = "variable " + v.getName();
            Optional<Map<String, byte[]>> data = data(object, Boolean.TRUE.equals(ref.getOptional()), use);
            if (data.isEmpty()) {
                continue;
            }
            byte[] value = data.get().get(ref.getKey());
            if (value == null) {
                if (Boolean.TRUE.equals(ref.getOptional())) {
                    continue;
                }
                throw new CredentialException(
                        CredentialException.Reason.NOT_FOUND,
                        "key " + ref.getKey() + " is not in " + object + " (" + use
                                + "); add it, or mark the reference optional");
            }
            env.put(i, new String(value, StandardCharsets.UTF_8));
        }
        Map<String, Map<String, FileContent>> files = new LinkedHashMap<>();
        for (FileProjection f : task.effectiveFiles()) {
            files.put(f.effectiveDirectory(), files(f));
        }
        return new Resolved(env, files);
    }

    private Map<String, FileContent> files(FileProjection f) throws CredentialException {
        ObjectRef object = new ObjectRef(
                f.getSecret() != null ? ObjectRef.Kind.Secret : ObjectRef.Kind.ConfigMap, namespace, f.objectName());
        String use = "files in " + f.effectiveDirectory();
        Optional<Map<String, byte[]>> data = data(object, f.effectiveOptional(), use);
        Map<String, FileContent> out = new LinkedHashMap<>();
        if (data.isEmpty()) {
            return out;
        }
        if (f.getItems() == null) {
            data.get().forEach((key, bytes) -> out.put(key, new FileContent(bytes, f.effectiveMode())));
            return out;
        }
        for (KeyToPath item : f.getItems()) {
            byte[] bytes = data.get().get(item.getKey());
            if (bytes == null) {
                if (f.effectiveOptional()) {
                    continue;
                }
                throw new CredentialException(
                        CredentialException.Reason.NOT_FOUND,
                        "key " + item.getKey() + " is not in " + object + " (" + use
                                + "); add it, or mark the entry optional");
            }
            out.put(
                    item.getPath(),
                    new FileContent(bytes, item.getMode() != null ? item.getMode() : f.effectiveMode()));
        }
        return out;
    }

    /** The object's data, read once; empty when it is missing and optional. */
    private Optional<Map<String, byte[]>> data(ObjectRef object, boolean optional, String use)
            throws CredentialException {
        Optional<Map<String, byte[]>> data = read.get(object);
        if (data == null) {
            try {
                data = Optional.of(source.read(object, token));
            } catch (CredentialException e) {
                if (e.reason() != CredentialException.Reason.NOT_FOUND) {
                    throw new CredentialException(
                            e.reason(), "cannot read " + object + " (" + use + "): " + e.getMessage(), e);
                }
                data = Optional.empty();
            }
            read.put(object, data);
        }
        if (data.isEmpty() && !optional) {
            throw new CredentialException(
                    CredentialException.Reason.NOT_FOUND,
                    object + " was not found (" + use + "); create it, or mark the reference optional");
        }
        return data;
    }
}
