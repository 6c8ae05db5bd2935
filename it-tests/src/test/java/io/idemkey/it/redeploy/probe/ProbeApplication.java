package io.idemkey.it.redeploy.probe;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** An application without Idemkey that looks at what an undeployed one left behind. */
@ApplicationPath("/")
public class ProbeApplication extends Application {
}
