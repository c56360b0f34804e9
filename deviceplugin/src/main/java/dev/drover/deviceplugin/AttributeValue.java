package dev.drover.deviceplugin;

import java.util.Objects;

/** A typed attribute of a device group: text, integer or float (each with a unit), or boolean. */
public sealed interface AttributeValue {

    /** The value as a person reads it: {@code 15360 MiB}, {@code 7.5}, {@code true}. */
    String display();

    static AttributeValue text(String value) {
        return new Text(value);
    }

    static AttributeValue integer(long value, Unit unit) {
        return new Int(value, unit);
    }

    static AttributeValue decimal(double value, Unit unit) {
        return new Float(value, unit);
    }

    static AttributeValue bool(boolean value) {
        return new Bool(value);
    }

    record Text(String value) implements AttributeValue {
        public Text {
            Objects.requireNonNull(value, "value");
        }

        @Override
        public String display() {
            return value;
        }
    }

    record Int(long value, Unit unit) implements AttributeValue {
        public Int {
            Objects.requireNonNull(unit, "unit");
        }

        @Override
        public String display() {
            return unit == Unit.NONE ? Long.toString(value) : value + " " + unit.symbol();
        }
    }

    record Float(double value, Unit unit) implements AttributeValue {
        public Float {
            Objects.requireNonNull(unit, "unit");
        }

        @Override
        public String display() {
            return unit == Unit.NONE ? Double.toString(value) : value + " " + unit.symbol();
        }
    }

    record Bool(boolean value) implements AttributeValue {
        @Override
        public String display() {
            return Boolean.toString(value);
        }
    }
}
