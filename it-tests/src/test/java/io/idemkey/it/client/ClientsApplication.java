package io.idemkey.it.client;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

@ApplicationPath("api")
public class ClientsApplication extends Application {
}
