package dev.drover.cli.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
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
                .isInstanceOf(KubeconfigException.class)
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
}
