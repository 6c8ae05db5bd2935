package io.idemkey.it.redeploy.probe;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What of an undeployed application the server's threads still hold: the class loader it left a
 * weak reference to (under a system property) as a thread's context class loader or class, or an
 * object of one of its classes as the value of a thread-local (directly, or as an element of the
 * array, collection or map that is the value). Reading threads' thread-local maps needs
 * {@code --add-opens java.base/java.lang=ALL-UNNAMED} on the server's JVM.
 */
@Path("/held")
public class ThreadsResource {

    @GET
    public String heldBy(@QueryParam("property") String property) throws ReflectiveOperationException {
        if (!(System.getProperties().get(property) instanceof Reference<?> reference)) {
            return "no class loader was left under " + property;
        }
        System.gc();
        if (!(reference.get() instanceof ClassLoader undeployed)) {
            return "nothing held: the class loader was collected";
        }
        List<String> holders = new ArrayList<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getContextClassLoader() == undeployed) {
                holders.add(thread.getName() + ": its context class loader");
            }
            if (thread.getClass().getClassLoader() == undeployed) {
                holders.add(thread.getName() + ": a thread of the application's own class");
            }
            for (String mapField : List.of("threadLocals", "inheritableThreadLocals")) {
                Object map = read(thread, Thread.class, mapField);
                if (map == null) {
                    continue;
                }
                for (Object entry : (Object[]) read(map, map.getClass(), "table")) {
                    if (entry == null) {
                        continue;
                    }
                    Object value = read(entry, entry.getClass(), "value");
                    Object threadLocal = ((Reference<?>) entry).get();
                    if (loadedBy(value, undeployed) || loadedBy(threadLocal, undeployed)) {
                        holders.add(thread.getName() + ": the thread-local " + (threadLocal == null ? "(collected)"
                                : threadLocal.getClass().getName()) + " = " + (value == null ? "null" : value.getClass().getName()));
                    }
                }
            }
        }
        return holders.isEmpty() ? "nothing held" : String.join("\n", holders);
    }

    private static boolean loadedBy(Object value, ClassLoader loader) {
        if (value == null) {
            return false;
        }
        Stream<?> elements = value instanceof Object[] array ? Stream.of(array)
                : value instanceof Collection<?> collection ? collection.stream()
                : value instanceof Map<?, ?> map ? Stream.concat(map.keySet().stream(), map.values().stream())
                : Stream.empty();
        return value.getClass().getClassLoader() == loader
                || elements.anyMatch(element -> element != null && element.getClass().getClassLoader() == loader);
    }

    private static Object read(Object object, Class<?> type, String name) throws ReflectiveOperationException {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(object);
    }
}
