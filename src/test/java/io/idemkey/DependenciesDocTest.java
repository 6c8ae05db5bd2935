package io.idemkey;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/dependencies.md stays true: its tree is what Maven resolves for the jar in compile and runtime
 * scope (what an application's WAR gets; the build writes it to target/dependency-tree.txt), and it
 * lists every other dependency of the pom but the tests' with its scope, each provided one optional
 * or supplied by the servers.
 */
class DependenciesDocTest {

    private static final Path DOC = Path.of("docs/dependencies.md");

    @Test
    void theTreeInTheDocsIsTheOneMavenResolves() throws Exception {
        Path resolved = Path.of("target/dependency-tree.txt");
        assertTrue(Files.exists(resolved), "run through Maven: the build writes " + resolved + " (dependency:tree)");
        assertEquals(withoutRoot(Files.readAllLines(resolved)), withoutRoot(treeInDoc()),
                "docs/dependencies.md's tree differs from mvn dependency:tree -Dscope=runtime: update the docs");
    }

    @Test
    void everyProvidedDependencyOfThePomIsListedWithItsScope() throws Exception {
        String doc = Files.readString(DOC);
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile())
                .getDocumentElement();
        Element dependencies = (Element) project.getElementsByTagName("dependencies").item(1); // after dependencyManagement's
        NodeList list = dependencies.getElementsByTagName("dependency");
        List<String> missing = new ArrayList<>();
        int provided = 0;
        for (int i = 0; i < list.getLength(); i++) {
            Element dependency = (Element) list.item(i);
            String scope = text(dependency, "scope", "compile");
            if (scope.equals("test")) {
                continue;
            }
            String row = "| `" + text(dependency, "groupId", "") + ":" + text(dependency, "artifactId", "") + "` | " + scope
                    + (text(dependency, "optional", "false").equals("true") ? ", optional" : "") + " |";
            if (!doc.contains(row)) {
                missing.add(row);
            }
            provided += scope.equals("provided") ? 1 : 0;
        }
        assertEquals(List.of(), missing, "rows docs/dependencies.md should have");
        assertTrue(provided >= 7, provided + " provided dependencies");
    }

    private static String text(Element parent, String name, String otherwise) {
        NodeList nodes = parent.getElementsByTagName(name);
        return nodes.getLength() == 0 ? otherwise : nodes.item(0).getTextContent().trim();
    }

    /** The lines of the first fenced block after the heading "## The tree". */
    private static List<String> treeInDoc() throws Exception {
        Matcher block = Pattern.compile("## The tree.*?```text\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(DOC));
        assertTrue(block.find(), "docs/dependencies.md has no ```text block under \"## The tree\"");
        return List.of(block.group(1).split("\n"));
    }

    private static List<String> withoutRoot(List<String> tree) {
        return tree.stream().skip(1).map(String::stripTrailing).filter(l -> !l.isEmpty()).toList();
    }
}
