package io.idemkey.resource;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What JAX-RS makes of a method of a resource class, by its annotation inheritance rules: a method
 * without JAX-RS annotations of its own takes those of the method it overrides in a superclass, else
 * of the interface method it implements (the contract shared with a MicroProfile Rest Client).
 */
public final class ResourceMethods {

    private ResourceMethods() {
    }

    /**
     * The method, among {@code method} as {@code resourceClass} has it, the methods it overrides and
     * the interface methods it implements, whose JAX-RS annotations apply; empty if none has any.
     */
    public static Optional<Method> jaxrsDeclaration(Class<?> resourceClass, Method method) {
        for (Method candidate : declarations(resourceClass, method)) {
            if (hasJaxrsAnnotation(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * The method as the class declares or inherits it, then the superclass methods it overrides, then
     * the interface methods it implements (breadth first): every place an annotation may sit.
     */
    public static List<Method> declarations(Class<?> resourceClass, Method method) {
        Set<Method> found = new LinkedHashSet<>();
        found.add(method);
        for (Class<?> type = resourceClass; type != null && type != Object.class; type = type.getSuperclass()) {
            declared(type, method).ifPresent(found::add);
        }
        List<Class<?>> interfaces = new ArrayList<>();
        for (Class<?> type = resourceClass; type != null; type = type.getSuperclass()) {
            interfaces.addAll(List.of(type.getInterfaces()));
        }
        if (method.getDeclaringClass().isInterface()) {
            interfaces.add(method.getDeclaringClass());
        }
        for (int i = 0; i < interfaces.size(); i++) {
            Class<?> type = interfaces.get(i);
            declared(type, method).ifPresent(found::add);
            interfaces.addAll(List.of(type.getInterfaces()));
        }
        return List.copyOf(found);
    }

    /** The HTTP method JAX-RS answers with this method ({@code POST}, ...), empty for a locator or a plain method. */
    public static Optional<String> httpMethod(Class<?> resourceClass, Method method) {
        return jaxrsDeclaration(resourceClass, method).flatMap(ResourceMethods::designator);
    }

    /** The path template of the method relative to the application: {@code /orders/{id}/pay}. */
    public static String pathTemplate(Class<?> resourceClass, Method method) {
        Path typePath = null;
        for (Class<?> type = resourceClass; type != null && typePath == null; type = type.getSuperclass()) {
            typePath = type.getAnnotation(Path.class);
            for (int i = 0; typePath == null && i < type.getInterfaces().length; i++) {
                typePath = type.getInterfaces()[i].getAnnotation(Path.class); // RESTEasy takes it from there
            }
        }
        Path methodPath = jaxrsDeclaration(resourceClass, method).map(m -> m.getAnnotation(Path.class)).orElse(null);
        String path = (typePath == null ? "" : "/" + typePath.value()) + (methodPath == null ? "" : "/" + methodPath.value());
        path = path.replaceAll("/+", "/");
        if (path.length() > 1 && path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return path.isEmpty() ? "/" : path;
    }

    /** {@code POST /orders/{id}}: for logs and metric tags (bounded: one per resource method). */
    public static String endpoint(Class<?> resourceClass, Method method) {
        return httpMethod(resourceClass, method).orElse("ANY") + " " + pathTemplate(resourceClass, method);
    }

    /** Whether JAX-RS can invoke the method at all: public and not static. */
    public static boolean invocable(Method method) {
        return Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers());
    }

    private static Optional<String> designator(Method method) {
        for (Annotation annotation : method.getAnnotations()) {
            HttpMethod designator = annotation.annotationType().getAnnotation(HttpMethod.class);
            if (designator != null) {
                return Optional.of(designator.value());
            }
        }
        return Optional.empty();
    }

    private static boolean hasJaxrsAnnotation(Method method) {
        if (method.isAnnotationPresent(Path.class)) {
            return true;
        }
        for (Annotation annotation : method.getAnnotations()) {
            if (annotation.annotationType().isAnnotationPresent(HttpMethod.class)
                    || annotation.annotationType().getPackageName().equals(Path.class.getPackageName())) {
                return true;
            }
        }
        for (Annotation[] parameter : method.getParameterAnnotations()) {
            for (Annotation annotation : parameter) {
                if (annotation.annotationType().getPackageName().equals(Path.class.getPackageName())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Optional<Method> declared(Class<?> type, Method method) {
        try {
            return Optional.of(type.getDeclaredMethod(method.getName(), method.getParameterTypes()));
        } catch (NoSuchMethodException e) {
            return Optional.empty();
        }
    }
}
