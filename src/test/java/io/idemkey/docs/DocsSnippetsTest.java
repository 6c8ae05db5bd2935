package io.idemkey.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The docs' Java cannot rot: every {@code ```java} block of {@code README.md} and {@code docs/*.md}
 * must be, character for character, a tagged region of a source file of this package, which the
 * build compiles before this test runs. A block without its {@code <!-- snippet: path#tag -->}
 * comment, a block that drifted from its region, and a region no document shows all fail. The
 * same pass checks the documents' relative links and their anchors, and that README's test command
 * is the one {@code .ci/run} runs.
 */
class DocsSnippetsTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Path SNIPPETS = Path.of("src/test/java/io/idemkey/docs");
    private static final Pattern FENCE = Pattern.compile("^(\\s*)```(\\S*)\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!-- snippet: (\\S+)#(\\S+) -->\\s*$");
    private static final Pattern TAG = Pattern.compile("^\\s*// (tag|end)::([\\w-]+)\\[\\]\\s*$");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern ANCHOR = Pattern.compile("<a id=\"([^\"]+)\"></a>");
    /**
     * Written on another branch of issue 26 (points 2 and 3): a link to one of them is checked once
     * the file is there.
     */
    private static final Set<String> COMING = Set.of("docs/dependencies.md", "docs/CHANGELOG.md", "docs/contributing.md");

    /** A fenced block of a document: where it is, its language, its text, the region it names. */
    record Block(Path document, int line, String language, String text, String source, String tag) {
        String where() {
            return ROOT.relativize(document) + ":" + line;
        }
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockIsACompiledRegion() throws IOException {
        List<Block> java = javaBlocks();
        assertTrue(java.stream().anyMatch(b -> b.document().endsWith("README.md")), "README shows Java");
        assertTrue(java.size() >= 9, "the docs' Java blocks were found: " + java.size());
        return java.stream().map(block -> DynamicTest.dynamicTest(block.where(), () -> {
            if (block.source() == null) {
                fail(block.where() + ": a ```java block the build does not compile; keep it in " + SNIPPETS
                        + " as a tagged region and name it in the line before the block: "
                        + "<!-- snippet: " + SNIPPETS + "/File.java#tag -->");
            }
            assertTrue(block.source().startsWith(SNIPPETS + "/") && block.source().endsWith(".java"),
                    block.where() + ": snippets live in " + SNIPPETS + ", compiled as test sources: " + block.source());
            Map<String, String> regions = regions(ROOT.resolve(block.source()));
            String region = regions.get(block.tag());
            if (region == null) {
                fail(block.where() + ": " + block.source() + " has no region " + block.tag() + "; it has " + regions.keySet());
            }
            assertEquals(region, block.text(), block.where() + " differs from " + block.source() + "#" + block.tag()
                    + " (the compiled text is the expected one)");
        }));
    }

    @Test
    void everyRegionIsShownInADocument() throws IOException {
        Set<String> shown = new HashSet<>();
        for (Block block : javaBlocks()) {
            shown.add(block.source() + "#" + block.tag());
        }
        Set<String> regions = new TreeSet<>();
        try (Stream<Path> files = Files.list(ROOT.resolve(SNIPPETS))) {
            for (Path file : files.filter(f -> f.toString().endsWith("Snippets.java")).toList()) {
                for (String tag : regions(file).keySet()) {
                    regions.add(SNIPPETS + "/" + file.getFileName() + "#" + tag);
                }
            }
        }
        assertFalse(regions.isEmpty());
        regions.removeAll(shown);
        assertEquals(Set.of(), regions, "regions no document shows");
    }

    @Test
    void relativeLinksAndTheirAnchorsExist() throws IOException {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path document : documents()) {
            List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
            boolean inFence = false;
            for (int i = 0; i < lines.size(); i++) {
                if (FENCE.matcher(lines.get(i)).matches()) {
                    inFence = !inFence;
                }
                if (inFence) {
                    continue;
                }
                Matcher link = LINK.matcher(lines.get(i));
                while (link.find()) {
                    String target = link.group(1);
                    if (target.matches("^[a-z]+:.*")) {
                        continue;                                        // https:, mailto:
                    }
                    int hash = target.indexOf('#');
                    String file = hash < 0 ? target : target.substring(0, hash);
                    Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
                    String name = ROOT.relativize(resolved).toString();
                    checked++;
                    if (!Files.exists(resolved)) {
                        if (!COMING.contains(name)) {
                            broken.add(ROOT.relativize(document) + ":" + (i + 1) + ": " + target + " (no such file)");
                        }
                        continue;
                    }
                    if (hash >= 0 && !anchors(resolved).contains(target.substring(hash + 1))) {
                        broken.add(ROOT.relativize(document) + ":" + (i + 1) + ": " + target + " (no such anchor)");
                    }
                }
            }
        }
        assertTrue(checked > 50, "links were found: " + checked);
        assertEquals(List.of(), broken);
    }

    @Test
    void readmeOpensWithTheTwoCommandsAndCiRunsTheSecond() throws IOException {
        List<String> readme = Files.readAllLines(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
        assertTrue(readme.size() <= 120, "README is a landing page: " + readme.size() + " lines");
        assertEquals("```bash", readme.get(2));
        assertTrue(readme.get(3).contains("# start the sample service (Payara Micro, port 8080)"), readme.get(3));
        assertTrue(readme.get(4).contains("# run every test: about 45 min"), "the test command says how long it takes: " + readme.get(4));
        String testCommand = readme.get(4).replaceAll("\\s+#.*$", "");
        List<String> ci = Files.readAllLines(ROOT.resolve(".ci/run"), StandardCharsets.UTF_8);
        assertEquals(testCommand, ci.get(ci.size() - 1).strip(), ".ci/run runs exactly README's test command");
    }

    // ---- reading documents and sources

    private static List<Path> documents() throws IOException {
        List<Path> documents = new ArrayList<>();
        documents.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        return documents;
    }

    private static List<Block> javaBlocks() throws IOException {
        List<Block> java = new ArrayList<>();
        for (Path document : documents()) {
            for (Block block : blocks(document)) {
                if (block.language().equals("java")) {
                    java.add(block);
                }
            }
        }
        return java;
    }

    /** The fenced blocks of a document, each with the snippet comment right before it, if any. */
    static List<Block> blocks(Path document) throws IOException {
        List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            int start = i;
            StringBuilder text = new StringBuilder();
            for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                String line = lines.get(i);
                text.append(line.startsWith(indent) ? line.substring(indent.length()) : line.strip()).append('\n');
            }
            String source = null;
            String tag = null;
            int before = start - 1;
            while (before >= 0 && lines.get(before).isBlank()) {
                before--;
            }
            Matcher marker = before >= 0 ? MARKER.matcher(lines.get(before)) : null;
            if (marker != null && marker.matches()) {
                source = marker.group(1);
                tag = marker.group(2);
            }
            blocks.add(new Block(document, start + 1, open.group(2), text.toString(), source, tag));
        }
        return blocks;
    }

    /**
     * The tagged regions of a source file, each part without the indentation its lines share; a
     * tag that occurs several times is the concatenation of its parts.
     */
    static Map<String, String> regions(Path source) throws IOException {
        List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
        Map<String, String> regions = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher tag = TAG.matcher(lines.get(i));
            if (!tag.matches() || !tag.group(1).equals("tag")) {
                continue;
            }
            String name = tag.group(2);
            List<String> part = new ArrayList<>();
            for (i++; ; i++) {
                assertTrue(i < lines.size(), source + ": region " + name + " is not closed");
                Matcher end = TAG.matcher(lines.get(i));
                if (end.matches() && end.group(1).equals("end") && end.group(2).equals(name)) {
                    break;
                }
                if (!end.matches()) {
                    part.add(lines.get(i));
                }
            }
            int indent = part.stream().filter(l -> !l.isBlank())
                    .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
            StringBuilder text = new StringBuilder();
            for (String line : part) {
                text.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
            }
            regions.merge(name, text.toString(), String::concat);
        }
        return regions;
    }

    /** The anchors of a document: its headings as GitHub names them, and explicit {@code <a id>}s. */
    static Set<String> anchors(Path document) throws IOException {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new LinkedHashMap<>();
        boolean inFence = false;
        for (String line : Files.readAllLines(document, StandardCharsets.UTF_8)) {
            if (FENCE.matcher(line).matches()) {
                inFence = !inFence;
            }
            if (inFence) {
                continue;
            }
            if (line.startsWith("#")) {
                String slug = line.replaceFirst("^#+\\s*", "").strip().toLowerCase()
                        .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
            Matcher anchor = ANCHOR.matcher(line);
            while (anchor.find()) {
                anchors.add(anchor.group(1));
            }
        }
        return anchors;
    }
}
