package io.idemkey.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} names exactly the {@code idempotency.*} properties the code reads.
 *
 * <p>The code's side: every string literal of {@code src/main/java} that starts with
 * {@code idempotency.}, in the source files that read configuration (they call a
 * {@code ConfigLookup} or MicroProfile Config). Metric and span names ({@code idempotency.acquired},
 * {@code idempotency.decision}) live in files that read none, and are not properties. A literal that
 * only begins a name ({@code "idempotency." + x}) would hide the properties it builds: it fails the
 * test, so that a property name is always written whole.
 *
 * <p>The reference's side: the first cell of every table row of the page.
 */
class ConfigurationReferenceTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Path SOURCES = ROOT.resolve("src/main/java");
    private static final Path REFERENCE = ROOT.resolve("docs/configuration.md");

    private static final Pattern LITERAL = Pattern.compile("\"(idempotency\\.[^\"\\\\]*)\"");
    private static final Pattern PROPERTY = Pattern.compile("idempotency(\\.[a-z0-9]+(-[a-z0-9]+)*)+");
    /** What reads configuration: a {@code ConfigLookup}'s {@code get}, or MicroProfile Config itself. */
    private static final Pattern READS_CONFIG = Pattern.compile(
            "\\bConfigLookup\\b|getOptionalValue\\(|getValue\\(\\s*[\"A-Z]|ConfigProvider\\.getConfig\\(");
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`(idempotency\\.[^`]+)`\\s*\\|");

    @Test
    void theReferenceNamesExactlyThePropertiesTheCodeReads() throws IOException {
        Set<String> read = propertiesTheCodeReads();
        Set<String> documented = propertiesTheReferenceNames();
        assertTrue(read.size() >= 50, "the code's properties were found: " + read);

        Set<String> undocumented = new TreeSet<>(read);
        undocumented.removeAll(documented);
        Set<String> notRead = new TreeSet<>(documented);
        notRead.removeAll(read);
        assertEquals("", (undocumented.isEmpty() ? "" : "properties the code reads that " + ROOT.relativize(REFERENCE)
                + " lacks (add a row for each: name, default, allowed values, what it does, which page explains it): "
                + undocumented + "\n")
                + (notRead.isEmpty() ? "" : "properties " + ROOT.relativize(REFERENCE)
                + " names that the code does not read (remove their rows, or fix the names): " + notRead));
    }

    /** The property names of the source files that read configuration. */
    static Set<String> propertiesTheCodeReads() throws IOException {
        Set<String> properties = new TreeSet<>();
        List<String> partial = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            files = walk.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        for (Path file : files) {
            String source = Files.readString(file, StandardCharsets.UTF_8);
            if (!READS_CONFIG.matcher(source).find()) {
                continue;
            }
            Matcher literal = LITERAL.matcher(source);
            while (literal.find()) {
                String name = literal.group(1);
                if (PROPERTY.matcher(name).matches()) {
                    properties.add(name);
                } else {
                    partial.add(ROOT.relativize(file) + ": \"" + name + "\"");
                }
            }
        }
        assertEquals(List.of(), partial, "literals that are no whole property name, in files that read configuration:"
                + " write each property name whole, so that this test sees it");
        return properties;
    }

    /** The names in the first cell of the reference's table rows; each row names one property. */
    static Set<String> propertiesTheReferenceNames() throws IOException {
        Set<String> names = new TreeSet<>();
        List<String> twice = new ArrayList<>();
        for (String line : Files.readAllLines(REFERENCE, StandardCharsets.UTF_8)) {
            Matcher row = ROW.matcher(line);
            if (row.find() && !names.add(row.group(1))) {
                twice.add(row.group(1));
            }
        }
        assertEquals(List.of(), twice, "properties with two rows in " + ROOT.relativize(REFERENCE));
        return names;
    }
}
