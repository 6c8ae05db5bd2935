package io.idemkey.it.app;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The lines Idemkey's audit logger ({@code io.idemkey.audit}) wrote on this server since the
 * application started, for the admin API's test: {@code GET /audit-log}, one line each. The lines
 * still go to the server's log as well.
 */
@Path("/audit-log")
@ApplicationScoped
public class AuditLog {

    /** Held strongly: the JDK keeps loggers weakly, and a collected logger would lose its handler. */
    private static final Logger AUDIT = Logger.getLogger("io.idemkey.audit");
    private static final List<String> LINES = new CopyOnWriteArrayList<>();
    private static final Handler CAPTURE = new Handler() {
        @Override
        public void publish(LogRecord record) {
            LINES.add(record.getLevel() + " " + record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    void start(@Observes @Initialized(ApplicationScoped.class) Object started) {
        AUDIT.removeHandler(CAPTURE);
        AUDIT.addHandler(CAPTURE);
    }

    void stop(@Observes @BeforeDestroyed(ApplicationScoped.class) Object stopping) {
        AUDIT.removeHandler(CAPTURE); // the handler's class must not outlive the application
    }

    @GET
    @Produces(MediaType.TEXT_PLAIN)
    public String lines() {
        return String.join("\n", LINES);
    }
}
