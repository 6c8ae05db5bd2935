package io.idemkey.it.jpa;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The JPA test application: its effects are entities persisted through a JTA persistence unit. */
@ApplicationPath("/")
public class JpaApplication extends Application {
}
