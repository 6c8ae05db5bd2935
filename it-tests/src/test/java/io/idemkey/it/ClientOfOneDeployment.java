package io.idemkey.it;

import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;

/**
 * An Arquillian test that talks to its one deployment over real HTTP (the subclass declares the
 * {@code @Deployment} and {@code @RunAsClient}).
 */
@ExtendWith(ArquillianExtension.class)
abstract class ClientOfOneDeployment {

    @ArquillianResource
    URL base;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(base);
    }
}
