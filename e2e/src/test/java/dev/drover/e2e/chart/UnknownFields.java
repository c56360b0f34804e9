package dev.drover.e2e.chart;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Fields a fabric8 model did not recognise. fabric8 keeps unknown YAML keys in
 * {@code additionalProperties} instead of failing, so a misspelled template key
 * ({@code hostPid}, {@code fieldpath}) would otherwise parse without a trace.
 */
final class UnknownFields {

    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";

    private UnknownFields() {}

    /** Paths such as {@code spec.template.spec.hostPid} of every unknown field under {@code root}. */
    static List<String> in(Object root) {
        List<String> found = new ArrayList<>();
        walk(root, "", found);
        return found;
    }

    private static void walk(Object value, String path, List<String> found) {
        switch (value) {
            case null -> {}
            case List<?> list -> {
                for (int i = 0; i < list.size(); i++) {
                    walk(list.get(i), path + "[" + i + "]", found);
                }
            }
            case Map<?, ?> map -> map.forEach((k, v) -> walk(v, path + "." + k, found));
            default -> {
                if (value.getClass().getPackageName().startsWith(MODEL_PACKAGE)) {
                    walkModel(value, path, found);
                }
            }
        }
    }

    private static void walkModel(Object model, String path, List<String> found) {
        for (Method getter : model.getClass().getMethods()) {
            if (getter.getParameterCount() != 0
                    || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass() == Object.class
                    || !getter.getName().startsWith("get")) {
                continue;
            }
            Object child = invoke(getter, model);
            String name = decapitalize(getter.getName().substring(3));
            if (name.equals("additionalProperties")) {
                if (child instanceof Map<?, ?> extra) {
                    extra.keySet().forEach(k -> found.add(join(path, k.toString())));
                }
            } else {
                walk(child, join(path, name), found);
            }
        }
    }

    private static Object invoke(Method getter, Object target) {
        try {
            return getter.invoke(target);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new AssertionError("cannot read " + getter + ": " + e, e);
        }
    }

    private static String join(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    private static String decapitalize(String s) {
        return s.isEmpty() ? s : Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
}
