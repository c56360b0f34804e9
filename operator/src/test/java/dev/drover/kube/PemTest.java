package dev.drover.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.drover.cli.kube.Openssl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Private keys in each PEM form a kubeconfig holds them in, read into keys that sign what their certificate checks. */
class PemTest {

    @TempDir
    Path dir;

    /** Signs with {@code key} and verifies with the certificate: the key read is the certificate's. */
    static void assertPairs(PrivateKey key, X509Certificate certificate) throws Exception {
        String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update("drover".getBytes(StandardCharsets.UTF_8));
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(certificate.getPublicKey());
        verifier.update("drover".getBytes(StandardCharsets.UTF_8));
        assertThat(verifier.verify(signature)).isTrue();
    }

    X509Certificate selfSigned(Openssl o, String key) throws Exception {
        o.run("req", "-x509", "-key", key, "-out", key + ".crt", "-subj", "/CN=k", "-days", "1");
        return Pem.certificates(o.bytes(key + ".crt"), "the test certificate").getFirst();
    }

    @Test
    void rsaKeysInPkcs1AndPkcs8AreRead() throws Exception {
        Openssl o = new Openssl(dir);
        o.run("genrsa", "-traditional", "-out", "rsa1.key", "2048");
        o.run("pkcs8", "-topk8", "-nocrypt", "-in", "rsa1.key", "-out", "rsa8.key");
        assertThat(Files.readString(dir.resolve("rsa1.key"))).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve("rsa8.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        X509Certificate certificate = selfSigned(o, "rsa1.key");
        assertPairs(Pem.privateKey(o.bytes("rsa1.key"), "k"), certificate);
        assertPairs(Pem.privateKey(o.bytes("rsa8.key"), "k"), certificate);
    }

    @Test
    void ecKeysInSec1AndPkcs8AreRead() throws Exception {
        Openssl o = new Openssl(dir);
        for (String curve : new String[] {"prime256v1", "secp384r1"}) {
            o.run("ecparam", "-name", curve, "-genkey", "-out", "ec1.key"); // with its EC PARAMETERS block first
            o.run("pkcs8", "-topk8", "-nocrypt", "-in", "ec1.key", "-out", "ec8.key");
            assertThat(Files.readString(dir.resolve("ec1.key"))).contains("-----BEGIN EC PRIVATE KEY-----");
            X509Certificate certificate = selfSigned(o, "ec1.key");
            assertPairs(Pem.privateKey(o.bytes("ec1.key"), "k"), certificate);
            assertPairs(Pem.privateKey(o.bytes("ec8.key"), "k"), certificate);
        }
    }

    @Test
    void severalCertificatesAreAllRead() throws Exception {
        Openssl o = new Openssl(dir).pki();
        byte[] bundle = (Files.readString(dir.resolve("ca.crt")) + Files.readString(dir.resolve("client.crt")))
                .getBytes(StandardCharsets.US_ASCII);
        assertThat(Pem.certificates(bundle, "the bundle"))
                .extracting(c -> c.getSubjectX500Principal().getName())
                .containsExactly("CN=test-ca", "CN=alice");
    }

    @Test
    void whatIsNotAUsableKeyIsOneSentence() throws Exception {
        Openssl o = new Openssl(dir);
        o.run("genrsa", "-aes128", "-passout", "pass:x", "-traditional", "-out", "locked.key", "2048");
        assertThatThrownBy(() -> Pem.privateKey(o.bytes("locked.key"), "the client key"))
                .isInstanceOf(PemException.class)
                .hasMessageStartingWith("the client key is encrypted");
        o.run("pkcs8", "-topk8", "-in", "locked.key", "-passin", "pass:x", "-passout", "pass:y", "-out", "locked8.key");
        assertThatThrownBy(() -> Pem.privateKey(o.bytes("locked8.key"), "the client key"))
                .hasMessage("the client key is encrypted; kubectl drover needs it unencrypted");
        assertThatThrownBy(() -> Pem.privateKey("not a key".getBytes(StandardCharsets.US_ASCII), "the client key"))
                .hasMessage("the client key holds no PEM block (-----BEGIN ...-----)");
        byte[] garbage = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"
                .getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> Pem.privateKey(garbage, "the client key"))
                .hasMessage("the client key is a private key that cannot be read (RSA)");
        o.run("genrsa", "-out", "plain.key", "2048");
        selfSigned(o, "plain.key");
        assertThatThrownBy(() -> Pem.privateKey(o.bytes("plain.key.crt"), "the client key"))
                .hasMessage("the client key holds no private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)");
    }

    /** The old regex rescanned to the end from every BEGIN without an END: 1 MiB of them took hours. */
    @Test
    void beginLinesWithoutEndAreReadInLinearTime() {
        byte[] begins = "-----BEGIN A-----\n".repeat((1 << 20) / 18).getBytes(StandardCharsets.US_ASCII);
        StringBuilder labels = new StringBuilder();
        for (int i = 0; labels.length() < 1 << 20; i++) {
            labels.append("-----BEGIN L").append(i).append("-----\n");
        }
        byte[] distinct = labels.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] endsOnly =
                ("-----BEGIN A-----\n" + "-----END B-----\n".repeat(60_000)).getBytes(StandardCharsets.US_ASCII);
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            for (byte[] pem : new byte[][] {begins, distinct, endsOnly}) {
                assertThatThrownBy(() -> Pem.certificates(pem, "the kubeconfig's certificate-authority"))
                        .hasMessage("the kubeconfig's certificate-authority holds no PEM block (-----BEGIN ...-----)");
            }
        });
    }

    @Test
    void tooManyBlocksAreRefused() {
        byte[] many = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
                .repeat(Pem.MAX_BLOCKS + 1)
                .getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> Pem.certificates(many, "the bundle"))
                .hasMessage("the bundle holds more than 1000 PEM blocks");
    }

    /** A stray BEGIN or END, or a block with mismatched labels, does not hide the good blocks around it. */
    @Test
    void strayMarkersAroundABlockAreSkipped() throws Exception {
        Openssl o = new Openssl(dir).pki();
        String ca = Files.readString(dir.resolve("ca.crt"));
        String client = Files.readString(dir.resolve("client.crt"));
        byte[] messy = ("-----BEGIN A-----\nstray\n" + ca + "-----END B-----\n-----BEGIN X-------END X-----\n"
                        + "-----BEGIN C-----\nAAAA\n-----END D-----\n" + client + "-----BEGIN TAIL-----")
                .getBytes(StandardCharsets.US_ASCII);
        assertThat(Pem.certificates(messy, "the bundle"))
                .extracting(c -> c.getSubjectX500Principal().getName())
                .containsExactly("CN=test-ca", "CN=alice");
    }
}
