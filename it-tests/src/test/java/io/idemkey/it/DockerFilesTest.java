package io.idemkey.it;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Docker cannot run on the build machines, so this test keeps {@code docker/} honest instead: every
 * file, artifact name, version and port the Dockerfiles, the compose file and nginx refer to must
 * match the build and the configuration the tests use.
 */
class DockerFilesTest {

    private static final Path ROOT = Path.of(System.getProperty("repository.root", ".."));
    private static final String WAR = System.getProperty("sample.war", "idemkey-sample.war");
    private static final String PAYARA_VERSION = System.getProperty("payara.version", "6.2025.10");
    private static final String LIBERTY_VERSION = System.getProperty("liberty.version", "26.0.0.3");

    private final String payara = read("docker/payara/Dockerfile");
    private final String liberty = read("docker/liberty/Dockerfile");
    private final String compose = read("docker/compose.yaml");
    private final String nginx = read("docker/nginx.conf");

    @Test
    void dockerfilesCopyFilesThatExistOrThatTheBuildMakes() {
        for (String dockerfile : List.of(payara, liberty)) {
            for (String source : copySources(dockerfile)) {
                if (source.startsWith("it-tests/target/")) {
                    assertEquals("it-tests/target/" + WAR, source, "the WAR the build makes");
                } else {
                    assertTrue(Files.exists(ROOT.resolve(source)), source + " exists");
                }
            }
        }
        assertTrue(liberty.contains("COPY --chown=1001:0 liberty/server.xml /config/server.xml"),
                "the Liberty image uses the server.xml the tests use");
    }

    @Test
    void imagesAreTheServerVersionsTheTestsRun() {
        assertTrue(payara.contains("FROM payara/micro:" + PAYARA_VERSION + "-jdk17"), "Payara Micro " + PAYARA_VERSION);
        assertTrue(liberty.contains("FROM icr.io/appcafe/open-liberty:" + LIBERTY_VERSION + "-full-"),
                "Open Liberty " + LIBERTY_VERSION);
    }

    @Test
    void payaraDeploysTheCopiedWarOnThePortNginxUses() {
        String deployed = "/opt/payara/deployments/" + WAR;
        assertTrue(payara.contains("COPY it-tests/target/" + WAR + " " + deployed));
        assertTrue(payara.contains("\"--deploy\", \"" + deployed + "\""));
        assertTrue(payara.contains("\"--port\", \"8080\""));
        assertTrue(payara.contains("EXPOSE 8080"));
        assertTrue(nginx.contains("server payara:8080"));
    }

    @Test
    void libertyListensOnThePortOfItsServerXmlThatNginxUses() {
        String serverXml = read("liberty/server.xml");
        Matcher port = Pattern.compile("<variable name=\"http.port\" defaultValue=\"(\\d+)\"/>").matcher(serverXml);
        assertTrue(port.find(), "liberty/server.xml defines http.port");
        assertTrue(liberty.contains("EXPOSE " + port.group(1)));
        assertTrue(nginx.contains("server liberty:" + port.group(1)));
        assertTrue(liberty.contains("/config/dropins/" + WAR), "deployed under the same context root as in the tests");
    }

    @Test
    void composeBuildsBothImagesAndWiresRedisAndNginx() {
        for (String dockerfile : List.of("docker/payara/Dockerfile", "docker/liberty/Dockerfile")) {
            assertTrue(compose.contains("dockerfile: " + dockerfile), dockerfile);
        }
        assertTrue(compose.contains("context: .."), "the build context is the repository root the COPY lines assume");
        assertTrue(compose.contains("./nginx.conf:/etc/nginx/nginx.conf:ro"));
        assertTrue(Files.exists(ROOT.resolve("docker/nginx.conf")));
        for (String service : List.of("redis:", "payara:", "liberty:", "nginx:")) {
            assertTrue(compose.contains("\n  " + service), "service " + service);
        }
        assertEquals(2, count(compose, "IDEMPOTENCY_REDIS_URL: redis://redis:6379"), "both servers use the redis service");
        assertTrue(compose.contains("\"--appendonly\", \"yes\""), "Redis keeps its data (docs/servers.md: Durability)");
    }

    @Test
    void nginxListensOnThePortComposePublishesAndTheDocsName() {
        Matcher listen = Pattern.compile("(?m)^\\s*listen (\\d+);").matcher(nginx);
        assertTrue(listen.find(), "nginx.conf listens on a port");
        Matcher published = Pattern.compile("\"(\\d+):" + listen.group(1) + "\"").matcher(compose);
        assertTrue(published.find(), "compose publishes nginx's port " + listen.group(1));
        assertTrue(read("docs/servers.md").contains("docker compose -f docker/compose.yaml up --build      # http://localhost:"
                + published.group(1) + "/idemkey-sample/api"), "docs/servers.md names the published port");
        assertTrue(compose.contains("http://localhost:" + published.group(1) + "/idemkey-sample/api"),
                "the curl line in compose.yaml uses the published port");
    }

    private static List<String> copySources(String dockerfile) {
        List<String> sources = new ArrayList<>();
        Matcher copy = Pattern.compile("(?m)^COPY (?:--\\S+ )*(\\S+) \\S+$").matcher(dockerfile);
        while (copy.find()) {
            sources.add(copy.group(1));
        }
        assertTrue(!sources.isEmpty());
        return sources;
    }

    private static int count(String text, String part) {
        return text.split(Pattern.quote(part), -1).length - 1;
    }

    private static String read(String path) {
        try {
            return Files.readString(ROOT.resolve(path));
        } catch (IOException e) {
            throw new AssertionError(path + " is missing", e);
        }
    }
}
