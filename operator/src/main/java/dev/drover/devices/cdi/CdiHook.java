package dev.drover.devices.cdi;

import java.util.List;

/**
 * An OCI hook a CDI spec asks the runtime to run ({@code containerEdits.hooks[]}). The runtime runs it on the host as
 * root, so none is run unless the agent's {@code cdiAllowedHooks} lists its {@code path}.
 *
 * @param hookName the OCI hook point: {@code prestart}, {@code createRuntime}, {@code createContainer},
 *                 {@code startContainer}, {@code poststart} or {@code poststop}
 * @param timeout  seconds, or null for none
 */
public record CdiHook(String hookName, String path, List<String> args, List<String> env, Integer timeout) {

    public CdiHook {
        args = List.copyOf(args);
        env = List.copyOf(env);
    }
}
