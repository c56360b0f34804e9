package dev.drover.metrics;

import dev.drover.agentapi.AgentProtocol;
import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * What this agent was built from: {@code drover_build_info{version, revision, java_version} 1}, the usual way to
 * tell versions apart across a fleet (and to see a rollout progress). The build writes version and revision (the git
 * commit) into {@value #RESOURCE}; a value that is missing or not a plain word reads {@code unknown}.
 */
public record BuildInfo(String version, String revision, String javaVersion) {

    static final String RESOURCE = "/META-INF/drover/build-info.properties";
    static final String UNKNOWN = "unknown";
    private static final Pattern WORD = Pattern.compile("[0-9A-Za-z._+-]{1,64}");

    /** This agent's build, read from its jar. */
    public static BuildInfo current() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
        return of(p, Runtime.version().toString());
    }

    static BuildInfo of(Properties p, String javaVersion) {
        return new BuildInfo(word(p.getProperty("version")), word(p.getProperty("revision")), word(javaVersion));
    }

    private static String word(String value) {
        return value != null && WORD.matcher(value.strip()).matches() ? value.strip() : UNKNOWN;
    }

    /**
     * What the agent publishes on its Node: its version and revision, which anyone who may read Nodes sees ({@code
     * kubectl drover version}, {@code kubectl describe node}) without reaching the agent.
     */
    public Map<String, String> nodeAnnotations() {
        return Map.of(AgentProtocol.VERSION_ANNOTATION, version, AgentProtocol.REVISION_ANNOTATION, revision);
    }

    /** The series, to register on a registry. */
    public Collector collector() {
        return new Collector() {
            @Override
            public List<MetricFamilySamples> collect() {
                GaugeMetricFamily info = new GaugeMetricFamily(
                        "drover_build_info",
                        "1, labelled with the agent's version, git revision and Java version.",
                        List.of("version", "revision", "java_version"));
                info.addMetric(List.of(version, revision, javaVersion), 1);
                return List.of(info);
            }
        };
    }
}
