package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.util.Map;

/** The status table on this run's test server (Payara Micro, or Open Liberty with the tests' features). */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class StatusTableIT extends StatusTableTests {

    @ArquillianResource
    URL base;

    @Deployment
    static WebArchive deployment() {
        return deployment(Map.of());
    }

    @BeforeEach
    void client() {
        http = new Http(base);
    }

    @Override
    boolean validatesBeans() {
        return true;
    }
}
