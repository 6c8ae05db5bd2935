package io.idemkey.monitoring;

import io.idemkey.metrics.PrometheusNames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The alert rules operators load ({@code docs/monitoring/idemkey-alerts.yaml}) are valid Prometheus
 * rules, each fires on the series it is about and stays silent on the others (promtool's rule tests,
 * {@code idemkey-alerts-test.yaml} here), and they read only names the servers export.
 */
class AlertRulesTest {

    static final Path RULES = Path.of("docs", "monitoring", "idemkey-alerts.yaml");
    private static final String RULE_TESTS = "idemkey-alerts-test.yaml";
    /** A series name of Idemkey's, not part of a recording rule's name ({@code endpoint:idempotency_…:rate15m}). */
    static final Pattern SERIES = Pattern.compile("(?<![\\w:.])idempotency_\\w+");

    @TempDir
    Path directory;

    @Test
    void promtoolFindsTheRulesValid() throws Exception {
        Promtool.Result result = Promtool.run(Path.of("").toAbsolutePath(), "check", "rules", RULES.toString());
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("SUCCESS"), result.output());
    }

    @Test
    void eachAlertFiresOnItsSeriesAndStaysSilentOnTheOthers() throws Exception {
        Files.copy(RULES, directory.resolve(RULES.getFileName()));
        try (InputStream tests = AlertRulesTest.class.getResourceAsStream(RULE_TESTS)) {
            Files.copy(tests, directory.resolve(RULE_TESTS));
        }
        Promtool.Result result = Promtool.run(directory, "test", "rules", RULE_TESTS);
        assertEquals(0, result.exitCode(), result.output());
        System.out.print(result.output());
    }

    @Test
    void everyAlertHasRuleTests() throws IOException {
        Set<String> alerts = matches(Files.readString(RULES), Pattern.compile("(?m)^\\s*- alert: (\\w+)"));
        String tests;
        try (InputStream in = AlertRulesTest.class.getResourceAsStream(RULE_TESTS)) {
            tests = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        Set<String> tested = matches(tests, Pattern.compile("(?m)^\\s*alertname: (\\w+)"));
        assertFalse(alerts.isEmpty());
        assertEquals(alerts, tested, "every alert of " + RULES + " needs its series in " + RULE_TESTS);
    }

    @Test
    void rulesReadOnlyNamesTheServersExport() throws IOException {
        Set<String> used = matches(Files.readString(RULES), SERIES);
        assertFalse(used.isEmpty());
        Set<String> unknown = new TreeSet<>(used);
        unknown.removeAll(PrometheusNames.exported());
        assertEquals(Set.of(), unknown, "names no server exports (known: " + PrometheusNames.exported() + ")");
    }

    static Set<String> matches(String text, Pattern pattern) {
        Set<String> found = new TreeSet<>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(matcher.groupCount() > 0 ? matcher.group(1) : matcher.group());
        }
        return found;
    }
}
