package io.idemkey.cdi;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

/**
 * The last line of defence for one guarded request, tied to that request's CDI request context
 * (which every server ends with the HTTP request, servlet API or not): if a synchronous request ends
 * while its execution still holds the key (no response filter ran, say), the key is released as the
 * context is destroyed, so a retry is not refused with 409 until the lease runs out. Created only
 * for guarded requests.
 */
@RequestScoped
public class GuardedRequestEnd {

    private GuardedRequest guarded;

    public void hold(GuardedRequest guarded) {
        this.guarded = guarded;
    }

    @PreDestroy
    public void requestEnded() {
        if (guarded != null && !guarded.asynchronous() && guarded.execution().isRunning()) {
            guarded.execution().release("the request ended without a recordable response");
        }
    }
}
