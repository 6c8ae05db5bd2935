package io.idemkey.openapi;

import org.eclipse.microprofile.openapi.models.media.Schema;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * Gives a schema its type on whichever MicroProfile OpenAPI the server has. The one method that
 * changed between the versions Idemkey meets is the type's setter: OpenAPI 3.x has
 * {@code Schema type(SchemaType)}, OpenAPI 4.x (MicroProfile 7: WildFly 39, Open Liberty
 * {@code mpOpenAPI-4.0}) has a list of types and {@code Schema addType(SchemaType)} instead. Code
 * compiled against either and calling it directly fails on the other with
 * {@code NoSuchMethodError} inside the server's OpenAPI build, which then documents nothing of the
 * application. The setter is looked up once, by name and signature, on the API the server has.
 */
final class SchemaTypes {

    private static final Logger LOG = Logger.getLogger(SchemaTypes.class.getName());

    private static final Optional<MethodHandle> SETTER = setter();

    private SchemaTypes() {
    }

    /** The schema with this type, or without one where the server's API has no setter Idemkey knows. */
    static Schema typed(Schema schema, Schema.SchemaType type) {
        if (SETTER.isEmpty()) {
            return schema;
        }
        try {
            SETTER.get().invoke(schema, type);
            return schema;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether this server's MicroProfile OpenAPI has a type setter Idemkey knows. */
    static boolean supported() {
        return SETTER.isPresent();
    }

    private static Optional<MethodHandle> setter() {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        MethodType returningSchema = MethodType.methodType(Schema.class, Schema.SchemaType.class);
        for (String name : new String[] {"addType", "type"}) { // 4.x, then 3.x
            try {
                return Optional.of(lookup.findVirtual(Schema.class, name, returningSchema));
            } catch (NoSuchMethodException | IllegalAccessException e) {
                // not this version's
            }
        }
        LOG.warning("Idemkey: this server's MicroProfile OpenAPI has neither Schema.addType(SchemaType) nor"
                + " Schema.type(SchemaType): Idemkey's schemas in /openapi carry no type");
        return Optional.empty();
    }
}
