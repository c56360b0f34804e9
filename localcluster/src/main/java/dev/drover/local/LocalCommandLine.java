package dev.drover.local;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.Subcommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The commands and flags of {@code drover-local}, in one table that both the parser and {@code --help} read. */
final class LocalCommandLine {

    static final Flag KUBECONFIG =
            Flag.valued("--kubeconfig", null, "FILE", "where to write the kubeconfig for kubectl (required)");
    static final Flag PORT = Flag.valued("--port", null, "N", "the API server's port (default 0: a free one)");
    static final Flag KUBE_VERSION = Flag.valued(
            "--kube-version",
            null,
            "1.N",
            "behave as Kubernetes 1." + KubeVersion.OLDEST + " to 1." + KubeVersion.NEWEST_MINOR
                    + " where Drover depends on it (default 1." + KubeVersion.DEFAULT_MINOR
                    + "; 1.33 and newer serve pods/resize and run the kubelet stand-in's resizes; 1.36 serves and"
                    + " applies MutatingAdmissionPolicies)");
    static final Flag CHART =
            Flag.valued("--chart", null, "DIR", "the chart whose RBAC and gateway run (default" + " charts/drover)");
    static final Flag NODES = Flag.valued("--nodes", null, "a,b", "the nodes to register");
    static final Flag NODE_ALLOCATABLE = Flag.valued(
            "--node-allocatable",
            null,
            "cpu=N,memory=Q",
            "what each node may hold, against which its Pods are admitted and resized (default cpu=2,memory=8Gi)");
    static final Flag AGENT_KUBECONFIGS = Flag.valued(
            "--agent-kubeconfigs",
            null,
            "DIR",
            "applies the chart's RBAC,"
                    + " writes DIR/NODE.kubeconfig and DIR/NODE.peer-token per node and runs the gateway (DIR/gateway)");
    static final Flag DATA_DIR = Flag.valued(
            "--data-dir",
            null,
            "DIR",
            "the agent's state and allocation" + " directories (default .drover-local/data)");
    static final Flag METRICS_PORT = Flag.valued(
            "--metrics-port", null, "N", "serves /metrics, /healthz and /readyz" + " (default 0: a free port)");
    static final Flag API_PORT = Flag.valued(
            "--api-port", null, "N", "serves the agent's HTTPS API, docs/api.md" + " (default 0: a free port)");
    static final Flag BIND_ADDRESS = Flag.valued(
            "--bind-address",
            null,
            "ADDRESS",
            "where the agent's metrics and HTTPS API listen (default 127.0.0.1: this machine only; 0.0.0.0 or ::"
                    + " every interface)");
    static final Flag ENABLE_OCI = Flag.on(
            "--enable-oci",
            null,
            "runs container images too (the oci driver: runc and root on this machine,"
                    + " images from their registries)");
    static final Flag CNI_BIN_DIR = Flag.valued(
            "--cni-bin-dir",
            null,
            "DIR",
            "the CNI plugins for bridge and none networks (default /opt/cni/bin; Debian's"
                    + " containernetworking-plugins: /usr/lib/cni)");
    static final Flag DEVICE_PLUGIN = Flag.valued(
            "--device-plugin",
            null,
            "fake:FILE",
            "runs a device plugin, e.g." + " fake:examples/devices/fake-gpus.yaml (may be repeated)");

    static final List<Subcommand> COMMANDS = List.of(
            new Subcommand(
                    "apiserver",
                    "--kubeconfig FILE",
                    "a local Kubernetes API server with the Drover CRD, until SIGTERM or Ctrl-C",
                    List.of(KUBECONFIG, PORT, NODES, NODE_ALLOCATABLE, KUBE_VERSION, AGENT_KUBECONFIGS, CHART)),
            new Subcommand(
                    "up",
                    "--kubeconfig FILE",
                    "the same API server plus the Drover agent for node \"local\" and the gateway, in this process",
                    List.of(
                            KUBECONFIG,
                            DATA_DIR,
                            PORT,
                            METRICS_PORT,
                            API_PORT,
                            BIND_ADDRESS,
                            ENABLE_OCI,
                            CNI_BIN_DIR,
                            DEVICE_PLUGIN,
                            KUBE_VERSION,
                            NODE_ALLOCATABLE,
                            CHART)));

    /** What {@code COMMAND --help} says after the flags. */
    private static final Map<String, String> DETAILS = Map.of("apiserver", """
            Writes a kubeconfig for kubectl, prints a line with "ready" and serves until SIGTERM or Ctrl-C.
            With --agent-kubeconfigs DIR, DIR/NODE.kubeconfig is each node's agent identity (a token bound to
            the node, renewed before it expires) and DIR/NODE.peer-token (0600) its token for other agents
            (audience drover.dev/agent: the agent's --peer-token-file); the chart's gateway serves the
            aggregated API agent.drover.dev (kubectl drover logs|stats): run each agent with --gateway-user
            system:serviceaccount:drover-system:drover-gateway --gateway-ca-file DIR/gateway/ca.crt.
            Before Kubernetes 1.31 CRDs lose selectableFields, so a field selector on spec.nodeName is refused.
            """, "up", """
            The agent runs with the mock and raw_exec drivers (and oci with --enable-oci), as the chart's ServiceAccount with the chart's
            RBAC, from the kubeconfig agent-local.kubeconfig beside FILE (its peer token agent-local.peer-token);
            the chart's gateway runs too (files in gateway/ beside FILE), for kubectl drover logs.
            The agent's metrics and HTTPS API listen on 127.0.0.1 only unless --bind-address says otherwise.
            kubectl apply an Allocation and watch it run. Before 1.31 the agent runs with --field-selector=false.
            """);

    private LocalCommandLine() {}

    static Subcommand command(String name) {
        return COMMANDS.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
    }

    /** Every flag {@code command} takes, {@code --help} with them. */
    static List<Flag> flags(Subcommand command) {
        List<Flag> all = new ArrayList<>(command.flags());
        all.add(FlagParser.HELP);
        return all;
    }

    /** {@code drover-local --help}: every command and every flag, one line each. */
    static String usage() {
        StringBuilder out = new StringBuilder("""
                drover-local: a local Kubernetes API server with Drover's CRD, and the agent, for development

                usage: drover-local COMMAND [FLAGS]
                       drover-local COMMAND --help

                commands:
                """);
        out.append(HelpText.commands(COMMANDS));
        for (Subcommand c : COMMANDS) {
            out.append("\nflags of ").append(c.name()).append(":\n").append(HelpText.flags(flags(c)));
        }
        return out.toString();
    }

    /** {@code drover-local COMMAND --help}. */
    static String usage(Subcommand c) {
        return "usage: drover-local " + c.synopsis() + " [FLAGS]\n\n" + c.summary() + "\n\nflags:\n"
                + HelpText.flags(flags(c)) + "\n" + DETAILS.get(c.name());
    }
}
