package io.idemkey.openapi;

import org.eclipse.microprofile.openapi.models.media.Schema;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The schema type is set through the method the MicroProfile OpenAPI on the classpath has: run with
 * the 3.1 API the module compiles against, and again with 4.x (the surefire execution
 * microprofile-openapi-4), where {@code Schema.type(SchemaType)} is gone.
 */
class SchemaTypesTest {

    @Test
    void theTypeIsSetThroughTheSetterOfTheApiOnTheClasspath() {
        List<String> calls = new ArrayList<>();
        Schema schema = (Schema) Proxy.newProxyInstance(Schema.class.getClassLoader(), new Class<?>[] {Schema.class},
                (proxy, method, args) -> {
                    calls.add(method.getName() + "(" + args[0] + ")");
                    return proxy;
                });
        assertTrue(SchemaTypes.supported());
        assertSame(schema, SchemaTypes.typed(schema, Schema.SchemaType.STRING));
        String expected = "4".equals(System.getProperty("idemkey.test.openapiMajor")) ? "addType(string)" : "type(string)";
        assertEquals(List.of(expected), calls);
    }
}
