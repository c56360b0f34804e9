package dev.drover.allocrunner;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds the allocation's directory before anything runs, and removes it on destroy. */
final class AllocDirHook implements AllocHooks.Prerun, AllocHooks.Destroy {

    private static final Logger LOG = LoggerFactory.getLogger(AllocDirHook.class);

    @Override
    public boolean prerun(AllocHookContext ctx) throws IOException {
        ctx.dir().build();
        return true;
    }

    @Override
    public void destroy(AllocHookContext ctx) {
        try {
            ctx.dir().destroy();
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not remove {}: {}", ctx.dir().root(), e.toString());
        }
    }
}
