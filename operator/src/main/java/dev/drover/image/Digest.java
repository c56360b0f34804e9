package dev.drover.image;

import dev.drover.common.UserText;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * A content digest as OCI names one ({@code sha256:} and 64 lowercase hex digits). Only SHA-256 is taken: it is what
 * every registry serves, and a digest the agent cannot check is one it must not trust.
 */
public record Digest(String hex) {

    private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");

    public Digest {
        if (hex == null || !HEX.matcher(hex).matches()) {
            throw new IllegalArgumentException(
                    "digest " + UserText.quote(hex) + " is not sha256:<64 lowercase hex digits>");
        }
    }

    /** Reads {@code sha256:HEX}; anything else (another algorithm, upper case, a short digest) is refused. */
    public static Digest parse(String s) {
        if (s == null || !s.startsWith("sha256:")) {
            throw new IllegalArgumentException(
                    "digest " + UserText.quote(s) + " is not sha256:<64 lowercase hex digits>");
        }
        return new Digest(s.substring("sha256:".length()));
    }

    /** The digest of {@code bytes}. */
    public static Digest of(byte[] bytes) {
        return new Digest(HexFormat.of().formatHex(sha256().digest(bytes)));
    }

    /** A fresh SHA-256 to feed as bytes arrive. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }

    /** Whether {@code digest}, a finished SHA-256, is this one. */
    public boolean matches(MessageDigest digest) {
        return HexFormat.of().formatHex(digest.digest()).equals(hex);
    }

    @Override
    public String toString() {
        return "sha256:" + hex;
    }
}
