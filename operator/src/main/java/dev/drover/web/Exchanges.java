package dev.drover.web;

import java.io.IOException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** Runs an {@link Exchange.Handler} for each request, blocking, on the request's virtual thread. */
final class Exchanges extends Handler.Abstract {

    private final Exchange.Handler handler;

    Exchanges(Exchange.Handler handler) {
        super(InvocationType.BLOCKING);
        this.handler = handler;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        // a handler that writes nothing for a while (a quiet followed log) is working, not idle
        request.addIdleTimeoutListener(timeout -> false);
        Exchange exchange;
        try {
            exchange = new Exchange(request, response);
        } catch (IllegalArgumentException e) {
            // a target that is no URI (a malformed escape) is the client's error
            Response.writeError(request, response, callback, 400, "malformed request target: " + e.getMessage());
            return true;
        }
        try {
            handler.handle(exchange);
        } catch (IOException | RuntimeException e) {
            exchange.close();
            callback.failed(e);
            return true;
        }
        Throwable failure = exchange.failure();
        if (failure == null) {
            callback.succeeded();
        } else {
            callback.failed(failure);
        }
        return true;
    }
}
