package dev.drover.admission;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kubernetes resource quantity ({@code 250m}, {@code 0.1}, {@code 128Mi}, {@code 1G}, {@code 1e3}) read exactly:
 * a number with an optional sign and decimal point, then a binary suffix ({@code Ki} to {@code Ei}), a decimal one
 * ({@code n u m k M G T P E}) or a decimal exponent ({@code e3}, {@code E-2}). Exact where fabric8's {@code Quantity}
 * is not ({@code Ei} goes through a double there), and strict where the API server is: nothing else is a quantity.
 */
final class KubeQuantity {

    /** The longest text read: far longer than any quantity the API server stores. */
    static final int MAX_LENGTH = 64;

    private static final Pattern QUANTITY = Pattern.compile(
            "([+-]?)(\\d+(?:\\.\\d*)?|\\.\\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\\d{1,3})|([numkMGTPE]))?");

    private static final BigDecimal MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private KubeQuantity() {}

    /**
     * The amount {@code text} stands for.
     *
     * @throws IllegalArgumentException saying why it is no quantity, or a negative one (requests never are), or one
     *     past {@link Long#MAX_VALUE}
     */
    static BigDecimal parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("is empty");
        }
        if (text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("is longer than " + MAX_LENGTH + " characters");
        }
        Matcher m = QUANTITY.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("is not a quantity such as 250m, 0.5, 128Mi or 1G");
        }
        BigDecimal amount = new BigDecimal(m.group(2));
        if (m.group(3) != null) {
            int power = 10 * (1 + "KMGTPE".indexOf(m.group(3).charAt(0)));
            amount = amount.multiply(new BigDecimal(BigInteger.ONE.shiftLeft(power)));
        } else if (m.group(4) != null) {
            amount = amount.scaleByPowerOfTen(Integer.parseInt(m.group(4)));
        } else if (m.group(5) != null) {
            amount = amount.scaleByPowerOfTen(decimalPower(m.group(5).charAt(0)));
        }
        if (m.group(1).equals("-") && amount.signum() != 0) {
            throw new IllegalArgumentException("is negative");
        }
        if (amount.compareTo(MAX) > 0) {
            throw tooLarge();
        }
        return amount;
    }

    /** {@code amount} in thousandths, rounded up as kube-scheduler's {@code MilliValue} does. */
    static long millis(BigDecimal amount) {
        return whole(amount.scaleByPowerOfTen(3));
    }

    /** {@code amount} rounded up to a whole number, as kube-scheduler's {@code Value} does. */
    static long whole(BigDecimal amount) {
        if (amount.compareTo(MAX) > 0) {
            throw tooLarge();
        }
        return amount.setScale(0, RoundingMode.CEILING).longValueExact();
    }

    private static IllegalArgumentException tooLarge() {
        return new IllegalArgumentException("is larger than " + Long.MAX_VALUE);
    }

    private static int decimalPower(char suffix) {
        return switch (suffix) {
            case 'n' -> -9;
            case 'u' -> -6;
            case 'm' -> -3;
            case 'k' -> 3;
            case 'M' -> 6;
            case 'G' -> 9;
            case 'T' -> 12;
            case 'P' -> 15;
            default -> 18; // E
        };
    }
}
