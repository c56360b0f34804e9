package dev.drover.api.crd;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ListMapKeys;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Writes {@code x-kubernetes-list-type: map} and its keys for the list fields marked {@link ListMapKeys}, walking the
 * model beside its schema (fabric8 7.5.2 has no annotation for either extension). A key that is not a required field
 * of the items fails the build: the API server would refuse such a CRD.
 */
final class ListMaps implements CrdStep {

    private static final String MODEL_PACKAGE = AllocationSpec.class.getPackageName();

    @Override
    public void apply(CustomResourceDefinition crd) {
        for (CustomResourceDefinitionVersion version : crd.getSpec().getVersions()) {
            Map<String, JSONSchemaProps> top =
                    version.getSchema().getOpenAPIV3Schema().getProperties();
            walk(AllocationSpec.class, top.get("spec"), ".spec");
            walk(AllocationStatus.class, top.get("status"), ".status");
        }
    }

    private static void walk(Class<?> type, JSONSchemaProps schema, String path) {
        if (schema == null || schema.getProperties() == null) {
            return;
        }
        for (Field field : type.getDeclaredFields()) {
            JSONSchemaProps property = schema.getProperties().get(field.getName());
            if (property == null) {
                continue;
            }
            String fieldPath = path + "." + field.getName();
            ListMapKeys keys = field.getAnnotation(ListMapKeys.class);
            if (keys != null) {
                mark(property, List.of(keys.value()), fieldPath);
            }
            descend(field.getGenericType(), property, fieldPath);
        }
    }

    private static void descend(Type type, JSONSchemaProps property, String path) {
        if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
            Type[] args = p.getActualTypeArguments();
            if (List.class.isAssignableFrom(raw) && property.getItems() != null) {
                descend(args[0], property.getItems().getSchema(), path + "[]");
            } else if (Map.class.isAssignableFrom(raw)
                    && property.getAdditionalProperties() != null
                    && property.getAdditionalProperties().getSchema() != null) {
                descend(args[1], property.getAdditionalProperties().getSchema(), path + "{}");
            }
        } else if (type instanceof Class<?> c
                && !c.isEnum()
                && c.getPackageName().equals(MODEL_PACKAGE)) {
            walk(c, property, path);
        }
    }

    private static void mark(JSONSchemaProps list, List<String> keys, String path) {
        if (!"array".equals(list.getType()) || list.getItems() == null) {
            throw new IllegalStateException(path + " is marked @ListMapKeys but is not a list");
        }
        List<String> required = list.getItems().getSchema().getRequired();
        for (String key : keys) {
            if (required == null || !required.contains(key)) {
                throw new IllegalStateException(path + ": list map key " + key
                        + " must be a required field of its items" + " (required: " + required + ")");
            }
        }
        list.setXKubernetesListType("map");
        list.setXKubernetesListMapKeys(Arrays.asList(keys.toArray(String[]::new)));
    }
}
