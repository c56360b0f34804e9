package dev.drover.agent;

/** Settings the agent cannot run with; the message says which and why (exit code 2). */
public final class ConfigException extends Exception {
    public ConfigException(String message) {
        super(message);
    }
}
