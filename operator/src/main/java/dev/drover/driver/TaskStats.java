package dev.drover.driver;

import java.time.Duration;
import java.time.Instant;

/** A task's resource usage at one moment. */
public record TaskStats(Instant at, Duration cpuTime, long memoryBytes) {}
