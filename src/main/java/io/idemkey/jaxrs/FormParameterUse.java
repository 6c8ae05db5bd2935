package io.idemkey.jaxrs;

import io.idemkey.resource.ResourceMethods;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Set;

/**
 * Whether a resource method is handed form parameters one by one: a {@code @FormParam} on one of its
 * parameters, on a field or setter of its resource class, or inside a {@code @BeanParam} bean (at any
 * depth). RESTEasy's own {@code @Form} beans and {@code @FormParam} annotation count too. A form read
 * as an entity ({@code MultivaluedMap}, {@code Form}) is not: it comes from the entity stream.
 */
final class FormParameterUse {

    private static final Set<String> FORM_PARAMETERS = Set.of("jakarta.ws.rs.FormParam",
            "org.jboss.resteasy.annotations.jaxrs.FormParam");
    private static final Set<String> BEANS = Set.of("jakarta.ws.rs.BeanParam", "org.jboss.resteasy.annotations.Form");

    private FormParameterUse() {
    }

    static boolean readsFormParameters(Class<?> resourceClass, Method method) {
        Set<Class<?>> seen = new HashSet<>();
        Method declaration = ResourceMethods.jaxrsDeclaration(resourceClass, method).orElse(method);
        return parameters(declaration.getParameterAnnotations(), declaration.getParameterTypes(), seen)
                || members(resourceClass, seen);
    }

    private static boolean parameters(Annotation[][] annotations, Class<?>[] types, Set<Class<?>> seen) {
        for (int i = 0; i < annotations.length; i++) {
            if (reads(annotations[i], types[i], seen)) {
                return true;
            }
        }
        return false;
    }

    /** The fields, setters and constructors of a resource class or bean and of its superclasses. */
    private static boolean members(Class<?> type, Set<Class<?>> seen) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (!seen.add(c)) {
                return false;
            }
            try {
                for (Field field : c.getDeclaredFields()) {
                    if (reads(field.getAnnotations(), field.getType(), seen)) {
                        return true;
                    }
                }
                for (Method setter : c.getDeclaredMethods()) {
                    if (setter.getParameterCount() == 1 && reads(setter, setter.getParameterTypes()[0], seen)) {
                        return true;
                    }
                }
                for (Constructor<?> constructor : c.getDeclaredConstructors()) {
                    if (parameters(constructor.getParameterAnnotations(), constructor.getParameterTypes(), seen)) {
                        return true;
                    }
                }
            } catch (LinkageError unloadable) {
                return false; // a member's type the application cannot load: JAX-RS could not inject it either
            }
        }
        return false;
    }

    private static boolean reads(AnnotatedElement element, Class<?> type, Set<Class<?>> seen) {
        return reads(element.getAnnotations(), type, seen);
    }

    private static boolean reads(Annotation[] annotations, Class<?> type, Set<Class<?>> seen) {
        for (Annotation annotation : annotations) {
            String name = annotation.annotationType().getName();
            if (FORM_PARAMETERS.contains(name) || (BEANS.contains(name) && members(type, seen))) {
                return true;
            }
        }
        return false;
    }
}
