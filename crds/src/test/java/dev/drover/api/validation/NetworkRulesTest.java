package dev.drover.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.NetworkMode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.junit.jupiter.api.Test;

class NetworkRulesTest {

    private static Allocation parse(String specYaml) {
        String yaml = "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: me}\nspec:\n"
                + ("nodeName: n\n" + specYaml).indent(2);
        return Serialization.unmarshal(yaml, Allocation.class);
    }

    private static List<Violation> validate(String specYaml) {
        return AllocationValidator.validate(parse(specYaml));
    }

    @Test
    void bridgeAllocationWithPortsServicesAndANamedCheckIsValid() {
        Allocation a = parse("""
                network:
                  mode: bridge
                  ports: [{name: http, to: 8080}, {name: admin-1, static: 9000}]
                services: [{name: web, port: http}, {name: web, port: admin-1}]
                tasks:
                - name: web
                  driver: oci
                  checks: [{name: up, type: http, port: http}, {name: tcp, type: tcp, port: 9000}]
                """);
        assertThat(AllocationValidator.validate(a)).isEmpty();
        assertThat(a.getSpec().effectiveNetworkMode()).isEqualTo(NetworkMode.BRIDGE);
        assertThat(a.getSpec().getNetwork().port("admin-1").getStatic()).isEqualTo(9000);
        assertThat(a.getSpec().getTasks().get(0).getChecks().get(0).getPort().getStrVal())
                .isEqualTo("http");
        assertThat(Serialization.asYaml(a.getSpec().getNetwork())).contains("static: 9000");
    }

    @Test
    void networkIsTheNodesWhenNotGiven() {
        assertThat(parse("tasks: [{name: a, driver: raw_exec}]").getSpec().effectiveNetworkMode())
                .isEqualTo(NetworkMode.HOST);
    }

    @Test
    void rawExecTaskCannotJoinABridgeOrNoneNetwork() {
        assertThat(validate("network: {mode: bridge}\ntasks: [{name: a, driver: exec}, {name: b, driver: raw_exec}]"))
                .containsExactly(new Violation(
                        "spec.tasks[1].driver",
                        "raw_exec runs in the node's network and cannot join a bridge network; use exec or oci, or"
                                + " network mode host"));
        assertThat(validate("network: {mode: none}\ntasks: [{name: b, driver: raw_exec}]"))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].driver");
    }

    @Test
    void portsAreNamedOnceAndHoldDistinctStaticPorts() {
        assertThat(validate("""
                network:
                  mode: bridge
                  ports: [{name: http, static: 80}, {name: http, static: 81}, {name: web, static: 80}, {name: "123"},
                          {name: Bad_Name}, {name: x, to: 70000}]
                tasks: [{name: a, driver: exec}]
                """))
                .extracting(Violation::path)
                .containsExactly(
                        "spec.network.ports[1].name",
                        "spec.network.ports[2].static",
                        "spec.network.ports[3].name",
                        "spec.network.ports[4].name",
                        "spec.network.ports[5].to");
    }

    @Test
    void toMapsOnlyIntoABridgeAndANoneNetworkHasNoPorts() {
        assertThat(validate("network: {ports: [{name: http, to: 8080}]}\ntasks: [{name: a, driver: raw_exec}]"))
                .extracting(Violation::path)
                .containsExactly("spec.network.ports[0].to");
        assertThat(validate("network: {ports: [{name: http, static: 8080, to: 8080}]}\n"
                        + "tasks: [{name: a, driver: raw_exec}]"))
                .isEmpty();
        assertThat(validate("network: {mode: none, ports: [{name: http}]}\ntasks: [{name: a, driver: exec}]"))
                .containsExactly(new Violation(
                        "spec.network.ports", "a none network has no ports: nothing reaches it; use bridge or host"));
    }

    @Test
    void serviceAndCheckMustNameAPortTheAllocationHas() {
        assertThat(validate("""
                network: {ports: [{name: http}]}
                services: [{name: web, port: metrics}, {name: Web, port: http}]
                tasks:
                - name: a
                  driver: mock
                  checks: [{name: up, type: tcp, port: admin}, {name: n, type: tcp, port: "-x"}]
                """))
                .containsExactly(
                        new Violation(
                                "spec.tasks[0].checks[1].port",
                                "\"-x\" is neither a port number nor a port name (lower-case letters, digits and"
                                        + " '-', at most 15)"),
                        new Violation(
                                "spec.services[0].port",
                                "\"metrics\" is not a port of spec.network.ports; name one of http"),
                        new Violation(
                                "spec.services[1].name",
                                "\"Web\" is not a Service name (a DNS-1123 label: lower-case letters, digits and"
                                        + " '-', at most 63 characters)"),
                        new Violation(
                                "spec.tasks[0].checks[0].port",
                                "\"admin\" is not a port of spec.network.ports; name one of http or give a number"));
    }
}
