package io.idemkey.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages one logger writes during each test, kept from its parents' handlers meanwhile:
 * {@code @RegisterExtension final LogCapture audit = new LogCapture("io.idemkey.audit");}.
 */
public final class LogCapture extends Handler implements BeforeEachCallback, AfterEachCallback {

    /** Held strongly: the JDK keeps loggers weakly. */
    private final Logger logger;
    private final List<String> messages = new CopyOnWriteArrayList<>();
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    public LogCapture(String loggerName) {
        this.logger = Logger.getLogger(loggerName);
    }

    /** The messages written since the test began, in order. */
    public List<String> messages() {
        return List.copyOf(messages);
    }

    /** The records written since the test began, in order: their levels and exceptions. */
    public List<LogRecord> records() {
        return List.copyOf(records);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        messages.clear();
        records.clear();
        logger.addHandler(this);
        logger.setUseParentHandlers(false);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        logger.removeHandler(this);
        logger.setUseParentHandlers(true);
    }

    @Override
    public void publish(LogRecord record) {
        messages.add(record.getMessage());
        records.add(record);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
}
