package io.idemkey;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packages read as layers, every import pointing down: a package may use its own layer's
 * package and those of the layers below it, never one above, nor another package of its own layer.
 * The dependencies are those of the compiled classes (as {@code jdeps} reads them from the class
 * files: imports, fully qualified names and everything else the compiler wrote down).
 */
class PackageLayersTest {

    /** Bottom first. A package of the library not listed here fails the test: place it. */
    static final List<Set<String>> LAYERS = List.of(
            Set.of("io.idemkey"),                                   // API: what applications touch
            Set.of("io.idemkey.spi"),                               // SPI: what a store implements
            Set.of("io.idemkey.core"),                              // engine: plain Java, no platform
            Set.of("io.idemkey.store.memory", "io.idemkey.store.redis", "io.idemkey.store.jdbc"),
            Set.of("io.idemkey.resource"),                          // the JAX-RS resource-method model
            Set.of("io.idemkey.config"),                            // settings and policies from MicroProfile Config
            Set.of("io.idemkey.client"),                            // safe retries for clients
            Set.of("io.idemkey.request"),                           // a guarded request, shared by the filters and the interceptor
            Set.of("io.idemkey.cdi"),                               // extension, interceptors, the runtime bean
            Set.of("io.idemkey.jaxrs"),                             // filters and the feature
            Set.of("io.idemkey.health", "io.idemkey.metrics", "io.idemkey.openapi", "io.idemkey.telemetry",
                    "io.idemkey.admin", "io.idemkey.admin.cli"));

    private static final Pattern EDGE = Pattern.compile("^\\s+(io\\.idemkey\\S*)\\.([^.\\s]+)\\s+->\\s+(io\\.idemkey\\S*)\\.([^.\\s]+)\\s");

    @Test
    void everyDependencyBetweenPackagesPointsDown() throws Exception {
        Map<String, Set<String>> edges = dependencies(classes());
        Map<String, Integer> layerOf = new HashMap<>();
        for (int i = 0; i < LAYERS.size(); i++) {
            for (String p : LAYERS.get(i)) {
                layerOf.put(p, i);
            }
        }
        List<String> violations = new ArrayList<>();
        Set<String> unplaced = new TreeSet<>();
        edges.forEach((edge, examples) -> {
            String[] ends = edge.split(" -> ");
            Integer from = layerOf.get(ends[0]);
            Integer to = layerOf.get(ends[1]);
            if (from == null || to == null) {
                unplaced.add(from == null ? ends[0] : ends[1]);
            } else if (to >= from) {
                violations.add(edge + (to > from ? " points up" : " crosses its layer") + ": " + examples);
            }
        });
        assertEquals(Set.of(), unplaced, "packages in no layer of PackageLayersTest.LAYERS");
        assertEquals(List.of(), violations);
    }

    @Test
    void noCycleBetweenPackages() throws Exception {
        Map<String, Set<String>> graph = new TreeMap<>();
        dependencies(classes()).keySet().forEach(edge -> {
            String[] ends = edge.split(" -> ");
            graph.computeIfAbsent(ends[0], p -> new TreeSet<>()).add(ends[1]);
        });
        List<String> cycles = new ArrayList<>();
        for (String start : graph.keySet()) {
            List<String> path = cycleThrough(start, start, graph, new ArrayList<>(List.of(start)), new TreeSet<>());
            if (path != null) {
                cycles.add(String.join(" -> ", path));
            }
        }
        assertEquals(List.of(), cycles);
    }

    @Test
    void theScanSeesTheLibrarysDependencies() throws Exception {
        // a scan that found nothing would pass the two tests above
        Map<String, Set<String>> edges = dependencies(classes());
        assertTrue(edges.containsKey("io.idemkey.jaxrs -> io.idemkey.request"), edges.keySet().toString());
        assertTrue(edges.containsKey("io.idemkey.core -> io.idemkey.spi"), edges.keySet().toString());
    }

    private static List<String> cycleThrough(String start, String at, Map<String, Set<String>> graph,
                                             List<String> path, Set<String> seen) {
        for (String next : graph.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(start);
                return cycle;
            }
            if (seen.add(next)) {
                path.add(next);
                List<String> found = cycleThrough(start, next, graph, path, seen);
                if (found != null) {
                    return found;
                }
                path.remove(path.size() - 1);
            }
        }
        return null;
    }

    /** The library's compiled classes (target/classes), where the class of the API was loaded from. */
    private static Path classes() throws URISyntaxException {
        return Path.of(Idempotent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** "from.package -> to.package" to a few of the classes behind it, for the failure's message. */
    static Map<String, Set<String>> dependencies(Path classes) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("jdeps is missing: run the tests on a JDK"));
        StringWriter out = new StringWriter();
        int exit = jdeps.run(new PrintWriter(out), new PrintWriter(out), "-verbose:class", "-filter:none", classes.toString());
        assertEquals(0, exit, out.toString());
        Map<String, Set<String>> edges = new LinkedHashMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (m.find() && !m.group(1).equals(m.group(3))) {
                Set<String> examples = edges.computeIfAbsent(m.group(1) + " -> " + m.group(3), e -> new TreeSet<>());
                if (examples.size() < 4) {
                    examples.add(m.group(2) + " -> " + m.group(4));
                }
            }
        }
        return edges;
    }
}
