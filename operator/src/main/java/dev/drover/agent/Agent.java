package dev.drover.agent;

import dev.drover.admission.AdmissionMetrics;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodePorts;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.controller.Admissions;
import dev.drover.controller.AllocationController;
import dev.drover.controller.AllocationReconciler;
import dev.drover.controller.UnreadableAllocations;
import dev.drover.controller.events.EventPoster;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.previous.AgentSnapshots;
import dev.drover.controller.previous.ApiPreviousAllocations;
import dev.drover.controller.previous.PeerToken;
import dev.drover.controller.services.AllocationEndpoints;
import dev.drover.controller.services.EndpointSlicePublisher;
import dev.drover.controller.status.StatusPatcher;
import dev.drover.controller.status.StatusWriter;
import dev.drover.devices.DeviceLedger;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.DeviceMetrics;
import dev.drover.devices.DeviceReservationHook;
import dev.drover.devices.NoDevicesHook;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.oci.OciDriver;
import dev.drover.gc.DiskUsage;
import dev.drover.gc.GarbageCollector;
import dev.drover.httpapi.AgentApi;
import dev.drover.httpapi.CertificateKeeper;
import dev.drover.httpapi.LocalAllocation;
import dev.drover.kube.KubeCredentials;
import dev.drover.metrics.DroverMetrics;
import dev.drover.metrics.JosdkMetrics;
import dev.drover.metrics.MetricsServer;
import dev.drover.metrics.ReadyMetric;
import dev.drover.node.NodeRegistrar;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStats;
import dev.drover.state.StateStores;
import dev.drover.state.StoredLoad;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.taskrunner.checks.CheckProber;
import dev.drover.taskrunner.checks.CheckScheduler;
import dev.drover.taskrunner.checks.ProbeMetrics;
import dev.drover.taskrunner.hooks.VolumeMountHook;
import dev.drover.taskrunner.identity.WorkloadIdentity;
import dev.drover.web.VirtualThreadHttpClients;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent: the state store, drivers, runners, the Kubernetes side, the metrics endpoint and the HTTPS API,
 * wired together. {@link #start} restores runners from the store before it watches the API server; {@link #close}
 * stops everything it started and leaves tasks running.
 */
public final class Agent implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Agent.class);
    private static final Duration LOG_ROTATE_INTERVAL = Duration.ofSeconds(5);
    /** A migration download that brings nothing for this long is abandoned. */
    private static final Duration SNAPSHOT_IDLE_TIMEOUT = Duration.ofSeconds(60);

    private final AgentConfig config;
    private final KubernetesClient client;
    private final boolean ownsClient;
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private CheckProber checks;
    private StateDB state;
    private DriverRegistry drivers;
    private StatusWriter writer;
    private EventRecorder events;
    private ApiPreviousAllocations previous;
    private GarbageCollector gc;
    private DeviceManager devices;
    private DeviceLedger ledger;
    private volatile NodeRegistrar registrar;
    private AllocationController controller;
    private Operator operator;
    private MetricsServer http;
    private AgentApi api;
    private volatile CertificateKeeper certificates;
    private volatile boolean ready;
    private volatile boolean closed;

    private Agent(AgentConfig config, KubernetesClient client, boolean ownsClient) {
        this.config = config;
        this.client = client;
        this.ownsClient = ownsClient;
    }

    /** Starts an agent with its own client, from the kubeconfig setting or in-cluster configuration. */
    public static Agent start(AgentConfig config) throws IOException, InterruptedException {
        return start(new Agent(config, client(config.kubeconfig()), true), null, null);
    }

    /** As {@link #start(AgentConfig)}, on a store opened before ({@link StateStores#openAgents}), its read begun. */
    public static Agent start(AgentConfig config, StateDB state, StoredLoad stored)
            throws IOException, InterruptedException {
        return start(new Agent(config, client(config.kubeconfig()), true), state, stored);
    }

    /** Starts an agent that uses {@code client} (and leaves it open on close). */
    public static Agent start(AgentConfig config, KubernetesClient client) throws IOException, InterruptedException {
        return start(new Agent(config, client, false), null, null);
    }

    private static Agent start(Agent agent, StateDB state, StoredLoad stored) throws IOException, InterruptedException {
        agent.state = state; // null: startAll opens the store
        try {
            agent.startAll(stored);
            return agent;
        } catch (IOException | InterruptedException | RuntimeException e) {
            agent.close();
            throw e;
        }
    }

    /**
     * A client for {@code kubeconfig}, or the usual auto-configuration (in-cluster) without one, that reads
     * an Allocation the model cannot read as one to refuse rather than failing the watch.
     */
    public static KubernetesClient client(Optional<Path> kubeconfig) throws IOException {
        return new KubernetesClientBuilder()
                .withConfig(clientConfig(kubeconfig))
                .withHttpClientFactory(new VirtualThreadHttpClients())
                .withKubernetesSerialization(UnreadableAllocations.serialization())
                .build();
    }

    /** The client configuration from {@code kubeconfig}, or in-cluster without one: a new one at each call. */
    static Config clientConfig(Optional<Path> kubeconfig) throws IOException {
        if (kubeconfig.isPresent()) {
            return Config.fromKubeconfig(kubeconfig.get().toFile()); // the file, so a rotated token is read again
        }
        return Config.autoConfigure(null);
    }

    private void startAll(StoredLoad early) throws IOException, InterruptedException {
        Clock clock = Clock.systemUTC();
        StoredLoad stored = early;
        if (stored == null) {
            state = StateStores.openAgents(config.dataDir());
            stored = StoredLoad.begin(state); // read while the client, its first requests and servers start
        }
        LogRotator rotator = new LogRotator(10L << 20, 5, LOG_ROTATE_INTERVAL);
        closeLast.add(rotator);
        AgentDrivers enabled = AgentDrivers.start(config, clock, rotator);
        drivers = enabled.registry();
        TaskCgroups cgroups = enabled.cgroups();
        TaskPrestartHook deviceHook = new NoDevicesHook();
        if (!config.devicePlugins().isEmpty()) {
            devices = new DeviceManager(config.devicePluginSelections(), DeviceManager.Timing.DEFAULT);
            if (!devices.awaitFirstFingerprints(Duration.ofSeconds(30))) {
                LOG.warn("device plugins gave no fingerprint within 30 s; their devices appear when they do");
            }
            ledger = new DeviceLedger(devices, state, AgentPodResources.start(config, devices, closeLast));
            deviceHook = new DeviceReservationHook(
                    ledger,
                    devices,
                    config.containers().cdi(),
                    config.containers().enabled() ? Set.of(OciDriver.NAME) : Set.of());
            LOG.info(
                    "device plugins {}: {} device instance(s)",
                    config.devicePlugins(),
                    devices.devices().size());
        }
        TaskPrestartHook hook = deviceHook;

        writer = new StatusWriter(new StatusPatcher(client), config.statusWrites());
        events = new EventRecorder(new EventPoster(client), config.nodeName(), config.events(), config.taskEvents());
        previous = new ApiPreviousAllocations(
                client,
                Duration.ofMillis(500),
                Duration.ofSeconds(5),
                new AgentSnapshots(
                        client,
                        config.nodeName(),
                        new PeerToken(config.peerTokenFile()),
                        SNAPSHOT_IDLE_TIMEOUT,
                        () -> certificates == null
                                ? null
                                : certificates.identity().clientKeys()));
        gc = new GarbageCollector(config.gc(), DiskUsage.of(config.dataDir()));
        gc.afterEachPass(enabled::collectImages);
        closeLast.add(enabled);

        DroverMetrics metrics = new DroverMetrics(new DroverMetrics.Sources(
                () -> controller == null ? Map.of() : controller.countByClientStatus(),
                () -> controller == null ? 0 : controller.waitingToStart(),
                () -> new long[] {writer.writes(), writer.skipped(), writer.failures()},
                () -> {
                    StateStats s = state.stats();
                    return new long[] {s.writes(), s.deduplicated(), s.failures(), s.unstored(), s.quarantined()};
                },
                () -> new long[] {events.written(), events.dropped(), events.failed()},
                () -> controller == null ? 0 : controller.longestWaitToStart().toNanos() / 1e9));
        enabled.images().ifPresent(i -> i.metrics().register(metrics.registry()));
        TaskRunnerConfig.Shared tasks = new TaskRunnerConfig.Shared(
                drivers,
                state,
                clock,
                new SplittableRandom(),
                config.maxKillTimeout(),
                TaskRunnerConfig.DEFAULT_DRIVER_DEADLINE,
                TaskRunnerConfig.StopRetry.DEFAULT);
        KubeCredentials credentials = KubeCredentials.forNode(client, config.nodeName());
        closeLast.add(credentials);
        // one schedule for every task's checks, closed after the runners (they end their tasks' probings first) and
        // before the drivers, whose exec an abandoned exec probe may still be in
        CheckScheduler scheduler = new CheckScheduler(CheckScheduler.DEFAULT_MAX_CONCURRENT_PROBES);
        new ProbeMetrics(scheduler).register(metrics.registry());
        checks = scheduler;
        NodeAdmission admission = new NodeAdmission(config.allocatable());
        LOG.info(
                "allocations may request {} millicores of CPU and {} MB of memory on this node",
                config.allocatable().cpuMillis(),
                config.allocatable().memoryMB());
        Runnable requestedChanged = () -> {
            NodeRegistrar r = registrar;
            if (r != null) {
                r.nudge();
            }
        };
        Admissions admissions = new Admissions(
                admission,
                ledger,
                requestedChanged,
                config.hostVolumes(),
                new NodePorts(config.networks().dynamicPorts()),
                state);
        closeLast.add(
                AgentNodeSharing.start(config, client, admission, admissions, requestedChanged, metrics.registry()));
        AgentNetworks networks = AgentNetworks.create(config, client, admissions);
        EndpointSlicePublisher slices = EndpointSlicePublisher.start(
                client,
                config.nodeName(),
                networks.nodeAddress(),
                EndpointSlicePublisher.Timing.DEFAULT,
                System::nanoTime);
        closeLast.add(slices);
        AllocRunnerConfig runners = new AllocRunnerConfig(
                config.dataDir(),
                tasks,
                List.of(new VolumeMountHook(config.hostVolumes()), hook),
                List.of(),
                WorkloadIdentity.of(credentials, config.credentialPollInterval(), clock),
                checks,
                networks);
        controller = new AllocationController(
                config.nodeName(),
                runners,
                previous,
                writer,
                events,
                metrics,
                gc,
                ledger,
                config.concurrentStarts(),
                admissions,
                new AllocationEndpoints(slices));
        new AdmissionMetrics(admission).register(metrics.registry());
        TaskUsages.register(controller::runners, metrics.registry());

        if (devices != null) {
            new DeviceMetrics(devices, ledger, config.nodeName()).register(metrics.registry());
        }
        metrics.cgroupVersion(cgroups.version());
        Map<String, String> annotations = NodeAnnotations.initial(config, cgroups);
        if (config.apiPort() >= 0) {
            AgentHttps.Started https = AgentHttps.start(config, client, clock, this::apiView, renewed -> {
                if (registrar != null) {
                    registrar.annotate(Map.of(AgentProtocol.CERTIFICATE_ANNOTATION, renewed.fingerprint()));
                }
            });
            certificates = https.certificates();
            api = https.api();
            annotations.put(AgentProtocol.PORT_ANNOTATION, Integer.toString(api.port()));
            annotations.put(
                    AgentProtocol.CERTIFICATE_ANNOTATION,
                    certificates.identity().fingerprint());
        }
        registrar = new NodeRegistrar(client, config.nodeName(), devices, annotations, Duration.ofSeconds(10));
        registrar.follow(() -> admission.usage().annotations());
        AgentPodResources.follow(ledger, registrar);
        new ReadyMetric(this::readiness).register(metrics.registry());
        if (config.metricsPort() >= 0) {
            http = new MetricsServer(
                    new InetSocketAddress(config.bindAddress().orElse(null), config.metricsPort()),
                    metrics.registry(),
                    this::health,
                    this::readiness);
            LOG.info("serving /metrics, /healthz and /readyz on {}", http.address());
        }

        long begin = System.nanoTime();
        int restored = controller.restore(stored);
        JosdkMetrics josdkMetrics = new JosdkMetrics(metrics.registry());
        operator = new Operator(o -> o.withKubernetesClient(client)
                // JOSDK's pool, on virtual threads: no platform threads and stacks kept after the first burst
                .withExecutorService(Executors.newFixedThreadPool(
                        AllocationReconciler.AT_ONCE,
                        Thread.ofVirtual().name("reconciler-", 0).factory()))
                .withUseSSAToPatchPrimaryResource(false)
                .withMetrics(josdkMetrics)
                .withCloseClientOnStop(false)
                .withStopOnInformerErrorDuringStartup(true)
                .withCacheSyncTimeout(Duration.ofMinutes(2)));
        var registered = new AllocationReconciler(controller, client)
                .register(operator, config.nodeName(), config.fieldSelector());
        operator.start(); // once the informer's list is read: swept by its cache, not by a list of its own
        int gone = controller.sweep(AllocationReconciler.cached(registered, config.nodeName()));
        ready = true;
        LOG.info(
                "agent for node {} is ready: {} allocation(s) restored, {} destroyed as gone, in {} ms",
                config.nodeName(),
                restored,
                gone,
                (System.nanoTime() - begin) / 1_000_000);
    }

    private Optional<LocalAllocation> apiView(AllocId id) {
        return controller.runner(id).map(runner -> new RunnerView(runner, ledger, devices));
    }

    /** The port the HTTPS API is served on, or -1. */
    public int apiPort() {
        return api == null ? -1 : api.port();
    }

    /** The port /metrics is served on, or -1. */
    public int metricsPort() {
        return http == null ? -1 : http.port();
    }

    public AllocationController controller() {
        return controller;
    }

    public EventRecorder events() {
        return events;
    }

    public StatusWriter statusWriter() {
        return writer;
    }

    private Optional<String> health() {
        if (closed) {
            return Optional.of("shutting down");
        }
        if (!writer.alive()) {
            return Optional.of("the status writer stopped");
        }
        return Optional.empty();
    }

    private Optional<String> readiness() {
        if (!ready || closed) {
            return Optional.of(closed ? "shutting down" : "starting: restoring allocations and syncing the watch");
        }
        if (!operator.getRuntimeInfo().allEventSourcesAreHealthy()) {
            return Optional.of("the Allocation watch is not healthy (controllers "
                    + operator.getRuntimeInfo().unhealthyEventSources().keySet() + ")");
        }
        return Optional.empty();
    }

    /** Stops watching and writing, shuts runners down (tasks keep running), closes the store. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ready = false;
        LOG.info("agent stopping; tasks keep running");
        closeQuietly(api); // followed logs end before the runners go
        closeQuietly(certificates);
        if (operator != null) {
            try {
                operator.stop();
            } catch (RuntimeException e) {
                LOG.warn("stopping the operator: {}", e.toString());
            } finally {
                // JOSDK's stop does not shut down its scheduler, on which 5.3.2 keeps the informers' stale-cache
                // checks running (5.3.5 stops scheduling them there, but still leaves the scheduler to its user)
                operator.getConfigurationService()
                        .getExecutorServiceManager()
                        .scheduledExecutorService()
                        .shutdownNow();
            }
        }
        if (controller != null) {
            try {
                controller.shutdown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(checks);
        closeQuietly(gc);
        closeQuietly(previous);
        closeQuietly(events);
        closeQuietly(writer);
        closeQuietly(drivers);
        closeQuietly(registrar);
        closeQuietly(devices);
        closeLast.forEach(Agent::closeQuietly);
        closeQuietly(state);
        closeQuietly(http);
        if (ownsClient) {
            closeQuietly(client);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("closing {}: {}", c.getClass().getSimpleName(), e.toString());
        }
    }
}
