package dev.drover.kube;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * PEM as kubeconfigs and CA files hold it: certificates (one or several), and a private key in PKCS#8
 * ({@code PRIVATE KEY}), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}). The JDK reads PKCS#8
 * only: the other two are wrapped into PKCS#8 here, which is a few bytes of DER around them.
 */
public final class Pem {

    private static final String BEGIN = "-----BEGIN ";
    private static final String END = "-----END ";
    private static final String DASHES = "-----";
    /** A CA bundle holds a few hundred certificates at most. */
    static final int MAX_BLOCKS = 1000;

    private static final int MAX_LABEL = 40;
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");
    private static final byte[] RSA_ALGORITHM = Der.sequence(Der.oid("1.2.840.113549.1.1.1"), Der.NULL);
    private static final String EC_PUBLIC_KEY = "1.2.840.10045.2.1";
    /** PKCS#8 algorithm identifiers (the OID's content bytes, in hex) the JDK has a key factory for. */
    private static final Map<String, String> ALGORITHMS = Map.of(
            "2a864886f70d010101", "RSA",
            "2a864886f70d01010a", "RSASSA-PSS",
            "2a8648ce3d0201", "EC",
            "2b6570", "Ed25519",
            "2b6571", "Ed448");

    private Pem() {}

    /** A PEM block: its label ({@code CERTIFICATE}) and its DER. */
    record Block(String label, byte[] der) {}

    /**
     * The blocks of {@code pem}, in one pass: each block is the last BEGIN line before the first END line after it,
     * when their labels agree (a BEGIN with no END after it ends the search, as nothing after it can close). Each
     * character is looked at a bounded number of times, whatever the text: a file of BEGIN lines alone is no work.
     */
    static List<Block> blocks(byte[] pem, String what) throws PemException {
        String text = new String(pem, StandardCharsets.US_ASCII);
        List<Block> blocks = new ArrayList<>();
        for (int from = 0; ; ) {
            int begin = text.indexOf(BEGIN, from);
            int end = begin < 0 ? -1 : text.indexOf(END, begin);
            if (end < 0) {
                break;
            }
            begin = text.lastIndexOf(BEGIN, end); // the BEGINs between had no END of their own
            int labelEnd = text.indexOf(DASHES, begin + BEGIN.length());
            int endLabelEnd = text.indexOf(DASHES, end + END.length());
            if (endLabelEnd < 0) {
                break; // no END line can follow
            }
            from = endLabelEnd + DASHES.length();
            String label = labelEnd < 0 || labelEnd + DASHES.length() > end
                    ? null
                    : text.substring(begin + BEGIN.length(), labelEnd);
            if (label == null || !isLabel(label) || !label.equals(text.substring(end + END.length(), endLabelEnd))) {
                continue;
            }
            if (blocks.size() == MAX_BLOCKS) {
                throw new PemException(what + " holds more than " + MAX_BLOCKS + " PEM blocks");
            }
            String body = text.substring(labelEnd + DASHES.length(), end);
            if (body.contains(":")) { // RFC 1421 headers: Proc-Type: 4,ENCRYPTED and DEK-Info
                throw new PemException(
                        what + " is encrypted (a PEM header such as Proc-Type); kubectl drover needs it unencrypted");
            }
            try {
                blocks.add(new Block(
                        label,
                        Base64.getDecoder().decode(WHITESPACE.matcher(body).replaceAll(""))));
            } catch (IllegalArgumentException e) {
                throw new PemException(what + " is not valid PEM (its base64 does not decode)");
            }
        }
        if (blocks.isEmpty()) {
            throw new PemException(what + " holds no PEM block (-----BEGIN ...-----)");
        }
        return blocks;
    }

    /** A label as PEM has them: 1 to 40 capital letters, digits and spaces ({@code RSA PRIVATE KEY}). */
    private static boolean isLabel(String label) {
        return !label.isEmpty()
                && label.length() <= MAX_LABEL
                && label.chars().allMatch(c -> c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ');
    }

    /** Every certificate in {@code pem}, in order. */
    public static List<X509Certificate> certificates(byte[] pem, String what) throws PemException {
        List<X509Certificate> certificates = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Block b : blocks(pem, what)) {
                if (b.label().equals("CERTIFICATE")) {
                    certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(b.der())));
                }
            }
        } catch (CertificateException e) {
            throw new PemException(what + " holds a certificate that cannot be read: " + e.getMessage());
        }
        if (certificates.isEmpty()) {
            throw new PemException(what + " holds no certificate (-----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /** The first private key in {@code pem}: PKCS#8, PKCS#1 RSA or SEC1 EC. */
    public static PrivateKey privateKey(byte[] pem, String what) throws PemException {
        for (Block b : blocks(pem, what)) {
            switch (b.label()) {
                case "PRIVATE KEY" -> {
                    return pkcs8(b.der(), what);
                }
                case "RSA PRIVATE KEY" -> {
                    return pkcs8(Der.sequence(Der.integer(0), RSA_ALGORITHM, Der.octetString(b.der())), what);
                }
                case "EC PRIVATE KEY" -> {
                    return pkcs8(ecToPkcs8(b.der(), what), what);
                }
                case "ENCRYPTED PRIVATE KEY" ->
                    throw new PemException(what + " is encrypted; kubectl drover needs it unencrypted");
                default -> {
                    // EC PARAMETERS before the key, or a certificate in the same file
                }
            }
        }
        throw new PemException(what + " holds no private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)");
    }

    /**
     * SEC1's {@code ECPrivateKey ::= SEQUENCE { version, privateKey OCTET STRING, [0] parameters, [1] publicKey }}
     * as PKCS#8, whose algorithm names the curve that {@code [0]} holds.
     */
    private static byte[] ecToPkcs8(byte[] sec1, String what) throws PemException {
        byte[] curve = null;
        try {
            for (Der.Element e : Der.children(Der.read(sec1, 0))) {
                if (e.tag() == 0xA0) {
                    curve = e.content();
                }
            }
        } catch (IllegalArgumentException e) {
            throw new PemException(what + " is not a valid EC private key (" + e.getMessage() + ")");
        }
        if (curve == null) {
            throw new PemException(what + " is an EC private key that does not name its curve");
        }
        byte[] algorithm = Der.sequence(Der.oid(EC_PUBLIC_KEY), curve);
        return Der.sequence(Der.integer(0), algorithm, Der.octetString(sec1));
    }

    private static PrivateKey pkcs8(byte[] der, String what) throws PemException {
        String algorithm;
        try {
            List<Der.Element> info = Der.children(Der.read(der, 0));
            algorithm = ALGORITHMS.get(HexFormat.of()
                    .formatHex(Der.children(info.get(1)).getFirst().content()));
        } catch (IllegalArgumentException | IndexOutOfBoundsException | java.util.NoSuchElementException e) {
            throw new PemException(what + " is not a valid PKCS#8 private key");
        }
        try {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException | RuntimeException e) { // a null algorithm: one the JDK lacks
            throw new PemException(what + " is a private key that cannot be read ("
                    + (algorithm == null ? "unknown algorithm" : algorithm) + ")");
        }
    }
}
