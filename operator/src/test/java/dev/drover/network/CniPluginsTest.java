package dev.drover.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CniPluginsTest {

    @TempDir
    Path bin;

    @Test
    void aMissingPluginDirSaysWhichPluginWhereAndWhatToDo() {
        CniPlugins plugins = new CniPlugins(bin.resolve("opt/cni/bin"));

        assertThatThrownBy(() -> plugins.invoke(CniCommand.ADD, "a1", null, "eth0", config("bridge")))
                .isInstanceOf(CniException.class)
                .hasMessageContaining("the CNI plugin bridge is not in " + bin.resolve("opt/cni/bin"))
                .hasMessageContaining("no such directory")
                .hasMessageContaining("cniBinDir")
                .hasMessageContaining("containernetworking-plugins")
                .hasMessageContaining("/usr/lib/cni");
    }

    @Test
    void aTypeThatIsNoPlainNameIsRefusedUnrun() throws Exception {
        script("evil", "touch " + bin.resolve("ran") + "\n");
        CniPlugins plugins = new CniPlugins(bin);
        for (String type : new String[] {"../" + bin.getFileName() + "/evil", "/bin/sh", "", ".hidden"}) {
            assertThatThrownBy(() -> plugins.invoke(CniCommand.ADD, "a1", null, "eth0", config(type)))
                    .as(type)
                    .isInstanceOf(CniException.class)
                    .hasMessageContaining("not a CNI plugin type");
        }
        assertThat(bin.resolve("ran")).doesNotExist();
    }

    @Test
    void thePluginGetsTheCniEnvironmentAndItsConfigAndItsResultIsAnswered() throws Exception {
        script(
                "echoer",
                "env > " + bin.resolve("env") + "\ncat > " + bin.resolve("stdin") + "\n"
                        + "echo '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.1.2.3/24\"}]}'\n");
        ObjectNode result =
                new CniPlugins(bin).invoke(CniCommand.ADD, "a1", Path.of("/x/ns"), "eth0", config("echoer"));

        assertThat(result.at("/ips/0/address").asText()).isEqualTo("10.1.2.3/24");
        assertThat(Files.readAllLines(bin.resolve("env")))
                .contains(
                        "CNI_COMMAND=ADD",
                        "CNI_CONTAINERID=a1",
                        "CNI_NETNS=/x/ns",
                        "CNI_IFNAME=eth0",
                        "CNI_PATH=" + bin)
                .anyMatch(l -> l.startsWith("PATH=") && l.contains("/usr/sbin"))
                .noneMatch(l -> l.startsWith("HOME=") || l.startsWith("JAVA_HOME="));
        assertThat(CniPlugins.JSON.readTree(bin.resolve("stdin").toFile())).isEqualTo(config("echoer"));
    }

    @Test
    void aPluginErrorIsAnExceptionNamingThePluginItsMessageAndCode() throws Exception {
        script(
                "failing",
                "echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"no more addresses\","
                        + "\"details\":\"range full\"}'\nexit 1\n");

        assertThatThrownBy(() -> new CniPlugins(bin).invoke(CniCommand.ADD, "a1", null, "eth0", config("failing")))
                .isInstanceOfSatisfying(CniException.class, e -> {
                    assertThat(e.plugin()).isEqualTo("failing");
                    assertThat(e.code()).isEqualTo(11);
                })
                .hasMessage("the CNI plugin failing failed ADD: no more addresses (range full) [code 11]");
    }

    @Test
    void hugeOrNonJsonOutputIsBoundedAndCut() throws Exception {
        script("flood", "head -c 5000000 /dev/zero | tr '\\0' 'x'\nexit 0\n");
        script("garbage", "printf '\\033[31mnot json %s' \"$(head -c 20000 /dev/zero | tr '\\0' y)\"\nexit 2\n");
        script("liar", "echo '[1,2,3]'\n");
        CniPlugins plugins = new CniPlugins(bin);

        assertThatThrownBy(() -> plugins.invoke(CniCommand.ADD, "a1", null, "eth0", config("flood")))
                .hasMessage("the CNI plugin flood failed ADD: it wrote more than 1048576 bytes");
        assertThatThrownBy(() -> plugins.invoke(CniCommand.ADD, "a1", null, "eth0", config("garbage")))
                .satisfies(e -> assertThat(e.getMessage())
                        .startsWith("the CNI plugin garbage failed ADD: exit status 2: \\u001b[31mnot json yyy")
                        .endsWith("(20064 characters)")
                        .hasSizeLessThanOrEqualTo(600)
                        .doesNotContain("\033"));
        assertThatThrownBy(() -> plugins.invoke(CniCommand.ADD, "a1", null, "eth0", config("liar")))
                .hasMessage("the CNI plugin liar failed ADD: its answer is no JSON object: [1,2,3]");
    }

    @Test
    void aPluginPastItsTimeIsKilled() throws Exception {
        script("hang", "sleep 30 &\nwait\n");
        CniPlugins plugins = new CniPlugins(bin, PluginLauncher.DIRECT, Duration.ofMillis(500));
        long start = System.nanoTime();

        assertThatThrownBy(() -> plugins.invoke(CniCommand.DEL, "a1", null, "eth0", config("hang")))
                .hasMessageContaining("the CNI plugin hang failed DEL: it ran past its time limit and was killed");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aDelOrCheckThatWritesNothingSucceeds() throws Exception {
        script("quiet", "exit 0\n");
        assertThat(new CniPlugins(bin).invoke(CniCommand.DEL, "a1", null, "eth0", config("quiet")))
                .isEmpty();
    }

    private static ObjectNode config(String type) {
        ObjectNode c = CniPlugins.JSON.createObjectNode();
        c.put("cniVersion", "1.0.0").put("name", "drover").put("type", type);
        return c;
    }

    private void script(String name, String body) throws Exception {
        Path p = bin.resolve(name);
        Files.writeString(p, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
    }
}
