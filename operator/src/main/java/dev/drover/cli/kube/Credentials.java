package dev.drover.cli.kube;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The Authorization header a target's credentials make, each checked first: a token of visible ASCII only, a user
 * name and password without control characters. A credential that fails is an error naming where it came from, never
 * the credential (the JDK's own refusal of a header quotes the value, and a message reaches the terminal).
 */
final class Credentials {

    private Credentials() {}

    /** {@code Bearer token}, else {@code Basic} of the user name and password, else null (none). */
    static String authorization(String token, String tokenSource, KubeTarget target) throws KubeconfigException {
        if (token != null) {
            for (int i = 0; i < token.length(); i++) {
                char c = token.charAt(i);
                if (c < 0x21 || c > 0x7e) {
                    throw new KubeconfigException(tokenSource + " holds a character no token has (a control"
                            + " character, a space or a non-ASCII one); check it");
                }
            }
            return "Bearer " + token;
        }
        if (target.username() != null && target.password() != null) {
            String where = target.userSource() == null ? "the user" : target.userSource();
            for (String[] field : new String[][] {{"username", target.username()}, {"password", target.password()}}) {
                if (field[1].chars().anyMatch(Character::isISOControl)) {
                    throw new KubeconfigException(where + " " + field[0] + " holds a control character; check it");
                }
            }
            return "Basic "
                    + Base64.getEncoder()
                            .encodeToString(
                                    (target.username() + ":" + target.password()).getBytes(StandardCharsets.UTF_8));
        }
        return null;
    }
}
