package io.idemkey.cdi;

import io.idemkey.core.Execution;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;

/**
 * The last line of defence: if a synchronous request ends while its execution still holds the key
 * (no response filter ran, say), the key is released here, so a retry is not refused with 409 until
 * the lease runs out and the lease is not renewed for ever. Registered by the jar's
 * {@code META-INF/web-fragment.xml}.
 */
public class GuardedRequestListener implements ServletRequestListener {

    @Override
    public void requestDestroyed(ServletRequestEvent event) {
        Object attribute = event.getServletRequest().getAttribute(GuardedRequest.ATTRIBUTE);
        if (attribute instanceof GuardedRequest guarded && !guarded.asynchronous()) {
            Execution execution = guarded.execution();
            if (execution.isRunning()) {
                execution.release("the request ended without a recordable response");
            }
        }
    }
}
