package dev.drover.cli.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The kubeconfig files read and merged as kubectl does: {@code --kubeconfig}, else each file {@code KUBECONFIG}
 * names (separated by ':'; missing ones are passed over), else {@code ~/.kube/config}. Clusters, users and contexts
 * are maps by name in which the first file to name one wins, and so does the first {@code current-context}. Each
 * entry remembers its file's directory, against which its relative paths resolve. YAML (SnakeYAML), or JSON (Jackson).
 */
public final class KubeconfigFiles {

    /** A kubeconfig is small (certificates inline are a few KiB each): a larger file is not one. */
    static final int MAX_BYTES = 4 << 20;

    private static final int MAX_ENTRIES = 10_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A named cluster, user or context, with the directory of the file that defined it. */
    record Entry(String name, Map<?, ?> fields, Path dir, Path file) {}

    /** The merged kubeconfig: entries by name, in file order. */
    record Merged(
            Map<String, Entry> clusters,
            Map<String, Entry> users,
            Map<String, Entry> contexts,
            String currentContext) {}

    private KubeconfigFiles() {}

    /** The files to read, or an empty list when there is none (then a pod's service account may serve). */
    static List<Path> locate(String flag, Map<String, String> env, Path home) throws KubeconfigException {
        if (flag != null) {
            Path file = Path.of(flag);
            if (!Files.isReadable(file)) {
                throw new KubeconfigException("cannot read the kubeconfig " + UserText.cutEscaped(flag, 300)
                        + ": no such file, or not readable");
            }
            return List.of(file);
        }
        String list = env.get("KUBECONFIG");
        if (list != null && !list.isBlank()) {
            List<Path> files = new ArrayList<>();
            for (String f : list.split(File.pathSeparator)) {
                if (!f.isBlank() && Files.isReadable(Path.of(f)) && !files.contains(Path.of(f))) {
                    files.add(Path.of(f));
                }
            }
            if (files.isEmpty()) {
                throw new KubeconfigException(
                        "no kubeconfig: KUBECONFIG names no readable file (" + UserText.cutEscaped(list, 300)
                                + "); point it at your cluster's kubeconfig, or pass --kubeconfig FILE");
            }
            return files;
        }
        Path config = home.resolve(".kube").resolve("config");
        return Files.isReadable(config) ? List.of(config) : List.of();
    }

    static Merged read(List<Path> files) throws KubeconfigException {
        Map<String, Entry> clusters = new LinkedHashMap<>();
        Map<String, Entry> users = new LinkedHashMap<>();
        Map<String, Entry> contexts = new LinkedHashMap<>();
        String current = null;
        for (Path file : files) {
            Map<?, ?> doc = parse(file);
            Path dir = file.toAbsolutePath().getParent();
            add(doc, "clusters", "cluster", file, dir, clusters);
            add(doc, "users", "user", file, dir, users);
            add(doc, "contexts", "context", file, dir, contexts);
            String c = Fields.string(doc, "current-context", "the kubeconfig " + file);
            if (current == null && c != null && !c.isEmpty()) {
                current = c;
            }
        }
        return new Merged(clusters, users, contexts, current);
    }

    /** One file as YAML maps and lists (SnakeYAML's safe constructor: no objects, bounded aliases and depth). */
    static Map<?, ?> parse(Path file) throws KubeconfigException {
        if (!Files.isRegularFile(file)) { // a FIFO or a terminal would wait for ever
            throw fault(file, "not a regular file");
        }
        String text;
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw fault(file, "larger than " + (MAX_BYTES >> 20) + " MiB, which no kubeconfig is");
            }
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw fault(file, e.getMessage());
        }
        String notJson = null;
        if (text.stripLeading().startsWith("{")) {
            // JSON, which YAML reads too, except where it is indented with tabs
            try {
                return JSON.readValue(text, Map.class);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                // a YAML flow mapping ({apiVersion: v1, ...}) is no JSON: YAML may read it. Jackson's message quotes
                // the text (a token, say): only where it stopped is told
                var at = e.getLocation();
                notJson = at == null
                        ? "not JSON"
                        : "not JSON (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
            }
        }
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(20);
        options.setNestingDepthLimit(30);
        options.setCodePointLimit(MAX_BYTES);
        options.setAllowDuplicateKeys(true); // as kubectl: a key given twice is not an error (the last one counts)
        Object doc;
        try {
            doc = new Yaml(new SafeConstructor(options)).load(text);
        } catch (RuntimeException e) { // SnakeYAML's YAMLException and its kin: the first line says where
            String why = String.valueOf(e.getMessage()).lines().findFirst().orElse("not YAML");
            throw fault(file, notJson == null ? why : notJson + ", nor YAML (" + why + ")");
        }
        if (doc == null) {
            return Map.of();
        }
        if (!(doc instanceof Map<?, ?> map)) {
            throw fault(file, "not a kubeconfig (its top level is not a map of clusters, users and contexts)");
        }
        return map;
    }

    private static void add(Map<?, ?> doc, String list, String field, Path file, Path dir, Map<String, Entry> into)
            throws KubeconfigException {
        Object value = doc.get(list);
        if (value == null) {
            return;
        }
        if (!(value instanceof List<?> items)) {
            throw fault(file, list + " is not a list");
        }
        for (Object item : items) {
            if (!(item instanceof Map<?, ?> named)) {
                throw fault(file, "an entry of " + list + " is not a map with name and " + field);
            }
            String name = Fields.string(named, "name", "an entry of " + list + " in " + file);
            if (name == null) {
                throw fault(file, "an entry of " + list + " has no name");
            }
            Object fields = named.get(field);
            if (fields != null && !(fields instanceof Map<?, ?>)) {
                throw fault(file, list + " entry " + UserText.quote(name) + " has a " + field + " that is not a map");
            }
            if (into.size() >= MAX_ENTRIES) {
                throw fault(file, "more than " + MAX_ENTRIES + " " + list);
            }
            into.putIfAbsent(name, new Entry(name, fields == null ? Map.of() : (Map<?, ?>) fields, dir, file));
        }
    }

    private static KubeconfigException fault(Path file, String why) {
        return new KubeconfigException("cannot read the kubeconfig " + UserText.cutEscaped(file.toString(), 300) + ": "
                + UserText.cutEscaped(why, 300));
    }
}
