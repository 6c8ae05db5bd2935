package io.idemkey.monitoring;

import io.idemkey.metrics.PrometheusNames;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard operators import ({@code docs/monitoring/idemkey-dashboard.json}): it shows
 * what the people on call need, its queries read only names the servers export and are PromQL
 * promtool accepts, and every variable they use is defined.
 */
class DashboardTest {

    static final Path DASHBOARD = Path.of("docs", "monitoring", "idemkey-dashboard.json");
    /** What issue 29 asks the dashboard to show, each a panel's title. */
    private static final List<String> PANELS = List.of("Decisions per endpoint", "Replay ratio", "Conflicts and mismatches",
            "Store latency", "Errors", "Fail-open runs", "In flight", "Cleanup");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?(\\w+)");

    @TempDir
    Path directory;

    private JsonObject dashboard;
    private List<JsonObject> panels;

    @BeforeEach
    void read() throws IOException {
        try (JsonReader reader = Json.createReader(Files.newBufferedReader(DASHBOARD))) {
            dashboard = reader.readObject();
        }
        panels = dashboard.getJsonArray("panels").getValuesAs(JsonObject.class);
    }

    @Test
    void showsWhatThePeopleOnCallNeed() {
        Set<String> titles = panels.stream().map(p -> p.getString("title")).collect(Collectors.toSet());
        for (String title : PANELS) {
            assertTrue(titles.contains(title), "no panel \"" + title + "\" in " + titles);
        }
        Set<Integer> ids = new HashSet<>();
        for (JsonObject panel : panels) {
            assertTrue(ids.add(panel.getInt("id")), "panel id " + panel.getInt("id") + " twice");
            JsonObject at = panel.getJsonObject("gridPos");
            assertTrue(at.getInt("x") + at.getInt("w") <= 24, panel.getString("title") + " is wider than the grid");
            assertFalse(panel.getJsonArray("targets").isEmpty(), panel.getString("title") + " has no query");
        }
    }

    @Test
    void everyQueryReadsOnlyNamesTheServersExport() {
        for (String expr : panelQueries()) {
            Set<String> used = AlertRulesTest.matches(expr, AlertRulesTest.SERIES);
            assertFalse(used.isEmpty(), "a query that reads none of Idemkey's series: " + expr);
            Set<String> unknown = new TreeSet<>(used);
            unknown.removeAll(PrometheusNames.exported());
            assertEquals(Set.of(), unknown, "names no server exports in " + expr);
        }
        String variableQuery = variable("endpoint").getString("definition");
        assertTrue(PrometheusNames.exported().containsAll(AlertRulesTest.matches(variableQuery, AlertRulesTest.SERIES)),
                variableQuery);
    }

    @Test
    void everyVariableTheQueriesUseIsDefined() {
        Set<String> defined = dashboard.getJsonObject("templating").getJsonArray("list").getValuesAs(JsonObject.class)
                .stream().map(v -> v.getString("name")).collect(Collectors.toSet());
        Set<String> used = new TreeSet<>();
        collectStrings(dashboard.getJsonArray("panels"), s -> used.addAll(AlertRulesTest.matches(s, VARIABLE)));
        used.removeIf(name -> name.startsWith("__"));     // Grafana's own: $__rate_interval
        assertFalse(used.isEmpty());
        assertTrue(defined.containsAll(used), "used " + used + ", defined " + defined);
    }

    @Test
    void promtoolAcceptsEveryQuery() throws Exception {
        List<String> queries = new ArrayList<>(panelQueries());
        queries.add(dashboard.getJsonObject("annotations").getJsonArray("list").getJsonObject(0).getString("expr"));
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        for (int i = 0; i < queries.size(); i++) {
            // as Grafana sends them: the variables replaced by their values
            String expr = queries.get(i).replace("$__rate_interval", "5m").replace("$endpoint", ".*");
            rules.append("      - record: dashboard_query_").append(i).append("\n        expr: '")
                    .append(expr.replace("'", "''")).append("'\n");
        }
        Files.writeString(directory.resolve("queries.yaml"), rules);
        Promtool.Result result = Promtool.run(directory, "check", "rules", "queries.yaml");
        assertEquals(0, result.exitCode(), result.output() + "\n" + rules);
    }

    private List<String> panelQueries() {
        List<String> queries = new ArrayList<>();
        for (JsonObject panel : panels) {
            for (JsonObject target : panel.getJsonArray("targets").getValuesAs(JsonObject.class)) {
                queries.add(target.getString("expr"));
            }
        }
        assertFalse(queries.isEmpty());
        return queries;
    }

    private JsonObject variable(String name) {
        return dashboard.getJsonObject("templating").getJsonArray("list").getValuesAs(JsonObject.class).stream()
                .filter(v -> name.equals(v.getString("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no variable " + name));
    }

    private static void collectStrings(JsonValue value, java.util.function.Consumer<String> each) {
        switch (value.getValueType()) {
            case STRING -> each.accept(((JsonString) value).getString());
            case OBJECT -> value.asJsonObject().values().forEach(v -> collectStrings(v, each));
            case ARRAY -> value.asJsonArray().forEach(v -> collectStrings(v, each));
            default -> { }
        }
    }
}
