package dev.drover.state;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.EnvVar;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Short strings read from JSON into allocations, shared. The agent holds the same few values thousands of times over
 * ({@code default}, {@code SIGTERM}, {@code 5s}, {@code drover.dev/v1alpha1}, task names, times), in the informer's
 * cache, the runners' copies of specs and the statuses read back, each read on its own. A string of at most
 * {@link #MAX_LENGTH} characters is looked up in a fixed table by its hash: an equal one there is returned instead,
 * else it takes the slot. The table is lossy (a slot holds the last string that hashed to it), small (it keeps at most
 * {@link #SLOTS} strings alive) and lock-free (a String is immutable, so a racy read of a slot sees a whole one).
 *
 * <p>Only the string fields of the allocation's own classes, its metadata and its conditions are read so, not an
 * environment variable's literal value; every other string is read as Jackson reads it. Jackson's own deserializers
 * stay: untyped values (a task's driver config) keep its non-recursive reader, which a deserializer of its own for
 * strings would turn off, and each field is still set through Blackbird's generated setter, not reflection.
 */
public final class SharedStrings {

    /** Longer strings (uids, messages) are mostly unique and are read as they are. */
    static final int MAX_LENGTH = 32;

    static final int SLOTS = 4096;

    /** The agent's table, which every mapper from {@link Jackson} reads through. */
    static final SharedStrings AGENT = new SharedStrings();

    private final String[] table = new String[SLOTS];

    /** {@code s}, or an equal string read before. */
    public String share(String s) {
        if (s == null || s.length() > MAX_LENGTH) {
            return s;
        }
        int h = s.hashCode();
        int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
        String known = table[slot];
        if (s.equals(known)) {
            return known;
        }
        table[slot] = s;
        return s;
    }

    /** The beans whose string fields are read shared: the allocation's classes but a literal env value, its metadata, its conditions. */
    static boolean allocationPart(Class<?> bean) {
        return (bean.getPackage() == Allocation.class.getPackage() && bean != EnvVar.class)
                || bean == ObjectMeta.class
                || bean == Condition.class;
    }

    /**
     * The module that makes a mapper read the string fields of {@code beans} through this table. Register it before
     * Blackbird's: modules registered later change a bean's properties first, so Blackbird has made its fast setter by
     * the time a property is wrapped here, and the wrapper sets through it.
     */
    SimpleModule module(Predicate<Class<?>> beans) {
        return new SimpleModule("drover-shared-strings").setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public BeanDeserializerBuilder updateBuilder(
                    DeserializationConfig config, BeanDescription description, BeanDeserializerBuilder builder) {
                if (!beans.test(description.getBeanClass())) {
                    return builder;
                }
                List<SettableBeanProperty> properties = new ArrayList<>();
                builder.getProperties().forEachRemaining(properties::add);
                for (SettableBeanProperty p : properties) {
                    if (p.getType().hasRawClass(String.class)) {
                        builder.addOrReplaceProperty(new SharedStringProperty(p, SharedStrings.this), true);
                    }
                }
                return builder;
            }
        });
    }

    /** A string property whose JSON string is set shared; anything else (a number, a null) is read as before. */
    static final class SharedStringProperty extends SettableBeanProperty.Delegating {

        private final SharedStrings strings;

        SharedStringProperty(SettableBeanProperty property, SharedStrings strings) {
            super(property);
            this.strings = strings;
        }

        /** The property this one sets through. */
        SettableBeanProperty wrapped() {
            return delegate;
        }

        @Override
        protected SettableBeanProperty withDelegate(SettableBeanProperty property) {
            return new SharedStringProperty(property, strings);
        }

        @Override
        public void deserializeAndSet(JsonParser p, DeserializationContext ctxt, Object instance) throws IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                delegate.set(instance, strings.share(p.getText()));
            } else {
                delegate.deserializeAndSet(p, ctxt, instance);
            }
        }

        @Override
        public Object deserializeSetAndReturn(JsonParser p, DeserializationContext ctxt, Object instance)
                throws IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                return delegate.setAndReturn(instance, strings.share(p.getText()));
            }
            return delegate.deserializeSetAndReturn(p, ctxt, instance);
        }
    }
}
