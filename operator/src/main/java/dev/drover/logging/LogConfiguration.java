package dev.drover.logging;

import ch.qos.logback.classic.ClassicConstants;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.Map;
import org.slf4j.Logger;

/**
 * The agent's log configuration, set in code: read from a logback.xml it cost an XML parser and logback's
 * configuration framework (some 460 classes) to say what these lines say. Every record is one line on stderr, with
 * the allocation and task of the runner threads' MDC; the libraries under the agent say only their warnings. A
 * {@code logback.xml} or {@code logback-test.xml} on the class path, or {@code -Dlogback.configurationFile}, still
 * configures logback instead, as logback's own lookup would.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class LogConfiguration extends ContextAwareBase implements Configurator {

    static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0}"
            + "%replace( alloc=%X{alloc}){' alloc=$', ''}%replace( task=%X{task}){' task=$', ''} - %msg%n";

    /** Libraries whose information lines are noise on a node: only their warnings and errors are shown. */
    static final Map<String, Level> LIBRARIES = Map.of(
            "io.fabric8", Level.WARN,
            "io.javaoperatorsdk", Level.WARN,
            "io.vertx", Level.WARN,
            "io.netty", Level.WARN);

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        ClassLoader loader = LogConfiguration.class.getClassLoader();
        if (System.getProperty(ClassicConstants.CONFIG_FILE_PROPERTY) != null
                || loader.getResource(ClassicConstants.TEST_AUTOCONFIG_FILE) != null
                || loader.getResource(ClassicConstants.AUTOCONFIG_FILE) != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        apply(context);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /** Sets {@code context} up as the agent logs: one line per record on stderr, libraries at their levels. */
    static void apply(LoggerContext context) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        LIBRARIES.forEach((name, level) -> context.getLogger(name).setLevel(level));
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(stderr);
    }
}
