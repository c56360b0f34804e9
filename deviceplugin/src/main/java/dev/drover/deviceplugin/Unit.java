package dev.drover.deviceplugin;

import java.util.Arrays;
import java.util.Optional;

/** Units of numeric device attributes; {@link #symbol()} is how they are written in files and labels. */
public enum Unit {
    NONE(""),
    BYTE("B"),
    KIB("KiB"),
    MIB("MiB"),
    GIB("GiB"),
    MHZ("MHz"),
    GHZ("GHz"),
    MILLIWATT("mW"),
    WATT("W"),
    CELSIUS("C"),
    PERCENT("%");

    private final String symbol;

    Unit(String symbol) {
        this.symbol = symbol;
    }

    public String symbol() {
        return symbol;
    }

    /** The unit written as {@code symbol}, matched exactly (units are case-sensitive: mW is not MW). */
    public static Optional<Unit> ofSymbol(String symbol) {
        return Arrays.stream(values())
                .filter(u -> u != NONE && u.symbol.equals(symbol))
                .findFirst();
    }
}
