package dev.drover.devices.cdi;

import java.util.regex.Pattern;

/**
 * The names CDI gives devices: a kind {@code vendor/class} ({@code nvidia.com/gpu}) and a fully qualified device name
 * {@code vendor/class=name} ({@code nvidia.com/gpu=GPU-...}). The vendor is a domain-like name (letters, digits,
 * {@code .} and {@code -}), the class letters, digits, {@code _} and {@code -}, the device name letters, digits,
 * {@code _ . : -}; each starts and ends with a letter or digit and is at most 128 characters.
 */
final class CdiNames {

    private static final String VENDOR = "[A-Za-z0-9](?:[A-Za-z0-9.-]{0,126}[A-Za-z0-9])?";
    private static final String CLASS = "[A-Za-z0-9](?:[A-Za-z0-9_-]{0,126}[A-Za-z0-9])?";
    private static final String DEVICE = "[A-Za-z0-9](?:[A-Za-z0-9_.:-]{0,126}[A-Za-z0-9])?";

    private static final Pattern KIND = Pattern.compile(VENDOR + "/" + CLASS);
    private static final Pattern NAME = Pattern.compile(DEVICE);
    private static final Pattern QUALIFIED = Pattern.compile(VENDOR + "/" + CLASS + "=" + DEVICE);

    private CdiNames() {}

    static boolean isKind(String s) {
        return KIND.matcher(s).matches();
    }

    static boolean isDeviceName(String s) {
        return NAME.matcher(s).matches();
    }

    static boolean isQualified(String s) {
        return QUALIFIED.matcher(s).matches();
    }
}
