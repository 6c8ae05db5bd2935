package io.idemkey.sample;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The sample service: orders and payments under {@code /api}. */
@ApplicationPath("/api")
public class SampleApplication extends Application {
}
