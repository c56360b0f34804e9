package dev.drover.image;

import dev.drover.common.UserText;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * A user name and password (or an identity token as password) for one registry, as a
 * {@code kubernetes.io/dockerconfigjson} Secret holds them. Its {@code toString} never shows the password.
 */
public record RegistryCredentials(String username, String password) {

    /** The value of an {@code Authorization: Basic} header with these credentials. */
    String basic() {
        return "Basic "
                + Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "RegistryCredentials[username=" + UserText.quote(username) + ", password=(hidden)]";
    }

    /** Who the credentials are, for keying what they won: a digest of both, so equal credentials share. */
    String fingerprint() {
        return Digest.of((username + "\u0000" + password).getBytes(StandardCharsets.UTF_8))
                .hex();
    }
}
